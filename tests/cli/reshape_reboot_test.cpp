// `xpart reshape-request reboot` as slurmd runs it, before any reshape: a reboot that is no
// reshape (here: slurmctld cannot be asked) runs the fallback or nothing, and root's log is
// appended to a plain file only (no link followed, no FIFO waited on).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/cli/run_command.hpp"

namespace xpart::test {
namespace {

// xpart with PATH holding only an scontrol that cannot reach slurmctld; `timeout` ends a run
// that would block (exit 124).
CommandResult reboot(const TempDir& dir, const std::vector<std::string>& args) {
    write_text(dir.path() + "/scontrol", "#!/bin/sh\necho 'slurm_load_node error: Unable to contact slurm controller' >&2\nexit 1\n");
    chmod((dir.path() + "/scontrol").c_str(), 0755);
    std::vector<std::string> argv{"/usr/bin/timeout", "20", "/usr/bin/env", "PATH=" + dir.path() + ":/usr/bin:/bin",
                                  build_dir() + "/xpart", "reshape-request", "reboot"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv);
}

TEST(ReshapeReboot, NoReshapeAndNoFallbackDoesNothing) {
    TempDir dir;
    const std::string log = dir.path() + "/reshape.log";
    auto r = reboot(dir, {"--log", log});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const auto lines = lines_of(read_text(log));
    ASSERT_EQ(lines.size(), 2u) << read_text(log);
    EXPECT_NE(lines[0].find(" xpart-reboot: cannot read the cluster's nodes: "), std::string::npos) << lines[0];
    EXPECT_NE(lines[1].find(" xpart-reboot: no node of this host waits for an xpart reshape, and "
                            "XPART_REBOOT_FALLBACK is not set: nothing done"),
              std::string::npos)
        << lines[1];
    EXPECT_NE(r.err.find("xpart-reboot: no node of this host waits"), std::string::npos) << r.err;
}

TEST(ReshapeReboot, NoReshapeRunsTheFallback) {
    TempDir dir;
    const std::string mark = dir.path() + "/rebooted";
    auto r = reboot(dir, {"--fallback", "touch " + mark});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(access(mark.c_str(), F_OK), 0);
    EXPECT_NE(r.err.find("xpart-reboot: not a reshape: running touch " + mark), std::string::npos) << r.err;
}

TEST(ReshapeReboot, TheLogIsAPlainFileOnly) {
    TempDir dir;
    const std::string fifo = dir.path() + "/fifo", link = dir.path() + "/link", target = dir.path() + "/target";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
    EXPECT_EQ(reboot(dir, {"--log", fifo}).exit_code, 1);  // 124: it waited on the FIFO
    EXPECT_EQ(reboot(dir, {"--log", link}).exit_code, 1);
    EXPECT_NE(access(target.c_str(), F_OK), 0) << "the link was followed";
}

}  // namespace
}  // namespace xpart::test
