// `xpart reshape-request unit-start` and `reboot` on a host whose slurmds are slurmd@ units, with
// an scontrol that answers from a recorded cluster and a systemctl that says which units are
// enabled and loaded; both record what they were asked. The boot after a power cut in the
// middle of the RebootProgram's switch of units (both enabled): only the unit of the sibling
// the reshape was for starts; a unit systemd does not have stops a reshape before it begins.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "tests/cli/run_command.hpp"

namespace xpart::test {
namespace {

std::string short_host() {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    std::string s = name;
    return s.substr(0, s.find('.'));
}

struct UnitHost {
    TempDir dir;
    std::string asked() const { return dir.path() + "/asked"; }

    // small gave the host up for big and the power went (small REBOOT_ISSUED); `enabled` units
    // say so to is-enabled, `loaded` ones to show.
    UnitHost(const std::string& enabled, const std::string& loaded) {
        const std::string cluster =
            "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=" + short_host() +
            " State=IDLE+DRAIN+REBOOT_ISSUED Reason=xpart-reshape:big [root@2026-12-07T02:00:00]\n"
            "NodeName=big AvailableFeatures=xpart_host_h NodeHostName=big State=IDLE+CLOUD+POWERING_UP\n";
        write_text(dir.path() + "/cluster", cluster);
        tool("scontrol", "[ \"$1 $2\" = 'show node' ] && exec cat " + dir.path() + "/cluster\n");
        tool("systemctl", "case $1 in\n"
                          "is-enabled) case \" " + enabled + " \" in *\" ${3%.service} \"*) exit 0 ;; esac; exit 1 ;;\n"
                          "show) case \" " + loaded + " \" in *\" ${4%.service} \"*) echo loaded ;; *) echo not-found ;; esac ;;\n"
                          "disable|stop) [ -z \"$STOP_SIGNALS\" ] || kill -TERM $PPID ;;\n"
                          "esac\n");
        tool("squeue", "");
    }
    void tool(const std::string& name, const std::string& body) const {
        const std::string path = dir.path() + "/" + name;
        write_text(path, "#!/bin/sh\necho \"" + name + " $*\" >>" + asked() + "\n" + body + "exit 0\n");
        chmod(path.c_str(), 0755);
    }
    // `env`: more VAR=VALUE for xpart's environment.
    CommandResult xpart(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) const {
        std::vector<std::string> argv{"/usr/bin/timeout", "20", "/usr/bin/env", "PATH=" + dir.path() + ":/usr/bin:/bin",
                                      "XPART_SLURMD_UNIT=slurmd@%n.service"};
        argv.insert(argv.end(), env.begin(), env.end());
        argv.push_back(build_dir() + "/xpart");
        argv.push_back("reshape-request");
        argv.insert(argv.end(), args.begin(), args.end());
        return run_command(argv);
    }
    std::vector<std::string> asked_lines() const { return lines_of(read_text(asked())); }
};

bool has(const std::vector<std::string>& lines, const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(UnitStart, TheSiblingLeftStandsDownWithoutAReshape) {
    UnitHost host("slurmd@small slurmd@big", "slurmd@small slurmd@big");
    auto r = host.xpart({"unit-start", "small"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("slurmd@small: xpart-reshape: host is big now: small powered down\n"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("slurmd@small: this unit disabled and stopped\n"), std::string::npos) << r.err;
    const auto asked = host.asked_lines();
    EXPECT_TRUE(has(asked, "scontrol update nodename=small state=POWER_DOWN_FORCE reason=xpart-reshape: host is big now"))
        << read_text(host.asked());
    EXPECT_TRUE(has(asked, "systemctl disable --now --no-block --quiet slurmd@small.service")) << read_text(host.asked());
    EXPECT_EQ(r.err.find("geometry"), std::string::npos) << "a reshape ran: " << r.err;
}

// Under systemd, the stop the start asked for ends it with SIGTERM (systemctl sends it here): a
// clean end, so that the unit ends stopped, not failed. Without the stop's signal, exit 1.
TEST(UnitStart, UnderSystemdTheStopsSigtermEndsAStandDownCleanly) {
    UnitHost host("slurmd@small slurmd@big", "slurmd@small slurmd@big");
    auto r = host.xpart({"unit-start", "small"}, {"INVOCATION_ID=0123", "STOP_SIGNALS=1"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(has(host.asked_lines(), "systemctl disable --now --no-block --quiet slurmd@small.service"))
        << read_text(host.asked());
}

TEST(UnitStart, TheReshapesTargetDisablesTheUnitLeftPowersItsNodeDownThenMakesItsGeometry) {
    UnitHost host("slurmd@small slurmd@big", "slurmd@small slurmd@big");
    auto r = host.xpart({"unit-start", "big"});
    EXPECT_NE(r.err.find("slurmd@big: slurmd@small.service left enabled by a reshape to big cut short: disabled"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(has(host.asked_lines(), "systemctl disable --quiet slurmd@small.service")) << read_text(host.asked());
    EXPECT_TRUE(has(host.asked_lines(),
                    "scontrol update nodename=small state=POWER_DOWN_FORCE reason=xpart-reshape: host is big now"))
        << read_text(host.asked());
    // No GPU here: the geometry is not made, and no slurmd starts.
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("slurmd@big: geometry not made, slurmd not started"), std::string::npos) << r.err;
}

TEST(UnitStart, UnitsEnabledTogetherForNoReshapeStartNeither) {
    UnitHost host("slurmd@small slurmd@big", "slurmd@small slurmd@big");
    write_text(host.dir.path() + "/cluster",
               "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=IDLE\n"
               "NodeName=big AvailableFeatures=xpart_host_h NodeHostName=big State=IDLE+CLOUD+POWERED_DOWN\n");
    auto r = host.xpart({"unit-start", "small"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const std::string reason = "xpart-reshape: slurmd units of small and big enabled together, no reshape between them "
                               "under way: slurmd not started";
    EXPECT_TRUE(has(host.asked_lines(), "scontrol update nodename=small state=DOWN reason=" + reason))
        << read_text(host.asked());
    EXPECT_TRUE(has(host.asked_lines(), "systemctl stop --no-block slurmd@small.service")) << read_text(host.asked());
}

TEST(UnitStart, AUnitNotEnabledStandsAsideAndTellsSlurmctldNothing) {
    UnitHost host("slurmd@small", "slurmd@small slurmd@big");
    auto r = host.xpart({"unit-start", "big"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("slurmd@big: xpart-reshape: host is small (its unit enabled): this unit not enabled, stopped"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(has(host.asked_lines(), "systemctl stop --no-block slurmd@big.service")) << read_text(host.asked());
    for (const auto& line : host.asked_lines()) EXPECT_NE(line.rfind("scontrol update", 0), 0u) << line;
}

// A setting that names no unit per NodeName stops the start before systemctl is asked anything,
// a NodeName slurmctld does not list (no siblings to name) included.
TEST(UnitStart, ASettingWithoutTheNodeNameStartsNothing) {
    UnitHost host("", "");
    for (const std::string node : {"small", "unknown"}) {
        auto r = host.xpart({"unit-start", node}, {"XPART_SLURMD_UNIT=slurmd.service"});
        EXPECT_EQ(r.exit_code, 1) << r.err;
        EXPECT_NE(r.err.find("slurmd@" + node + ": XPART_SLURMD_UNIT=slurmd.service: not one unit name with %n for "),
                  std::string::npos)
            << r.err;
    }
    for (const auto& line : host.asked_lines()) EXPECT_NE(line.rfind("systemctl", 0), 0u) << line;
}

// The RebootProgram: the next sibling's unit is one systemd does not have (a wrong
// XPART_SLURMD_UNIT, the template not installed): refused before anything is reshaped.
TEST(RebootProgram, AUnitSystemdDoesNotHaveRefusesBeforeAnyReshape) {
    UnitHost host("slurmd@small", "slurmd@small");
    const std::string log = host.dir.path() + "/reshape.log";
    auto r = host.xpart({"reboot", "--log", log});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(read_text(log).find(" xpart-reboot: small -> big refused: XPART_SLURMD_UNIT=slurmd@%n.service: systemd "
                                  "has no unit slurmd@big.service (not-found)\n"),
              std::string::npos)
        << read_text(log);
    for (const auto& line : host.asked_lines())
        EXPECT_NE(line.rfind("squeue", 0), 0u) << "the plan asked whether the target is wanted: " << line;
}

}  // namespace
}  // namespace xpart::test
