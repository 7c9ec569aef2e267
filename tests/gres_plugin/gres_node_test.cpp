#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "libxpart/gres_node.hpp"
#include "libxpart/node_cache.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart {
namespace {

TEST(PlanNodeGres, DiscoveryFailureRegistersNothingWithOneLine) {
    XpartConf conf;
    Result<Node> failed = Error{"libnvidia-ml.so.1: cannot open shared object file"};
    NodeGres g = plan_node_gres(failed, conf, {});
    EXPECT_TRUE(g.records.empty());
    EXPECT_EQ(g.errors, std::vector<std::string>{
                            "discovery failed, registering no GPU: libnvidia-ml.so.1: "
                            "cannot open shared object file"});
}

TEST(PlanNodeGres, MismatchRegistersHardwareByDefault) {
    XpartConf conf;
    conf.root = "/sim";
    NodeGres g = plan_node_gres(fixtures::a100_80gb_mig_node(), conf, {{"gres.conf Name=gpu record #1", "2g.20gb", {}, 1}});
    EXPECT_EQ(g.records.size(), 4u);
    EXPECT_EQ(g.records[0].files[0].path, "/sim/dev/nvidiactl");
    ASSERT_EQ(g.errors.size(), 1u);
    EXPECT_EQ(g.errors[0],
              "gres.conf disagrees with the hardware: gres.conf Name=gpu record #1: "
              "Type=2g.20gb Count=1: hardware has 0 of type 2g.20gb (1g.10gb x2, 3g.40gb x1, "
              "a100-sxm4-80gb x1); registering what the hardware has");
}

TEST(PlanNodeGres, MismatchWithDrainRegistersNothing) {
    XpartConf conf;
    conf.on_mismatch = OnMismatch::Drain;
    NodeGres g = plan_node_gres(fixtures::a100_80gb_mig_node(), conf, {{"#1", "", {"/dev/nvidia9"}, 1}});
    EXPECT_TRUE(g.records.empty());
    ASSERT_EQ(g.errors.size(), 1u);
    EXPECT_NE(g.errors[0].find("OnMismatch=drain: registering no GPU"), std::string::npos);
}

TEST(PlanNodeGres, WarningsPassThrough) {
    Node n = fixtures::mi300x_cpx_node(2, fixtures::XcpListing::ReverseKfdOrder);
    n.warnings = {"GPU 3: something odd"};
    NodeGres g = plan_node_gres(n, XpartConf{}, {});
    EXPECT_EQ(g.records.size(), 2u);
    EXPECT_TRUE(g.errors.empty());
    EXPECT_EQ(g.warnings, n.warnings);
}

TEST(PlanNodeGres, UnreadGpusAreOneErrorLineEachAndTheRestRegisters) {
    Node n = fixtures::mi300x_cpx_node(2, fixtures::XcpListing::ReverseKfdOrder);
    n.errors = {"NVML /x/libnvidia-ml.so.1: nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED (9): NVIDIA "
                "GPUs not discovered"};
    NodeGres g = plan_node_gres(n, XpartConf{}, {});
    EXPECT_EQ(g.records.size(), 2u);
    EXPECT_EQ(g.errors, std::vector<std::string>{n.errors[0]});
}

// The driver gone: slurm.conf's typed counts (no File=) would each repeat the NVML line, so
// only File= records are compared then; a file the hardware lacks is still said.
TEST(PlanNodeGres, UnreadGpusSilenceCountOnlyMismatches) {
    Node n = fixtures::mi300x_cpx_node(2, fixtures::XcpListing::ReverseKfdOrder);
    n.errors = {"NVML: NVIDIA GPUs not discovered"};
    NodeGres g = plan_node_gres(n, XpartConf{},
                                {{"#1", "1g.10gb", {}, 1}, {"#2", "3g.40gb", {}, 2},
                                 {"#3", "", {"/dev/nvidia0"}, 1}});
    EXPECT_EQ(g.records.size(), 2u);
    ASSERT_EQ(g.errors.size(), 2u);
    EXPECT_EQ(g.errors[0], n.errors[0]);
    EXPECT_EQ(g.errors[1].rfind("gres.conf disagrees with the hardware: #3: "
                                "File=/dev/nvidia0: hardware has no GPU partition using "
                                "/dev/nvidia0", 0), 0u) << g.errors[1];
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
                            std::string(path) +
                            ":2: OnMismatch=maybe: expected register_hardware or drain; "
                            "registering no GPU"});
}

