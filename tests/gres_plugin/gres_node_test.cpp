#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "libxpart/gres/gres_check.hpp"
#include "libxpart/gres/gres_node.hpp"
#include "libxpart/node_cache.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart {
namespace {

const std::string kGresConf = "/etc/slurm/gres.conf";

// slurmd's gres.conf with `text`, for NodeName n1.
SlurmdGresConf gres_conf(const std::string& text) {
    SlurmdGresConf g{kGresConf, "n1", std::nullopt, {}};
    auto parsed = parse_gres_conf(text, kGresConf);
    EXPECT_TRUE(parsed.ok()) << parsed.error().message;
    if (parsed) g.conf = *parsed;
    return g;
}

// The records xpart discover --gres-conf writes for `node`, with the first one's Type= changed.
std::string generated_with_first_type(const Node& node, const std::string& type) {
    auto records = generate_gres_records(node, RootFs("/"));
    records[0].type = type;
    std::string text;
    for (const auto& r : records) text += format_gres_record(r) + "\n";
    return text;
}

TEST(PlanNodeGres, DiscoveryFailureRegistersNothingWithOneLine) {
    XpartConf conf;
    Result<Node> failed = Error{"libnvidia-ml.so.1: cannot open shared object file"};
    NodeGres g = plan_node_gres(failed, conf, gres_conf("Name=gpu Type=x File=/dev/nvidia0\n"));
    EXPECT_TRUE(g.records.empty());
    EXPECT_EQ(g.errors, std::vector<std::string>{
                            "discovery failed, registering no GPU: libnvidia-ml.so.1: "
                            "cannot open shared object file"});
}

// The case the check was unified for: files right, Type= wrong. Slurm never hands the plugin
// such a record when slurm.conf's Gres= lacks the type; xpart reads gres.conf itself.
TEST(PlanNodeGres, MismatchRegistersHardwareByDefault) {
    XpartConf conf;
    conf.root = "/sim";
    const Node node = fixtures::a100_80gb_mig_node();
    NodeGres g = plan_node_gres(node, conf, gres_conf(generated_with_first_type(node, "2g.20gb")));
    EXPECT_EQ(g.records.size(), 4u);
    EXPECT_EQ(g.records[0].files[0].path, "/sim/dev/nvidiactl");
    ASSERT_EQ(g.errors.size(), 1u);
    EXPECT_EQ(g.errors[0].rfind(kGresConf + ":1: type differs: Type=2g.20gb, the hardware has " +
                                    node.gpus[0].partitions[0].type + " (GPU 0 MIG ", 0), 0u)
        << g.errors[0];
    const std::string consequence = "); registering what the hardware has";
    EXPECT_EQ(g.errors[0].substr(g.errors[0].size() - consequence.size()), consequence);
}

TEST(PlanNodeGres, MismatchWithDrainRegistersNothing) {
    XpartConf conf;
    conf.on_mismatch = OnMismatch::Drain;
    const Node node = fixtures::a100_80gb_mig_node();
    NodeGres g = plan_node_gres(node, conf, gres_conf(generated_with_first_type(node, "2g.20gb")));
    EXPECT_TRUE(g.records.empty());
    ASSERT_EQ(g.errors.size(), 1u);
    EXPECT_NE(g.errors[0].find("; OnMismatch=drain: registering no GPU"), std::string::npos);
    // Notes are no difference: a drifted name, and no record at all, still register.
    NodeGres none = plan_node_gres(node, conf, gres_conf("AutoDetect=off\n"));
    EXPECT_EQ(none.records.size(), 4u);
    EXPECT_TRUE(none.errors.empty());
    EXPECT_EQ(none.warnings, std::vector<std::string>{
                                 kGresConf + ": note: no Name=gpu record for NodeName=n1: nothing "
                                 "to compare; xpart's gres/gpu registers the partitions it discovers"});
}

TEST(PlanNodeGres, AGresConfThatCannotBeReadIsADifference) {
    SlurmdGresConf unreadable{kGresConf, "n1", std::nullopt,
                              kGresConf + ":3: Include=more.conf: Include is not supported by this reader"};
    XpartConf conf;
    NodeGres g = plan_node_gres(fixtures::a100_80gb_mig_node(), conf, unreadable);
    EXPECT_EQ(g.records.size(), 4u);
    EXPECT_EQ(g.errors, std::vector<std::string>{unreadable.error + ": gres.conf not checked; "
                                                 "registering what the hardware has"});
    conf.on_mismatch = OnMismatch::Drain;
    EXPECT_TRUE(plan_node_gres(fixtures::a100_80gb_mig_node(), conf, unreadable).records.empty());
    // No gres.conf at all: nothing to check, nothing said.
    NodeGres without = plan_node_gres(fixtures::a100_80gb_mig_node(), conf, SlurmdGresConf{});
    EXPECT_EQ(without.records.size(), 4u);
    EXPECT_TRUE(without.errors.empty());
    EXPECT_TRUE(without.warnings.empty());
}

TEST(PlanNodeGres, WarningsPassThrough) {
    Node n = fixtures::mi300x_cpx_node(2, fixtures::XcpListing::ReverseKfdOrder);
    n.warnings = {"GPU 3: something odd"};
    NodeGres g = plan_node_gres(n, XpartConf{}, SlurmdGresConf{});
    EXPECT_EQ(g.records.size(), 2u);
    EXPECT_TRUE(g.errors.empty());
    EXPECT_EQ(g.warnings, n.warnings);
}

TEST(PlanNodeGres, UnreadGpusAreOneErrorLineEachAndTheRestRegisters) {
    Node n = fixtures::mi300x_cpx_node(2, fixtures::XcpListing::ReverseKfdOrder);
    n.errors = {"NVML /x/libnvidia-ml.so.1: nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED (9): NVIDIA "
                "GPUs not discovered"};
    NodeGres g = plan_node_gres(n, XpartConf{}, SlurmdGresConf{});
    EXPECT_EQ(g.records.size(), 2u);
    EXPECT_EQ(g.errors, std::vector<std::string>{n.errors[0]});
}

// The driver gone: typed counts (no File=) would each repeat the NVML line, so only records
// naming files are compared then; a file the hardware lacks is still said.
TEST(PlanNodeGres, UnreadGpusSilenceCountOnlyMismatches) {
    Node n = fixtures::mi300x_cpx_node(2, fixtures::XcpListing::ReverseKfdOrder);
    n.errors = {"NVML: NVIDIA GPUs not discovered"};
    std::string text = "Name=gpu Type=1g.10gb Count=1\nName=gpu Type=3g.40gb Count=2\n"
                       "Name=gpu File=/dev/nvidia0\n";
    for (const auto& r : generate_gres_records(n, RootFs("/"))) text += format_gres_record(r) + "\n";
    NodeGres g = plan_node_gres(n, XpartConf{}, gres_conf(text));
    EXPECT_EQ(g.records.size(), 2u);
    EXPECT_EQ(g.errors, (std::vector<std::string>{
                            n.errors[0], kGresConf + ":3: extra record: File=/dev/nvidia0: no "
                                         "partition on this node uses /dev/nvidia0; registering "
                                         "what the hardware has"}));
}

// gres.conf's AutoDetect= is told, whatever Slurm made of it: the node's line, else the global.
TEST(PlanNodeGres, AutoDetectLine) {
    struct Case {
        const char* gres_conf;
        std::optional<std::string> line;
    };
    const Case cases[] = {
        {"Name=gpu File=/dev/nvidia0\n", std::nullopt},
        {"AutoDetect=off\n", std::nullopt},
        {"AutoDetect=full\n", autodetect_line({"full"}, 2)},
        {"AutoDetect=NVML\nName=gpu File=/dev/nvidia0\n", autodetect_line({"NVML"}, 2)},
        {"AutoDetect=off\nNodeName=n1 AutoDetect=rsmi\n", autodetect_line({"rsmi"}, 2)},
        {"AutoDetect=rsmi\nNodeName=n1 AutoDetect=off\n", std::nullopt},
        {"AutoDetect=off\nNodeName=n2 AutoDetect=rsmi\n", std::nullopt},
    };
    const Node node = fixtures::mi300x_cpx_node(2, fixtures::XcpListing::ReverseKfdOrder);
    for (const Case& c : cases) {
        std::vector<std::string> told;
        for (const auto& w : plan_node_gres(node, XpartConf{}, gres_conf(c.gres_conf)).warnings)
            if (w.find(": note: ") == std::string::npos && w.find(": extra record: ") == std::string::npos)
                told.push_back(w);
        EXPECT_EQ(told, c.line ? std::vector<std::string>{*c.line} : std::vector<std::string>{})
            << c.gres_conf;
    }
}

TEST(ReadSlurmdGresConf, MissingIsNoErrorAndBadIsItsLine) {
    char tmpl[] = "/tmp/xpart_gres_conf_testXXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl, path = dir + "/gres.conf";
    SlurmdGresConf missing = read_slurmd_gres_conf(path, "n1");
    EXPECT_FALSE(missing.conf);
    EXPECT_EQ(missing.error, "");
    std::ofstream(path) << "Name=gpu Type=x File=/dev/nvidia0\nName=gpu Count=lots\n";
    SlurmdGresConf bad = read_slurmd_gres_conf(path, "n1");
    EXPECT_FALSE(bad.conf);
    EXPECT_EQ(bad.error.rfind(path + ":2: Count=lots: ", 0), 0u) << bad.error;
    std::ofstream(path) << "NodeName=n1 Name=gpu Type=x File=/dev/nvidia0\n";
    SlurmdGresConf good = read_slurmd_gres_conf(path, "n1");
    ASSERT_TRUE(good.conf);
    EXPECT_EQ(good.conf->records.size(), 1u);
    EXPECT_EQ(good.node_name, "n1");
    std::filesystem::remove_all(dir);
}

TEST(LoadNodeGres, MalformedConfRegistersNothingWithTheConfLine) {
    char path[] = "/tmp/xpart_node_testXXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "Vendors=nvidia\nOnMismatch=maybe\n", 32), 32);
    close(fd);
    NodeGres g = load_node_gres(path, "", "", nullptr);
    unlink(path);
    EXPECT_TRUE(g.records.empty());
    EXPECT_EQ(g.errors, std::vector<std::string>{
                            std::string(path) +
                            ":2: OnMismatch=maybe: expected register_hardware or drain; "
                            "registering no GPU"});
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
        return load_node_gres(conf, "", "", nullptr);
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
