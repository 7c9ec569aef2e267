// The RebootProgram's decisions against a recorded cluster: withdrawn, reshaped or refused,
// and what its detached part tells slurmctld once the slurmd that ran it has gone.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "libxpart/defaults.hpp"
#include "reshape_request/reboot_program.hpp"
#include "tests/case_name.hpp"
#include "tests/reshape_request/fake_slurm.hpp"

namespace xpart::reshape_request {
namespace {

using namespace std::chrono_literals;

struct PlanCase {
    const char* name;
    std::vector<std::string> waiting;  // jobs CONFIGURING on the target; {"?"}: squeue fails
    ReshapeAttempt reshape;
    bool reshape_runs;
    RebootPlan want;
};

class Plan : public ::testing::TestWithParam<PlanCase> {};

TEST_P(Plan, Decides) {
    const auto& c = GetParam();
    FakeSlurm slurm;
    if (c.waiting == std::vector<std::string>{"?"}) slurm.jobs_unreadable = true;
    else slurm.configuring["big"] = c.waiting;
    std::vector<std::string> reshaped;
    const RebootPlan got = plan_reboot(slurm, {"small", "big"}, [&](const std::string& target) {
        reshaped.push_back(target);
        return c.reshape;
    });
    EXPECT_EQ(reshaped, c.reshape_runs ? std::vector<std::string>{"big"} : std::vector<std::string>{});
    EXPECT_EQ(got.next, c.want.next);
    EXPECT_EQ(got.down, c.want.down);
    EXPECT_EQ(got.reason, c.want.reason);
    EXPECT_EQ(got.refused, c.want.refused);
    EXPECT_EQ(got.line, c.want.line);
    EXPECT_TRUE(slurm.told.empty());  // the plan tells slurmctld nothing
}

const std::string kLong(250, 'x');
const PlanCase kPlans[] = {
    {"no job waits any more", {}, {true, "reshaped"}, false,
     {"small", "big", "xpart-reshape withdrawn: no job waits for big", true,
      "small -> big withdrawn: no job waits for big"}},
    {"a job waits and the reshape is made", {"42"}, {true, "GPU 0: 7x1g.10gb -> 2x3g.40gb reshaped in 1.20 s\nGPU 1: ok\n"},
     true,
     {"big", "small", "xpart-reshape: host is big now", false,
      "small -> big: GPU 0: 7x1g.10gb -> 2x3g.40gb reshaped in 1.20 s GPU 1: ok"}},
    {"the reshape is refused", {"42"}, {false, "xpart reshape: GPU 0: 1 process runs on it\nmore\n"}, true,
     {"small", "big", "xpart-reshape refused: xpart reshape: GPU 0: 1 process runs on it", true,
      "small -> big refused: xpart reshape: GPU 0: 1 process runs on it"}},
    {"a refusal's reason is its first 200 characters", {"42"}, {false, kLong}, true,
     {"small", "big", "xpart-reshape refused: " + kLong.substr(0, 200), true,
      "small -> big refused: " + kLong.substr(0, 200)}},
    {"an unanswered question is no withdrawal", {"?"}, {true, "done"}, true,
     {"big", "small", "xpart-reshape: host is big now", false, "small -> big: done"}},
};
INSTANTIATE_TEST_SUITE_P(Reboots, Plan, ::testing::ValuesIn(kPlans), testing::SentenceCaseName{});

// The detached part: a slurmd that runs until `slurmd_until`, what was started and logged.
struct Finisher {
    FakeSlurm slurm;
    FakeTime time;
    std::chrono::milliseconds slurmd_until{0};
    int signals = 0;
    std::vector<std::string> started, logged, made;
    Status start = ok_status();
    Status geometry = ok_status();