// The gres.conf beside xpart.conf: its global AutoDetect= is told, whatever Slurm made of it.
TEST(GresConfAutoDetectLine, ReadsTheGlobalAutoDetectBesideXpartConf) {
    char tmpl[] = "/tmp/xpart_autodetect_testXXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl, xpart_conf = dir + "/xpart.conf";
    struct Case {
        const char* gres_conf;  // nullptr: no file
        std::optional<std::string> line;
    };
    const Case cases[] = {
        {nullptr, std::nullopt},
        {"Name=gpu File=/dev/nvidia0\n", std::nullopt},
        {"AutoDetect=off\n", std::nullopt},
        {"AutoDetect=full\n", autodetect_line({"full"}, 3)},
        {"AutoDetect=NVML\nName=gpu File=/dev/nvidia0\n", autodetect_line({"NVML"}, 3)},
        {"AutoDetect=cuda\n", std::nullopt},  // Slurm's own line names it; no guess here
    };
    for (const Case& c : cases) {
        std::filesystem::remove(dir + "/gres.conf");
        if (c.gres_conf) std::ofstream(dir + "/gres.conf") << c.gres_conf;
        EXPECT_EQ(gres_conf_autodetect_line(xpart_conf, 3), c.line)
            << (c.gres_conf ? c.gres_conf : "(no gres.conf)");
    }
    EXPECT_EQ(gres_conf_autodetect_line("", 3), std::nullopt);
    std::filesystem::remove_all(dir);
}

// slurmd start leaves the node it found for the launchers, and removes an old one when it
// found nothing it can trust.
class NodeCacheAtSlurmdStart : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/xpart_node_cache_testXXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        root_ = tmpl;
    }
    void TearDown() override { std::filesystem::remove_all(root_); }
    NodeGres start(const std::string& conf_text) {
        const std::string conf = root_ + "/xpart.conf";
        std::ofstream(conf) << "Root=" << root_ << "\n" << conf_text;
        return load_node_gres(conf, {}, nullptr);
    }
    std::string root_;
};

TEST_F(NodeCacheAtSlurmdStart, DiscoveryWritesTheCache) {
    NodeGres g = start("Vendors=amd\n");
    EXPECT_TRUE(g.errors.empty());
    EXPECT_TRUE(g.warnings.empty());
    auto cached = read_node_cache(RootFs(root_));
    ASSERT_TRUE(cached) << cached.error().message;
    EXPECT_TRUE(cached->gpus.empty());
}

TEST_F(NodeCacheAtSlurmdStart, FailedDiscoveryRemovesTheOldCache) {
    ASSERT_TRUE(write_node_cache(
        RootFs(root_), fixtures::mi300x_cpx_node(2, fixtures::XcpListing::ReverseKfdOrder)));
    // A KFD node that cannot be parsed: discovery fails, the node registers no GPU.
    const std::string kfd_node = root_ + "/sys/class/kfd/kfd/topology/nodes/0";
    std::filesystem::create_directories(kfd_node);
    std::ofstream(kfd_node + "/gpu_id") << "1\n";
    std::ofstream(kfd_node + "/properties") << "simd_count\n";
    NodeGres g = start("Vendors=amd\n");
    ASSERT_EQ(g.errors.size(), 1u);
    EXPECT_EQ(g.errors[0].rfind("discovery failed, registering no GPU: ", 0), 0u) << g.errors[0];
    EXPECT_TRUE(g.records.empty());
    EXPECT_FALSE(RootFs(root_).exists("/run/xpart/node.json"));
}

TEST_F(NodeCacheAtSlurmdStart, NvmlMissingOnAnNvidiaNodeIsOneLineAndTheRestIsCached) {
    // The driver lists a GPU but NVML is not there: one line; what was read is registered
    // and cached (here nothing), with the line, as the launchers' view of the node.
    std::filesystem::create_directories(root_ + "/proc/driver/nvidia/gpus/0000:07:00.0");
    NodeGres g = start("NvmlLibrary=" + root_ + "/no-such-libnvidia-ml.so.1\n");
    ASSERT_EQ(g.errors.size(), 1u);
    EXPECT_EQ(g.errors[0].rfind("NVML library '" + root_ + "/no-such-libnvidia-ml.so.1' "
                                "could not be loaded: ", 0), 0u) << g.errors[0];
    EXPECT_TRUE(g.records.empty());
    auto cached = read_node_cache(RootFs(root_));
    ASSERT_TRUE(cached) << cached.error().message;
    EXPECT_EQ(cached->errors.size(), 1u);
}

TEST_F(NodeCacheAtSlurmdStart, AnUnwritableCacheIsAWarningNotAFailure) {
    std::ofstream(root_ + "/run") << "a file where /run should be";
    NodeGres g = start("Vendors=amd\n");
    EXPECT_TRUE(g.errors.empty());
    ASSERT_EQ(g.warnings.size(), 1u);
    EXPECT_EQ(g.warnings[0], "node cache: " + root_ + "/run/xpart: mkdir: Not a directory; "
                             "xpart launch will discover the node in every rank");
}

}  // namespace
}  // namespace xpart
