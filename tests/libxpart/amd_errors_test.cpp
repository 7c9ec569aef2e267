// AMD discovery on broken nodes: every malformed file or link is one error line naming it, and
// nothing is guessed. Each case breaks one thing of a small simulated MI300X in DPX.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <functional>

#include "libxpart/discovery.hpp"
#include "libxpart/text.hpp"
#include "tests/libxpart/amd_temp_root.hpp"

namespace xpart {
namespace {

using testing::TempRoot;

// KFD node 0: the CPU; nodes 1 and 2: the two partitions of the GPU at 0000:05:00.0.
constexpr const char* kDpxSpec = R"({"name":"dpx","cpus":"0-15","amd":{"gpus":[
    {"model":"MI300X","unique_id":42,"pci_bus_id":"0000:05:00.0","compute_partition":"DPX",
     "memory_partition":"NPS1","xcp_naming":"dot"}]}})";
const std::string kNodes = "/sys/class/kfd/kfd/topology/nodes";
const std::string kPci = "/sys/bus/pci/devices/0000:05:00.0";

Result<Node> discover_in(const TempRoot& root) {
    DiscoveryOptions o;
    o.root = RootFs(root.path());
    o.nvidia = false;
    return discover(o);
}

std::string without_root(std::string msg, const std::string& root) {
    for (std::size_t at; (at = msg.find(root)) != std::string::npos;) msg.replace(at, root.size(), "<root>");
    return msg;
}

struct BrokenNode {
    const char* name;
    std::function<void(const TempRoot&)> breakit;
    const char* message;
};

void no_attributes(const TempRoot& r) {
    for (const char* f : {"current_compute_partition", "available_compute_partition",
                          "current_memory_partition", "available_memory_partition"})
        r.remove(kPci + "/" + f);
}

class AmdBrokenNodeTest : public ::testing::TestWithParam<BrokenNode> {};

TEST_P(AmdBrokenNodeTest, FailsWithOneLineNamingTheFile) {
    TempRoot root;
    testing::build_spec_text(root, kDpxSpec);
    GetParam().breakit(root);
    auto node = discover_in(root);
    ASSERT_FALSE(node.ok()) << "discovered " << node->partition_count() << " partitions";
    EXPECT_EQ(without_root(node.error().message, root.path()), GetParam().message);
}

