// AMD discovery end to end: simulated nodes against golden JSON, and the real KFD captures.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <set>

#include "libxpart/discovery.hpp"
#include "libxpart/node_json.hpp"
#include "libxpart/text.hpp"
#include "tests/golden.hpp"
#include "tests/libxpart/amd_temp_root.hpp"

namespace xpart {
namespace {

using testing::TempRoot;

DiscoveryOptions amd_only(const std::string& root) {
    DiscoveryOptions o;
    o.root = RootFs(root);
    o.nvidia = false;
    return o;
}

// ---- Golden files: one per shipped AMD spec (tests/golden.hpp: XPART_UPDATE_GOLDEN=1 rewrites
// them and fails; read them and check by hand before committing).
class AmdGoldenTest : public ::testing::TestWithParam<const char*> {};

TEST_P(AmdGoldenTest, DiscoveryMatchesGolden) {
    TempRoot root;
    testing::build_spec_file(root, GetParam());
    auto node = discover(amd_only(root.path()));
    ASSERT_TRUE(node.ok()) << node.error().message;
    testing::expect_json_golden(testing::srcdir() + "/tests/libxpart/golden/" + GetParam() + ".json",
                                to_json(*node), 1);
}

INSTANTIATE_TEST_SUITE_P(Specs, AmdGoldenTest,
                         ::testing::Values("mi300x-cpx-8gpu", "mi300x-spx", "mi300x-dpx",
                                           "mi300a-tpx", "mi300x-nic"),
                         [](const auto& info) {
                             std::string n = info.param;
                             for (char& c : n) if (c == '-') c = '_';
                             return n;
                         });

// Facts of the 64-XCP node stated independently of the golden file.
TEST(AmdDiscovery, Mi300xCpx8GpuShape) {
    TempRoot root;
    testing::build_spec_file(root, "mi300x-cpx-8gpu");
    auto node = discover(amd_only(root.path()));
    ASSERT_TRUE(node.ok()) << node.error().message;
    ASSERT_EQ(node->gpus.size(), 8u);
    EXPECT_EQ(node->partition_count(), 64u);
    EXPECT_TRUE(node->warnings.empty());
    std::set<unsigned> minors;
    for (const Gpu& g : node->gpus) {
        EXPECT_EQ(g.mode, PartitionMode::Cpx);
        EXPECT_EQ(g.memory_mode, "NPS4");
        EXPECT_EQ(g.memory_mb, 196608u);
        ASSERT_EQ(g.partitions.size(), 8u);
        for (std::size_t i = 0; i < 8; ++i) {
            const Partition& p = g.partitions[i];
            EXPECT_EQ(p.index, static_cast<int>(i));
            EXPECT_EQ(p.type, "cpx");
            EXPECT_EQ(p.compute_units, 38u);
            EXPECT_EQ(p.uuid, g.uuid);
            ASSERT_EQ(p.device_files.size(), 2u);
            EXPECT_EQ(p.device_files[1], (DeviceFile{"/dev/kfd", 234, 0, true}));
            minors.insert(p.device_files[0].minor);
        }
    }
    EXPECT_EQ(minors.size(), 64u);
    EXPECT_EQ(*minors.begin(), 128u);
    EXPECT_EQ(*minors.rbegin(), 191u);
    EXPECT_EQ(node->gpus[0].pci_bus_id, "0000:05:00.0");
    EXPECT_EQ(node->gpus[0].uuid, "GPU-e3aa140f9a5f9e31");
    EXPECT_EQ(format_cpu_list(node->gpus[0].cpus), "0-47,96-143");
    EXPECT_EQ(node->gpus[7].numa_node, 1);
}

TEST(AmdDiscovery, TypeNamingOptions) {
    TempRoot root;
    testing::build_spec_file(root, "mi300x-cpx-8gpu");
    for (auto [naming, type] : {std::make_pair(AmdTypeNaming::Mode, "cpx"),
                                std::make_pair(AmdTypeNaming::ModeMemory, "cpx.nps4"),
                                std::make_pair(AmdTypeNaming::ModelModeMemory, "mi300x.cpx.nps4")}) {
        auto o = amd_only(root.path());
        o.amd_type_naming = naming;
        auto node = discover(o);
        ASSERT_TRUE(node.ok()) << node.error().message;
        EXPECT_EQ(node->gpus[3].partitions[5].type, type);
    }
}

// TypeNaming=slurm: gpu/rsmi registers whole GPUs by their lower-cased name; every XCP of a
// GPU carries it, so --gres=gpu:mi300x:N still asks for N partitions. AmdTypeNaming is unused.
TEST(AmdDiscovery, SlurmTypeNamingGivesEveryXcpTheGpuName) {
    TempRoot root;
    testing::build_spec_file(root, "mi300x-cpx-8gpu");
    auto o = amd_only(root.path());
    o.type_naming = TypeNaming::Slurm;
    o.amd_type_naming = AmdTypeNaming::ModelModeMemory;
    auto node = discover(o);
    ASSERT_TRUE(node.ok()) << node.error().message;
    ASSERT_EQ(node->gpus.size(), 8u);
    for (const Gpu& g : node->gpus) {
        ASSERT_EQ(g.model, "MI300X");
        ASSERT_EQ(g.partitions.size(), 8u);  // CPX: one per XCC
        for (const Partition& p : g.partitions) EXPECT_EQ(p.type, "mi300x");
    }
}

// The capture's GPU that lost a partition: simulated, reported as found, with a warning.
TEST(AmdDiscovery, MissingPartitionIsWarnedNotInvented) {
    TempRoot root;
    testing::build_spec_text(root, R"({"name":"n","cpus":"0-7","amd":{"gpus":[
        {"model":"MI300X","unique_id":7,"pci_bus_id":"0000:e5:00.0","compute_partition":"CPX",
         "partitions_present":7,"pci_attributes":false}]}})");
    auto node = discover(amd_only(root.path()));
    ASSERT_TRUE(node.ok()) << node.error().message;
    ASSERT_EQ(node->gpus.size(), 1u);
    EXPECT_EQ(node->gpus[0].mode, PartitionMode::Cpx);
    EXPECT_EQ(node->gpus[0].partitions.size(), 7u);
    ASSERT_EQ(node->warnings.size(), 1u);
    EXPECT_EQ(node->warnings[0],
              "GPU 0 (0000:e5:00.0, GPU-0000000000000007): KFD shows 7 of the 8 partitions of "
              "cpx mode; only those are reported");
}

