// `xpart discover` on a node without GPUs (an empty root): exit codes and one-line errors.
#include <gtest/gtest.h>

#include "tests/cli/run_command.hpp"

namespace xpart::test {
namespace {

class DiscoverEmptyRoot : public ::testing::Test {
protected:
    CommandResult discover(std::vector<std::string> args) {
        std::vector<std::string> argv{build_dir() + "/xpart", "--root", root_.path(), "discover"};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_command(argv);
    }
    TempDir root_;
    TempDir work_;
};

TEST_F(DiscoverEmptyRoot, TableSaysNoGpus) {
    const auto r = discover({});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "no GPUs found\n");
    EXPECT_EQ(r.err, "");
}

TEST_F(DiscoverEmptyRoot, JsonHasNoGpus) {
    const auto r = discover({"--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "{\n  \"gpus\": [],\n  \"warnings\": []\n}\n");
}

TEST_F(DiscoverEmptyRoot, GresConfHasOnlyTheHeader) {
    const auto r = discover({"--gres-conf"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
    EXPECT_EQ(r.out.rfind("# ", 0), 0u) << r.out;
}

TEST_F(DiscoverEmptyRoot, CheckOfAnEmptyConfAgrees) {
    const std::string conf = work_.path() + "/gres.conf";
    write_text(conf, "# nothing here\n");
    const auto r = discover({"--check", conf});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "");
}

TEST_F(DiscoverEmptyRoot, CheckReportsARecordForAbsentHardware) {
    const std::string conf = work_.path() + "/gres.conf";
    write_text(conf, "# a node with one GPU?\nName=gpu Type=a100 File=/dev/nvidia0\n");
    const auto r = discover({"--check", conf});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_EQ(r.out, conf + ":2: extra record: File=/dev/nvidia0: no partition on this node uses "
                            "/dev/nvidia0\n");
}

TEST_F(DiscoverEmptyRoot, CheckHonoursNodeName) {
    const std::string conf = work_.path() + "/gres.conf";
    write_text(conf, "NodeName=other Name=gpu File=/dev/nvidia0\n");
    EXPECT_EQ(discover({"--check", conf, "--node-name", "mine"}).exit_code, 0);
    EXPECT_EQ(discover({"--check", conf, "--node-name", "other"}).exit_code, 3);
}

TEST_F(DiscoverEmptyRoot, UnreadableCheckFileIsOneErrorLine) {
    const std::string conf = work_.path() + "/missing.conf";
    const auto r = discover({"--check", conf});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "xpart discover: " + conf + ": No such file or directory\n");
}

TEST_F(DiscoverEmptyRoot, MalformedCheckFileIsOneErrorLine) {
    const std::string conf = work_.path() + "/gres.conf";
    write_text(conf, "Name=gpu File=/dev/nvidia0\nName=gpu Count=two\n");
    const auto r = discover({"--check", conf});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "xpart discover: " + conf +
                         ":2: Count=two: not a count (digits with an optional k, m, g, t or p "
                         "suffix)\n");
}

TEST_F(DiscoverEmptyRoot, OutputFormsExcludeEachOther) {
    const auto r = discover({"--json", "--gres-conf"});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(r.out, "");
}

TEST_F(DiscoverEmptyRoot, UnknownVendorIsRefused) {
    const auto r = discover({"--vendor", "intel"});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find("--vendor"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace xpart::test