const BrokenNode kBroken[] = {
    {"PropertiesLineWithoutValue",
     [](const TempRoot& r) { r.replace(kNodes + "/1/properties", "mem_banks_count 1", "mem_banks_count"); },
     "<root>/sys/class/kfd/kfd/topology/nodes/1/properties:3: expected 'key value', got "
     "'mem_banks_count'"},
    {"PropertiesBadNumber",
     [](const TempRoot& r) { r.replace(kNodes + "/2/properties", "simd_count 608", "simd_count 6O8"); },
     "<root>/sys/class/kfd/kfd/topology/nodes/2/properties:2: simd_count: expected a decimal "
     "number, got '6O8'"},
    {"PropertiesNegativeNumber",
     [](const TempRoot& r) { r.replace(kNodes + "/0/properties", "simd_count 0", "simd_count -1"); },
     "<root>/sys/class/kfd/kfd/topology/nodes/0/properties:2: simd_count: expected a decimal "
     "number, got '-1'"},
    {"MemBankBadNumber",
     [](const TempRoot& r) {
         r.replace(kNodes + "/1/mem_banks/0/properties", "width 8192", "width 0x2000");
     },
     "<root>/sys/class/kfd/kfd/topology/nodes/1/mem_banks/0/properties:4: width: expected a "
     "decimal number, got '0x2000'"},
    {"GpuIdNotANumber",
     [](const TempRoot& r) { r.write(kNodes + "/1/gpu_id", "abc\n"); },
     "<root>/sys/class/kfd/kfd/topology/nodes/1/gpu_id:1: expected a decimal number, got 'abc'"},
    {"NodeDirectoryNotANumber",
     [](const TempRoot& r) { r.write(kNodes + "/x1/properties", ""); },
     "<root>/sys/class/kfd/kfd/topology/nodes: unexpected entry 'x1' (KFD node directories are "
     "numbers)"},
    {"RenderLinkToAnotherDevice",
     [](const TempRoot& r) {
         r.symlink("/sys/devices/platform/amdgpu_xcp.0/drm/renderD129/device", "../../../nvme0");
     },
     "<root>/sys/class/drm/renderD129/device: points to '../../../nvme0', expected a platform "
     "device amdgpu_xcp.N or amdgpu_xcp_N (partition 1 of 0000:05:00.0)"},
    {"RenderLinkOfPartition0ToAnXcp",
     [](const TempRoot& r) {
         r.symlink("/sys/devices/pci0000:05/0000:05:00.0/drm/renderD128/device",
                   "../../../amdgpu_xcp.3");
     },
     "<root>/sys/class/drm/renderD128/device: points to '../../../amdgpu_xcp.3', expected the "
     "GPU's PCI device 0000:05:00.0 (partition 0)"},
    {"RenderLinkToAnotherGpu",
     [](const TempRoot& r) {
         r.symlink("/sys/devices/pci0000:05/0000:05:00.0/drm/renderD128/device",
                   "../../../0000:26:00.0");
     },
     "<root>/sys/class/drm/renderD128/device: points to '../../../0000:26:00.0', expected the "
     "GPU's PCI device 0000:05:00.0 (partition 0)"},
    {"UnreadableComputePartition",  // a read that fails (EPERM during a reset, here EISDIR)
     [](const TempRoot& r) {
         r.remove(kPci + "/current_compute_partition");
         ::mkdir(r.host(kPci + "/current_compute_partition").c_str(), 0755);
     },
     "<root>/sys/bus/pci/devices/0000:05:00.0/current_compute_partition: Is a directory (while "
     "reading a GPU partition attribute)"},
    {"UnknownComputePartition",
     [](const TempRoot& r) { r.write(kPci + "/current_compute_partition", "XPX\n"); },
     "<root>/sys/bus/pci/devices/0000:05:00.0/current_compute_partition:1: expected SPX, DPX, "
     "TPX, QPX or CPX, got 'XPX'"},
    {"UnknownMemoryPartition",
     [](const TempRoot& r) { r.write(kPci + "/current_memory_partition", "NPS3\n"); },
     "<root>/sys/bus/pci/devices/0000:05:00.0/current_memory_partition:1: expected NPS1, NPS2, "
     "NPS4 or NPS8, got 'NPS3'"},
    {"MoreNodesThanTheModeMakes",
     [](const TempRoot& r) { r.write(kPci + "/current_compute_partition", "SPX\n"); },
     "<root>/sys/class/kfd/kfd/topology/nodes/1/properties: GPU 0 (0000:05:00.0, "
     "GPU-000000000000002a) has 2 KFD nodes, but spx mode makes 1"},
    {"BadNumaNode",
     [](const TempRoot& r) { r.write(kPci + "/numa_node", "zero\n"); },
     "<root>/sys/bus/pci/devices/0000:05:00.0/numa_node:1: expected a NUMA node number or -1, "
     "got 'zero'"},
    {"BadLocalCpuList",
     [](const TempRoot& r) { r.write(kPci + "/local_cpulist", "0-x\n"); },
     "<root>/sys/bus/pci/devices/0000:05:00.0/local_cpulist:1: invalid CPU list '0-x' at '0-x'"},
    {"NoKfdMajor",
     [](const TempRoot& r) {
         r.write("/proc/devices", "Character devices:\n226 drm\n\nBlock devices:\n  8 sd\n");
         r.remove("/dev/kfd");
     },
     "<root>/proc/devices: no character device driver 'kfd', and <root>/dev/kfd is not a "
     "character device: cannot name /dev/kfd's major"},
    {"XccCountNotDividingTheModel",
     [](const TempRoot& r) {
         no_attributes(r);
         r.replace(kNodes + "/1/properties", "num_xcc 4", "num_xcc 3");
         r.replace(kNodes + "/2/properties", "num_xcc 4", "num_xcc 3");
     },
     "<root>/sys/class/kfd/kfd/topology/nodes/1/properties: num_xcc 3 does not divide the 8 "
     "XCCs of an MI300X"},
    {"XccCountDiffersWithinAGpu",
     [](const TempRoot& r) { r.replace(kNodes + "/2/properties", "num_xcc 4", "num_xcc 2"); },
     "<root>/sys/class/kfd/kfd/topology/nodes/2/properties: num_xcc 2 differs from 4 of node 1 "
     "of the same GPU"},
    {"TwoNodesClaimOnePartition",
     [](const TempRoot& r) { r.replace(kNodes + "/2/properties", "location_id 1281", "location_id 1280"); },
     "<root>/sys/class/kfd/kfd/topology/nodes/2/properties: GPU 0 (0000:05:00.0, "
     "GPU-000000000000002a): KFD nodes 1 and 2 both claim partition 0"},
    {"UniqueIdOnTwoBuses",
     [](const TempRoot& r) { r.replace(kNodes + "/2/properties", "location_id 1281", "location_id 9729"); },
     "<root>/sys/class/kfd/kfd/topology/nodes/2/properties: KFD node 2 shares unique_id 42 with "
     "node 1 but sits on another PCI bus"},
    {"RenderMinorOutOfRange",
     [](const TempRoot& r) {
         r.replace(kNodes + "/1/properties", "drm_render_minor 128", "drm_render_minor 0");
     },
     "<root>/sys/class/kfd/kfd/topology/nodes/1/properties: drm_render_minor 0 is not a render "
     "node minor (128 or more)"},
};