// ---- Real captures (tests/fixtures/real/kfd). They are part of the test data: absence is
// a failure, not a skip.
std::string capture_dir(const std::string& name) {
    const char* fixtures = std::getenv("XPART_FIXTURES");
    if (!fixtures || !*fixtures) return {};
    std::string dir = std::string(fixtures) + "/kfd/" + name;
    struct stat st;
    return ::stat(dir.c_str(), &st) == 0 ? dir : std::string();
}

// A root whose KFD topology is the capture: `topology` links to it (the MI210 capture holds
// `nodes/` at its top, the MI300X one `topology/nodes/`), plus /proc/devices with kfd and the
// NUMA nodes' CPU lists.
void capture_root(const TempRoot& root, const std::string& topology) {
    root.write("/sys/class/kfd/kfd/.keep", "");
    root.symlink("/sys/class/kfd/kfd/topology", topology);
    root.write("/proc/devices", "Character devices:\n226 drm\n234 kfd\n\nBlock devices:\n  8 sd\n");
    root.write("/sys/devices/system/node/node0/cpulist", "0-95\n");
    root.write("/sys/devices/system/node/node1/cpulist", "96-191\n");
}

TEST(AmdCapture, Mi300xCpx63Xcps) {
    const std::string dir = capture_dir("mi300x-cpx-8gpu");
    ASSERT_FALSE(dir.empty()) << "real KFD capture missing: $XPART_FIXTURES/kfd/"
                                 "mi300x-cpx-8gpu (XPART_FIXTURES='"
                              << (std::getenv("XPART_FIXTURES") ? std::getenv("XPART_FIXTURES") : "")
                              << "'; run through make check)";
    TempRoot root;
    capture_root(root, dir + "/topology");
    auto node = discover(amd_only(root.path()));
    ASSERT_TRUE(node.ok()) << node.error().message;
    ASSERT_EQ(node->gpus.size(), 8u);
    EXPECT_EQ(node->partition_count(), 63u);
    std::set<std::string> renders;
    for (const Gpu& g : node->gpus) {
        EXPECT_EQ(g.mode, PartitionMode::Cpx) << g.pci_bus_id;  // inferred: no PCI attributes
        EXPECT_EQ(g.memory_mode, "");
        EXPECT_EQ(g.model, "MI300X");
        for (const Partition& p : g.partitions) {
            EXPECT_EQ(p.type, "cpx");
            EXPECT_EQ(p.compute_units, 38u);
            EXPECT_EQ(p.device_files[1], (DeviceFile{"/dev/kfd", 234, 0, true}));
            renders.insert(p.device_files[0].path);
        }
    }
    EXPECT_EQ(renders.size(), 63u);
    EXPECT_EQ(node->gpus[7].pci_bus_id, "0000:e5:00.0");
    EXPECT_EQ(node->gpus[7].partitions.size(), 7u);
    ASSERT_EQ(node->warnings.size(), 1u);
    EXPECT_NE(node->warnings[0].find("GPU 7 (0000:e5:00.0, GPU-dd197ad1b50577f6)"), std::string::npos)
        << node->warnings[0];
    EXPECT_NE(node->warnings[0].find("7 of the 8 partitions"), std::string::npos);
    // Numeric node order: GPU 1 is KFD nodes 10..17 (a lexical sort would put 10 before 2).
    EXPECT_EQ(node->gpus[0].partitions[0].kfd_node, 2);
    EXPECT_EQ(node->gpus[1].partitions[0].kfd_node, 10);
    EXPECT_EQ(node->gpus[1].partitions[7].kfd_node, 17);
    // NUMA from the KFD io_link to the CPU node; CPUs from that node's cpulist.
    EXPECT_EQ(node->gpus[0].numa_node, 0);
    EXPECT_EQ(node->gpus[4].numa_node, 1);
    EXPECT_EQ(format_cpu_list(node->gpus[4].cpus), "96-191");
}

