#include <gtest/gtest.h>

#include "libxpart/gres_node.hpp"
#include "tests/gres_plugin/sample_nodes.hpp"

namespace xpart {
namespace {

TEST(PlanNodeGres, DiscoveryFailureRegistersNothingWithOneLine) {
    XpartConf conf;
    Result<Node> failed = Error{"libnvidia-ml.so.1: cannot open shared object file"};
    NodeGres g = plan_node_gres(failed, conf, {});
    EXPECT_TRUE(g.records.empty());
    EXPECT_EQ(g.errors, std::vector<std::string>{
                            "gres/gpu: discovery failed, registering no GPU: libnvidia-ml.so.1: "
                            "cannot open shared object file"});
}

TEST(PlanNodeGres, MismatchRegistersHardwareByDefault) {
    XpartConf conf;
    conf.root = "/sim";
    NodeGres g = plan_node_gres(test::mig_node(), conf, {{"gres.conf Name=gpu record #1", "2g.20gb", {}, 1}});
    EXPECT_EQ(g.records.size(), 4u);
    EXPECT_EQ(g.records[0].files[0].path, "/sim/dev/nvidiactl");
    ASSERT_EQ(g.errors.size(), 1u);
    EXPECT_EQ(g.errors[0],
              "gres/gpu: gres.conf disagrees with the hardware: gres.conf Name=gpu record #1: "
              "Type=2g.20gb Count=1: hardware has 0 of type 2g.20gb (1g.10gb x2, 3g.40gb x1, "
              "a100-sxm4-80gb x1); registering what the hardware has");
}

TEST(PlanNodeGres, MismatchWithDrainRegistersNothing) {
    XpartConf conf;
    conf.on_mismatch = OnMismatch::Drain;
    NodeGres g = plan_node_gres(test::mig_node(), conf, {{"#1", "", {"/dev/nvidia9"}, 1}});
    EXPECT_TRUE(g.records.empty());
    ASSERT_EQ(g.errors.size(), 1u);
    EXPECT_NE(g.errors[0].find("OnMismatch=drain: registering no GPU"), std::string::npos);
}

TEST(PlanNodeGres, WarningsPassThrough) {
    Node n = test::amd_cpx_node(2);
    n.warnings = {"GPU 3: something odd"};
    NodeGres g = plan_node_gres(n, XpartConf{}, {});
    EXPECT_EQ(g.records.size(), 2u);
    EXPECT_TRUE(g.errors.empty());
    EXPECT_EQ(g.warnings, n.warnings);
}

TEST(LoadNodeGres, MalformedConfRegistersNothingWithTheConfLine) {
    char path[] = "/tmp/xpart_node_testXXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "Vendors=nvidia\nOnMismatch=maybe\n", 32), 32);
    close(fd);
    NodeGres g = load_node_gres(path, {}, nullptr);
    unlink(path);
    EXPECT_TRUE(g.records.empty());
    EXPECT_EQ(g.errors, std::vector<std::string>{
                            "gres/gpu: " + std::string(path) +
                            ":2: OnMismatch=maybe: expected register_hardware or drain; "
                            "registering no GPU"});
}

}  // namespace
}  // namespace xpart