INSTANTIATE_TEST_SUITE_P(Amd, AmdBrokenNodeTest, ::testing::ValuesIn(kBroken),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- Fallbacks that must work (each one's absence is a case above).

TEST(AmdFallback, KfdMajorFromDevKfdWhenProcDevicesLacksIt) {
    TempRoot root;
    testing::build_spec_text(root, kDpxSpec);
    root.write("/proc/devices", "Character devices:\n226 drm\n\nBlock devices:\n  8 sd\n");
    auto node = discover_in(root);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->gpus[0].partitions[1].device_files[1], (DeviceFile{"/dev/kfd", 511, 0, true}));
}

TEST(AmdFallback, ModeInferredAndNumaFromKfdLinkWithoutPciAttributes) {
    TempRoot root;
    testing::build_spec_text(root, R"({"name":"n","cpus":"0-15",
        "numa":[{"node":0,"cpus":"0-7"},{"node":1,"cpus":"8-15"}],"amd":{"gpus":[
        {"model":"MI300X","unique_id":42,"pci_bus_id":"0000:85:00.0","numa_node":1,
         "compute_partition":"QPX","pci_attributes":false}]}})");
    root.remove("/sys/bus/pci/devices/0000:85:00.0/numa_node");
    auto node = discover_in(root);
    ASSERT_TRUE(node.ok()) << node.error().message;
    const Gpu& g = node->gpus[0];
    EXPECT_EQ(g.mode, PartitionMode::Qpx);
    EXPECT_EQ(g.memory_mode, "");
    EXPECT_EQ(g.partitions.size(), 4u);
    EXPECT_EQ(g.partitions[3].compute_units, 76u);
    EXPECT_EQ(g.numa_node, 1);
    EXPECT_EQ(format_cpu_list(g.cpus), "8-15");
}

TEST(AmdFallback, NumaMinusOneFallsBackToKfdLink) {
    TempRoot root;
    testing::build_spec_text(root, kDpxSpec);
    root.write(kPci + "/numa_node", "-1\n");
    auto node = discover_in(root);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->gpus[0].numa_node, 0);
    EXPECT_EQ(format_cpu_list(node->gpus[0].cpus), "0-15");
}