TEST(AmdCapture, Mi210EightFullGpus) {
    const std::string dir = capture_dir("mi210-8gpu-xgmi");
    ASSERT_FALSE(dir.empty()) << "real KFD capture missing: $XPART_FIXTURES/kfd/"
                                 "mi210-8gpu-xgmi (run through make check)";
    TempRoot root;
    capture_root(root, dir);
    auto node = discover(amd_only(root.path()));
    ASSERT_TRUE(node.ok()) << node.error().message;
    ASSERT_EQ(node->gpus.size(), 8u);
    EXPECT_TRUE(node->warnings.empty());
    for (const Gpu& g : node->gpus) {
        EXPECT_EQ(g.mode, PartitionMode::Full);
        EXPECT_EQ(g.model, "MI210");
        ASSERT_EQ(g.partitions.size(), 1u);
        EXPECT_EQ(g.partitions[0].type, "mi210");
        EXPECT_EQ(g.partitions[0].index, 0);
        EXPECT_EQ(g.partitions[0].compute_units, 104u);
    }
    // GPU index follows the PCI bus, not KFD order: bus 0x03 is KFD node 4.
    EXPECT_EQ(node->gpus[0].pci_bus_id, "0000:03:00.0");
    EXPECT_EQ(node->gpus[0].partitions[0].kfd_node, 4);
    EXPECT_EQ(node->gpus[0].minor, 130);
    EXPECT_EQ(node->gpus[7].pci_bus_id, "0000:e3:00.0");
}

}  // namespace
}  // namespace xpart