    void run(const RebootPlan& plan) {
        RebootFinish how;
        how.slurmd_running = [&] { return time.t - std::chrono::steady_clock::time_point{} < slurmd_until; };
        how.signal_slurmd = [&] { ++signals; };
        how.make_geometry = [&](const std::string& node) {
            EXPECT_TRUE(started.empty()) << "slurmd started before its geometry was made";
            made.push_back(node);
            return geometry;
        };
        how.start_slurmd = [&](const std::string& node) {
            started.push_back(node);
            return start;
        };
        how.log = [&](const std::string& line) { logged.push_back(line); };
        finish_reboot(slurm, plan, how, time.pacing());
    }
};

const RebootPlan kReshaped{"big", "small", "xpart-reshape: host is big now", false, ""};
const RebootPlan kRefused{"small", "big", "xpart-reshape refused: no", true, ""};

TEST(Finish, StartsTheSiblingOnceSlurmdHasGoneAndPowersTheOldNameDown) {
    Finisher f;
    f.slurmd_until = 350ms;
    f.run(kReshaped);
    EXPECT_EQ(f.made, std::vector<std::string>{"big"});
    EXPECT_EQ(f.started, std::vector<std::string>{"big"});
    EXPECT_EQ(f.slurm.told,
              std::vector<std::string>{"update nodename=small state=POWER_DOWN_FORCE reason=xpart-reshape: host is big now"});
    EXPECT_EQ(f.signals, 0);
    EXPECT_TRUE(f.logged.empty());
    EXPECT_EQ(f.slurm.node_rpcs, 0);  // a reshaped host is not resumed: the sibling registers
}

TEST(Finish, SignalsASlurmdThatMissedItsShutdownEveryTenSeconds) {
    Finisher f;
    f.slurmd_until = 25s;
    f.run(kReshaped);
    EXPECT_EQ(f.signals, 2);
    EXPECT_EQ(f.logged, (std::vector<std::string>{"slurmd still runs 10 s after its reboot: SIGTERM again",
                                                  "slurmd still runs 20 s after its reboot: SIGTERM again"}));
    EXPECT_EQ(f.started, std::vector<std::string>{"big"});
}

TEST(Finish, ARefusedHostIsResumedOnceItAnswers) {
    Finisher f;
    f.slurm.cluster_at = [](int rpc) {
        return "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=" +
               std::string(rpc < 4 ? "DOWN+NOT_RESPONDING" : "DOWN") + "\n";
    };
    f.run(kRefused);
    EXPECT_EQ(f.made, std::vector<std::string>{"small"});  // a reshape killed halfway is undone
    EXPECT_EQ(f.started, std::vector<std::string>{"small"});
    EXPECT_EQ(f.slurm.told, (std::vector<std::string>{
                                "update nodename=big state=POWER_DOWN_FORCE reason=xpart-reshape refused: no",
                                "update nodename=small state=RESUME"}));
    EXPECT_EQ(f.slurm.node_rpcs, 4);  // big's record once, then small's until it answers
    EXPECT_EQ(f.time.slept.size(), 2u);
}

TEST(Finish, ARefusedHostBackInServiceAlreadyIsLeftAsItIs) {
    for (const char* state : {"IDLE", "MIXED", "DOWN", "IDLE+DRAIN"}) {
        Finisher f;
        f.slurm.cluster = "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=" + std::string(state) + "\n";
        f.run(kRefused);
        const bool resumed = f.slurm.told.back() == "update nodename=small state=RESUME";
        EXPECT_EQ(resumed, std::string(state).find("DOWN") != std::string::npos ||
                               std::string(state).find("DRAIN") != std::string::npos)
            << state;
        EXPECT_EQ(f.slurm.node_rpcs, 2) << state;
    }
}

TEST(Finish, AHostThatNeverAnswersIsResumedAfterAMinuteWithFewRpcs) {
    Finisher f;
    f.slurm.cluster = "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=DOWN+REBOOT_ISSUED\n";
    f.run(kRefused);
    EXPECT_EQ(f.slurm.told.back(), "update nodename=small state=RESUME");
    EXPECT_LE(f.time.t - std::chrono::steady_clock::time_point{}, 60s);
    EXPECT_GE(f.time.t - std::chrono::steady_clock::time_point{}, 55s);
    EXPECT_LE(f.slurm.node_rpcs, 40);  // the bash loop's was 600
}

// The sibling asked for, after the attempt ended: slurmctld set it DOWN at ResumeTimeout while a
// slow refusal or a killed reshape was undone (resumed, so that a job can ask for it again), or
// anything else (left to the admin).
struct AskedCase {
    const char* name;
    const char* big;  // its record's state and reason
    bool resumed;
};

const AskedCase kAsked[] = {
    {"down at resume timeout", "State=DOWN+CLOUD+POWERED_DOWN Reason=ResumeTimeout reached [slurm@2026-12-07T13:00:00]",
     true},
    {"down at resume timeout and still powering down",
     "State=DOWN+CLOUD+POWERING_DOWN Reason=ResumeTimeout reached [slurm@2026-12-07T13:00:00]", true},
    {"down for the admin", "State=DOWN+CLOUD+POWERED_DOWN Reason=maintenance [root@2026-12-07T13:00:00]", false},
    {"drained at resume timeout's words", "State=IDLE+DRAIN+CLOUD Reason=ResumeTimeout reached [root@2026-12-07T13:00:00]",
     false},
    {"powering up still", "State=IDLE+CLOUD+NOT_RESPONDING+POWERING_UP", false},
};

class Asked : public ::testing::TestWithParam<AskedCase> {};

TEST_P(Asked, IsResumedOnlyWhenResumeTimeoutSetItDown) {
    Finisher f;
    f.slurm.cluster = std::string("NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=IDLE\n") +
                      "NodeName=big AvailableFeatures=xpart_host_h NodeHostName=big " + GetParam().big + "\n";
    f.run(kRefused);
    // Resumed first (RESUME clears a reason), then powered down with the refusal's reason.
    std::vector<std::string> want{"update nodename=big state=POWER_DOWN_FORCE reason=xpart-reshape refused: no"};
    if (GetParam().resumed) want.insert(want.begin(), "update nodename=big state=RESUME");
    EXPECT_EQ(f.slurm.told, want);
    EXPECT_EQ(f.logged, GetParam().resumed
                            ? std::vector<std::string>{"big was DOWN at ResumeTimeout while this reshape was undone: resumed"}
                            : std::vector<std::string>{});
    // A reshape that was made: its sibling left is powered down, nothing read, nothing resumed.
    Finisher made;
    made.slurm.cluster = f.slurm.cluster;
    made.run(RebootPlan{"small", "big", "xpart-reshape: host is small now", false, ""});
    EXPECT_EQ(made.slurm.told,
              std::vector<std::string>{"update nodename=big state=POWER_DOWN_FORCE reason=xpart-reshape: host is small now"});
}

INSTANTIATE_TEST_SUITE_P(Refusals, Asked, ::testing::ValuesIn(kAsked), testing::SentenceCaseName{});

TEST(Finish, FailuresAreLoggedAndTheRestStillHappens) {
    Finisher f;
    f.slurm.refuse = {"update"};
    f.run(kReshaped);
    EXPECT_EQ(f.logged, std::vector<std::string>{"powering small down failed: scontrol update: REBOOT on node in progress"});
    EXPECT_EQ(f.slurm.told.size(), 1u);
}

// A geometry that cannot be made (the put back of a killed reshape fails too), or a slurmd
// that does not start: no slurmd registers a half-made GPU; the node is DOWN with the line
// that says why, and not resumed; the sibling left is powered down all the same.
struct NotStartedCase {
    const char* name;
    Status geometry, start;
    const char* why;  // the reason after "xpart-reshape: ", %s the NodeName
};

const NotStartedCase kNotStarted[] = {
    {"a geometry not made", Error{"xpart reshape: GPU 0: reshape to 7x1g.10gb failed: x; restoring y failed too: z\nmore"},
     ok_status(),
     "%s's geometry not made: xpart reshape: GPU 0: reshape to 7x1g.10gb failed: x; restoring y failed too: z: "
     "slurmd not started"},
    {"a slurmd that does not start", ok_status(), Error{"systemctl start slurmd@x.service: exit status 5\nmore"},
     "slurmd not started as %s: systemctl start slurmd@x.service: exit status 5"},
};

class NotStarted : public ::testing::TestWithParam<NotStartedCase> {};

TEST_P(NotStarted, TheNodeIsDownWithWhyAndNotResumed) {
    for (const RebootPlan& plan : {kReshaped, kRefused}) {
        Finisher f;
        f.slurm.cluster = "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=DOWN\n";
        f.geometry = GetParam().geometry;
        f.start = GetParam().start;
        f.run(plan);
        EXPECT_EQ(f.started.size(), GetParam().geometry ? 1u : 0u) << plan.next;
        std::string why = GetParam().why;
        why.replace(why.find("%s"), 2, plan.next);
        const std::string reason = "xpart-reshape: " + why;
        EXPECT_EQ(f.slurm.told, (std::vector<std::string>{
                                    "update nodename=" + plan.next + " state=DOWN reason=" + reason,
                                    "update nodename=" + plan.down + " state=POWER_DOWN_FORCE reason=" + plan.reason}));
        EXPECT_EQ(f.logged, std::vector<std::string>{reason + ", " + plan.next + " set DOWN"});
        EXPECT_EQ(f.slurm.node_rpcs, plan.refused ? 1 : 0);
    }
}

INSTANTIATE_TEST_SUITE_P(Failures, NotStarted, ::testing::ValuesIn(kNotStarted), testing::SentenceCaseName{});

struct StartCase {
    const char* name;
    const char* setting;
    std::vector<std::string> want;  // for the NodeName gpu1-2x3g40gb
};

const StartCase kStarts[] = {
    {"without %n the NodeName is appended", "slurmd -b -N", {"slurmd", "-b", "-N", "gpu1-2x3g40gb"}},
    {"a systemd instance", "systemctl start slurmd@%n", {"systemctl", "start", "slurmd@gpu1-2x3g40gb"}},
    {"each %n, and nothing appended",
     "systemd-run --unit=slurmd-%n --property=Delegate=yes slurmd -D -N %n",
     {"systemd-run", "--unit=slurmd-gpu1-2x3g40gb", "--property=Delegate=yes", "slurmd", "-D", "-N", "gpu1-2x3g40gb"}},
    {"two in one word", "%n-%n", {"gpu1-2x3g40gb-gpu1-2x3g40gb"}},
    {"blanks and newlines between words", "  /usr/sbin/slurmd\t-b \n -N ", {"/usr/sbin/slurmd", "-b", "-N", "gpu1-2x3g40gb"}},
    {"a lone percent is kept", "slurmd -b -N%", {"slurmd", "-b", "-N%", "gpu1-2x3g40gb"}},
};

class SlurmdStart : public ::testing::TestWithParam<StartCase> {};

TEST_P(SlurmdStart, TheNodeNameGoesWhereTheSettingSays) {
    EXPECT_EQ(slurmd_start_command(GetParam().setting, "gpu1-2x3g40gb"), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(Settings, SlurmdStart, ::testing::ValuesIn(kStarts), testing::SentenceCaseName{});

// A NodeName is put in once: a `%n` it carries (slurm.conf allows it) is not expanded again.
TEST(SlurmdStart, ANodeNameIsNotExpandedItself) {
    EXPECT_EQ(slurmd_start_command("slurmd@%n.service", "a%nb"), std::vector<std::string>{"slurmd@a%nb.service"});
}


// The reshape flow's slurmds as systemd units: the next sibling's unit is enabled before the one
// left is disabled, and started last, so a power cut at any step leaves a unit enabled (both at
// worst: the boot resolves it); a plan that keeps the host as it was starts the same unit
// again; a setting or NodeName that cannot name one unit gives none.
struct UnitCase {
    const char* name;
    std::string unit;
    RebootPlan plan;
    std::vector<std::vector<std::string>> want;
};

RebootPlan reshaped(std::string next, std::string down) { return {std::move(next), std::move(down), "", false, ""}; }
RebootPlan kept(std::string next, std::string down) { return {std::move(next), std::move(down), "", true, ""}; }

const UnitCase kUnits[] = {
    {"a reshape enables the next unit, disables the one left, then starts the next", "slurmd@%n.service",
     reshaped("gpu1-2x3g", "gpu1-7x1g"),
     {{"systemctl", "enable", "--quiet", "slurmd@gpu1-2x3g.service"},
      {"systemctl", "disable", "--quiet", "slurmd@gpu1-7x1g.service"},
      {"systemctl", "start", "slurmd@gpu1-2x3g.service"}}},
    {"a refusal starts the same unit again", "slurmd@%n.service", kept("gpu1-7x1g", "gpu1-2x3g"),
     {{"systemctl", "enable", "--now", "--quiet", "slurmd@gpu1-7x1g.service"}}},
    {"each %n is the NodeName", "xp-%n-%n", reshaped("b", "a"),
     {{"systemctl", "enable", "--quiet", "xp-b-b"}, {"systemctl", "disable", "--quiet", "xp-a-a"},
      {"systemctl", "start", "xp-b-b"}}},
    {"without %n no unit", "slurmd@.service", reshaped("b", "a"), {}},
    {"two words are no unit", "slurmd@%n .service", reshaped("b", "a"), {}},
    {"a slash in the next NodeName", "slurmd@%n.service", reshaped("../b", "a"), {}},
    {"a slash in the NodeName left", "slurmd@%n.service", reshaped("b", "x/a"), {}},
    {"an empty NodeName", "slurmd@%n.service", kept("", "a"), {}},
};

class SlurmdUnit : public ::testing::TestWithParam<UnitCase> {};

TEST_P(SlurmdUnit, OneSiblingsUnitIsEnabledAtEveryStepOrBothNeverNone) {
    EXPECT_EQ(slurmd_unit_commands(GetParam().unit, GetParam().plan), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(Settings, SlurmdUnit, ::testing::ValuesIn(kUnits), testing::SentenceCaseName{});

// The unit's ExecStart reads the environment file its ExecStartPre (unit-start) writes, where
// that writes it, and takes slurmd's -b from the variable the file sets: named once, read once.
// The part that outlives slurmd moves itself, by its pid, into a scope systemd makes for it:
// each argument where StartTransientUnit's signature wants it.
TEST(SlurmdUnit, ThePartThatOutlivesSlurmdLeavesTheUnitForAScopeOfItsOwn) {
    const std::vector<std::string> want{"busctl", "call", "--quiet", "org.freedesktop.systemd1",
                                        "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                        "StartTransientUnit", "ssa(sv)a(sa(sv))", "xpart-reboot-4242.scope",
                                        "fail", "2", "PIDs", "au", "1", "4242", "CollectMode", "s",
                                        "inactive-or-failed", "0"};
    EXPECT_EQ(leave_unit_command(4242), want);
    EXPECT_EQ(leave_unit_scope(4242), "xpart-reboot-4242.scope");
}

TEST(SlurmdUnit, TheTemplateReadsTheRebootFlagWhereItsExecStartPreWritesIt) {
    const char* src = std::getenv("XPART_SRCDIR");
    const std::string path = std::string(src ? src : "..") + "/etc/systemd/slurmd@.service.in";
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    std::stringstream text;
    text << in.rdbuf();
    const std::string flag = std::string(defaults::kRunDir) + "/" + defaults::kSlurmdRebootFlagPrefix + "%i";
    EXPECT_NE(text.str().find("\nEnvironmentFile=-" + flag + "\n"), std::string::npos) << path;
    EXPECT_NE(text.str().find("\nExecStartPre=@hooksdir@/etc/reshape/xpart-slurmd-start.sh %i\n"), std::string::npos)
        << path;
    EXPECT_NE(text.str().find("\nExecStart=/usr/sbin/slurmd -D $SLURMD_OPTIONS $" +
                              std::string(defaults::kSlurmdRebootVariable) + " -N %i\n"),
              std::string::npos)
        << path;
    EXPECT_EQ(slurmd_reboot_flag_text(true), std::string(defaults::kSlurmdRebootVariable) + "=-b\n");
    EXPECT_EQ(slurmd_reboot_flag_text(false), std::string(defaults::kSlurmdRebootVariable) + "=\n");
}

// A start while a sibling powers up starts the host's watcher again, in a service of its own
// named by the node (one per host: a second start finds it running), with the settings given.
TEST(HostWatch, StartsTheHostsWatcherInATransientServiceWithTheSettingsGiven) {
    const std::vector<std::string> want{"systemd-run", "--quiet", "--collect", "--no-block",
                                        "--unit=xpart-reshape-watch-gpu1-7x1g.service",
                                        "--setenv=SLURM_CONF=/etc/slurm/slurm.conf", "--", "/usr/bin/xpart",
                                        "reshape-request", "watch", "gpu1-7x1g"};
    EXPECT_EQ(host_watch_command("/usr/bin/xpart", "gpu1-7x1g", {"SLURM_CONF=/etc/slurm/slurm.conf"}), want);
    for (const char* unnameable : {"", "a b", "a/b", "n\\x2d", "a@b"})
        EXPECT_TRUE(host_watch_command("/usr/bin/xpart", unnameable, {}).empty()) << unnameable;
}

TEST(HostWatch, OnlyASiblingPoweringUpCounts) {
    const auto cluster = parse_nodes(
        "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=IDLE+DRAIN+REBOOT_ISSUED "
        "Reason=xpart-reshape:big\n"
        "NodeName=big AvailableFeatures=xpart_host_h NodeHostName=big State=IDLE+CLOUD+POWERING_UP\n"
        "NodeName=c AvailableFeatures=xpart_host_h NodeHostName=c State=IDLE+CLOUD+POWERED_DOWN\n"
        "NodeName=other AvailableFeatures=xpart_host_o NodeHostName=o State=IDLE\n"
        "NodeName=other2 AvailableFeatures=xpart_host_o NodeHostName=o2 State=IDLE+CLOUD+POWERED_DOWN\n"
        "NodeName=lone AvailableFeatures=xpart_host_l NodeHostName=l State=IDLE+CLOUD+POWERING_UP\n");
    EXPECT_TRUE(sibling_powers_up(cluster, "small"));
    EXPECT_TRUE(sibling_powers_up(cluster, "c"));
    EXPECT_FALSE(sibling_powers_up(cluster, "big"));    // itself: not a sibling
    EXPECT_FALSE(sibling_powers_up(cluster, "other"));  // another host's powers up
    EXPECT_FALSE(sibling_powers_up(cluster, "lone"));
}

// slurmd -b only while slurmctld waits for the NodeName's boot.
struct RebootStateCase {
    const char* name;
    std::vector<std::string> state;
    bool reboot;
};

const RebootStateCase kRebootStates[] = {
    {"a reshape's reboot issued", {"IDLE", "DRAIN", "REBOOT_ISSUED"}, true},
    {"a sibling powering up", {"IDLE", "CLOUD", "POWERING_UP"}, true},
    {"powering up and not responding (a start killed before it registered)", {"IDLE", "CLOUD", "NOT_RESPONDING", "POWERING_UP"}, true},
    {"a restart under running jobs", {"MIXED"}, false},
    {"a reboot asked but not issued (jobs still run)", {"ALLOCATED", "DRAIN", "REBOOT_REQUESTED"}, false},
    {"down and not responding (a power cycle without a reshape)", {"DOWN", "NOT_RESPONDING"}, false},
    {"powered down", {"IDLE", "CLOUD", "POWERED_DOWN"}, false},
};

class RebootState : public ::testing::TestWithParam<RebootStateCase> {};

TEST_P(RebootState, SlurmdSaysItRebootedOnlyWhileSlurmctldWaitsForTheBoot) {
    SlurmNode node;
    node.name = "gpu1-2x3g";
    node.state = GetParam().state;
    EXPECT_EQ(start_reports_reboot(node), GetParam().reboot);
}

INSTANTIATE_TEST_SUITE_P(States, RebootState, ::testing::ValuesIn(kRebootStates), testing::SentenceCaseName{});

}  // namespace
}  // namespace xpart::reshape_request