TEST(AmdFallback, GroupsByBusWhenUniqueIdIsZero) {
    TempRoot root;
    testing::build_spec_text(root, kDpxSpec);
    for (const char* n : {"/1/properties", "/2/properties"})
        root.replace(kNodes + n, "unique_id 42", "unique_id 0");
    auto node = discover_in(root);
    ASSERT_TRUE(node.ok()) << node.error().message;
    ASSERT_EQ(node->gpus.size(), 1u);
    EXPECT_EQ(node->gpus[0].partitions.size(), 2u);
    EXPECT_EQ(node->gpus[0].uuid, "");
}

TEST(AmdFallback, GpuIdZeroMarksACpuNode) {
    TempRoot root;
    testing::build_spec_text(root, kDpxSpec);
    root.write(kNodes + "/2/gpu_id", "0\n");
    auto node = discover_in(root);
    ASSERT_TRUE(node.ok()) << node.error().message;
    ASSERT_EQ(node->gpus[0].partitions.size(), 1u);
    EXPECT_EQ(node->warnings.size(), 1u);
}

TEST(AmdFallback, NoKfdTopologyMeansNoAmdGpus) {
    TempRoot root;
    root.write("/proc/devices", "Character devices:\n226 drm\n");
    auto node = discover_in(root);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_TRUE(node->gpus.empty());
}

// ---- XCPs without a render node (a mode switch the kernel or udev did not finish): each is
// one warning and left out, the GPU's others are registered; none left leaves the GPU out.
struct RenderlessCase {
    const char* name;
    std::function<void(const TempRoot&)> breakit;
    std::vector<int> kept_kfd_nodes;
    std::vector<std::string> warnings;
};

const std::string kGpu = "GPU 0 (0000:05:00.0, GPU-000000000000002a)";
const RenderlessCase kRenderless[] = {
    {"NoRenderMinorInKfd",
     [](const TempRoot& r) { r.replace(kNodes + "/2/properties", "drm_render_minor 129\n", ""); },
     {1},
     {kGpu + ": partition 1 (KFD node 2) has no render node (<root>" + kNodes +
      "/2/properties: no drm_render_minor); not registered, the others are"}},
    {"RenderFileMissingInDev",
     [](const TempRoot& r) { r.remove("/dev/dri/renderD128"); },
     {2},
     {kGpu + ": partition 0 (KFD node 1) has no render node (<root>/dev/dri/renderD128 is "
             "missing); not registered, the others are"}},
    {"NoneLeft",
     [](const TempRoot& r) {
         r.remove("/dev/dri/renderD128");
         r.remove("/dev/dri/renderD129");
     },
     {},
     {kGpu + ": partition 0 (KFD node 1) has no render node (<root>/dev/dri/renderD128 is "
             "missing); not registered, the others are",
      kGpu + ": partition 1 (KFD node 2) has no render node (<root>/dev/dri/renderD129 is "
             "missing); not registered, the others are",
      kGpu + ": no partition has a render node; the GPU is not registered"}},
};

class AmdRenderlessTest : public ::testing::TestWithParam<RenderlessCase> {};

TEST_P(AmdRenderlessTest, LeftOutWithOneLineEach) {
    const RenderlessCase& c = GetParam();
    TempRoot root;
    testing::build_spec_text(root, kDpxSpec);
    c.breakit(root);
    auto node = discover_in(root);
    ASSERT_TRUE(node.ok()) << node.error().message;
    std::vector<int> kept;
    for (const Gpu& g : node->gpus)
        for (const Partition& p : g.partitions) kept.push_back(p.kfd_node);
    EXPECT_EQ(kept, c.kept_kfd_nodes);
    std::vector<std::string> warnings;
    for (const auto& w : node->warnings) warnings.push_back(without_root(w, root.path()));
    EXPECT_EQ(warnings, c.warnings);
}

INSTANTIATE_TEST_SUITE_P(Amd, AmdRenderlessTest, ::testing::ValuesIn(kRenderless),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace xpart
