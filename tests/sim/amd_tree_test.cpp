// The AMD tree the simulator writes: shaped like the real captures, real device nodes, and
// every spec switch (xcp naming, PCI attributes, partitions present) visible in the files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

#include "libxpart/amd/amd_kfd.hpp"
#include "libxpart/text.hpp"
#include "tests/sim/tree_links.hpp"

namespace xpart::sim {
namespace {

using xpart::testing::link_of;
using xpart::testing::TempRoot;
const std::string kNodes = "/sys/class/kfd/kfd/topology/nodes/";

// Two MI300X in one hive and an MI210 outside it, two NUMA nodes.
constexpr const char* kSpec = R"({"name":"n","cpus":"0-15","majors":{"kfd":237},
  "numa":[{"node":0,"cpus":"0-7"},{"node":1,"cpus":"8-15"}],"amd":{"gpus":[
  {"model":"MI300X","unique_id":11,"pci_bus_id":"0000:85:00.0","numa_node":1,"compute_partition":"CPX",
   "memory_partition":"NPS4","partitions_present":7,"xcp_naming":"underscore","hive_id":77},
  {"model":"MI300X","unique_id":10,"pci_bus_id":"0000:05:00.0","compute_partition":"DPX",
   "pci_attributes":false,"hive_id":77},
  {"model":"MI210","unique_id":12,"pci_bus_id":"0000:c3:00.0","numa_node":1}]}})";

std::vector<std::string> keys_of(const std::string& text) {
    std::vector<std::string> keys;
    for (const auto& line : split(text, '\n'))
        if (!line.empty()) keys.push_back(line.substr(0, line.find(' ')));
    return keys;
}

KfdProperties props(const TempRoot& r, const std::string& node_path) {
    auto p = KfdProperties::parse(r.read(node_path), node_path);
    if (!p) throw std::runtime_error(p.error().message);
    return *p;
}

class AmdTreeTest : public ::testing::Test {
protected:
    void SetUp() override { xpart::testing::build_spec_text(root, kSpec); }
    TempRoot root;
};

// KFD ids: CPU 0,1; 0000:05 DPX -> 2,3; 0000:85 CPX (7 of 8) -> 4..10; 0000:c3 MI210 -> 11.
TEST_F(AmdTreeTest, KfdNodesInPciOrderWithRenderMinorsFrom128) {
    auto names = RootFs(root.path()).list(kNodes);
    ASSERT_TRUE(names.ok());
    EXPECT_EQ(names->size(), 12u);
    for (unsigned id = 0; id < 12; ++id) {
        auto p = props(root, kNodes + std::to_string(id) + "/properties");
        const bool gpu = id >= 2;
        EXPECT_EQ(p.get_or("simd_count", 0) > 0, gpu) << id;
        EXPECT_EQ(trim(root.read(kNodes + std::to_string(id) + "/gpu_id")) != "0", gpu) << id;
        if (gpu) {
            EXPECT_EQ(p.find("drm_render_minor"), 126 + id) << id;
        }
    }
    EXPECT_EQ(props(root, kNodes + "2/properties").find("location_id"), 0x0500u);
    EXPECT_EQ(props(root, kNodes + "3/properties").find("location_id"), 0x0501u);
    EXPECT_EQ(props(root, kNodes + "10/properties").find("location_id"), 0x8506u);
    EXPECT_EQ(props(root, kNodes + "10/properties").find("num_xcc"), 1u);
    EXPECT_EQ(props(root, kNodes + "3/properties").find("num_xcc"), 4u);
    EXPECT_EQ(props(root, kNodes + "11/properties").find("device_id"), 29711u);
    EXPECT_EQ(props(root, kNodes + "11/properties").find("location_id"), 0xc300u);
    EXPECT_EQ(props(root, kNodes + "0/properties").find("cpu_cores_count"), 8u);
}

TEST_F(AmdTreeTest, IoLinksToTheLocalCpuAndWithinTheHive) {
    auto link = [&](unsigned node, unsigned i) {
        return props(root, kNodes + std::to_string(node) + "/io_links/" + std::to_string(i) + "/properties");
    };
    for (unsigned node = 0; node < 12; ++node) {
        auto n = props(root, kNodes + std::to_string(node) + "/properties");
        auto dirs = RootFs(root.path()).list(kNodes + std::to_string(node) + "/io_links");
        ASSERT_TRUE(dirs.ok()) << node;
        EXPECT_EQ(n.find("io_links_count"), dirs->size()) << node;
    }
    EXPECT_EQ(link(2, 0).find("type"), 2u);     // 0000:05 -> NUMA 0
    EXPECT_EQ(link(2, 0).find("node_to"), 0u);
    EXPECT_EQ(link(4, 0).find("node_to"), 1u);  // 0000:85 -> NUMA 1
    EXPECT_EQ(link(4, 0).find("weight"), 20u);
    // Node 2: its sibling 3 (weight 13), then the 7 XCPs of the other hive member (41); not
    // the MI210, which is outside the hive.
    EXPECT_EQ(link(2, 1).find("node_to"), 3u);
    EXPECT_EQ(link(2, 1).find("type"), 11u);
    EXPECT_EQ(link(2, 1).find("weight"), 13u);
    EXPECT_EQ(link(2, 2).find("node_to"), 4u);
    EXPECT_EQ(link(2, 2).find("weight"), 41u);
    EXPECT_EQ(props(root, kNodes + "2/properties").find("io_links_count"), 9u);
    EXPECT_EQ(props(root, kNodes + "11/properties").find("io_links_count"), 1u);
    // CPU node 1: link to CPU 0 (type 1), then its 7 + 1 GPU nodes.
    EXPECT_EQ(link(1, 0).find("type"), 1u);
    EXPECT_EQ(link(1, 1).find("node_to"), 4u);
    EXPECT_EQ(props(root, kNodes + "1/properties").find("io_links_count"), 9u);
}

TEST_F(AmdTreeTest, RenderNodesHangOffPciDeviceOrXcpPlatformDevices) {
    // DPX GPU with the default naming: amdgpu_xcp.0 for its partition 1.
    EXPECT_EQ(link_of(root, "/sys/class/drm/renderD128/device"), "../../../0000:05:00.0");
    EXPECT_EQ(link_of(root, "/sys/class/drm/renderD129/device"), "../../../amdgpu_xcp.0");
    // CPX GPU with the newer naming continues the platform numbering.
    EXPECT_EQ(link_of(root, "/sys/class/drm/renderD130/device"), "../../../0000:85:00.0");
    EXPECT_EQ(link_of(root, "/sys/class/drm/renderD131/device"), "../../../amdgpu_xcp_1");
    EXPECT_EQ(link_of(root, "/sys/class/drm/renderD136/device"), "../../../amdgpu_xcp_6");
    EXPECT_EQ(link_of(root, "/sys/class/drm/renderD137/device"), "../../../0000:c3:00.0");
    EXPECT_EQ(link_of(root, "/sys/class/drm/renderD138/device"), "<none>");
    EXPECT_EQ(trim(root.read("/sys/class/drm/renderD131/dev")), "226:131");
    EXPECT_EQ(link_of(root, "/sys/bus/pci/devices/0000:85:00.0"), "../../../devices/pci0000:85/0000:85:00.0");
}

TEST_F(AmdTreeTest, DeviceNodesAndProcDevices) {
    struct Want { const char* path; unsigned major, minor, mode; };
    for (const Want& w : {Want{"/dev/dri/renderD128", 226, 128, 0666},
                          Want{"/dev/dri/renderD137", 226, 137, 0666},
                          Want{"/dev/dri/card0", 226, 0, 0660}, Want{"/dev/dri/card9", 226, 9, 0660},
                          Want{"/dev/kfd", 237, 0, 0666}}) {
        struct stat st;
        ASSERT_EQ(::stat(root.host(w.path).c_str(), &st), 0) << w.path;
        EXPECT_TRUE(S_ISCHR(st.st_mode)) << w.path;
        EXPECT_EQ(major(st.st_rdev), w.major) << w.path;
        EXPECT_EQ(minor(st.st_rdev), w.minor) << w.path;
        EXPECT_EQ(st.st_mode & 07777, w.mode) << w.path;
    }
    EXPECT_FALSE(RootFs(root.path()).exists("/dev/dri/renderD138"));
    const std::string devices = root.read("/proc/devices");
    EXPECT_NE(devices.find("\n226 drm\n"), std::string::npos) << devices;
    EXPECT_NE(devices.find("\n237 kfd\n"), std::string::npos) << devices;
}

TEST_F(AmdTreeTest, PciPartitionAttributesOnlyWhenAsked) {
    const std::string cpx = "/sys/bus/pci/devices/0000:85:00.0/";
    EXPECT_EQ(root.read(cpx + "current_compute_partition"), "CPX\n");
    EXPECT_EQ(root.read(cpx + "available_compute_partition"), "SPX, DPX, QPX, CPX\n");
    EXPECT_EQ(root.read(cpx + "current_memory_partition"), "NPS4\n");
    EXPECT_EQ(root.read(cpx + "available_memory_partition"), "NPS1, NPS4\n");
    EXPECT_EQ(root.read(cpx + "numa_node"), "1\n");
    EXPECT_EQ(root.read(cpx + "local_cpulist"), "8-15\n");
    RootFs fs(root.path());
    EXPECT_FALSE(fs.exists("/sys/bus/pci/devices/0000:05:00.0/current_compute_partition"));
    EXPECT_FALSE(fs.exists("/sys/bus/pci/devices/0000:c3:00.0/current_compute_partition"));
    EXPECT_TRUE(fs.exists("/sys/bus/pci/devices/0000:05:00.0/numa_node"));
}

// The property keys, in order, are the real ones (MI300X capture: CPU node 0, XCP node 2,
// io_link). The capture is test data: its absence fails the test.
TEST_F(AmdTreeTest, PropertyKeysMatchTheRealCapture) {
    const char* fixtures = std::getenv("XPART_FIXTURES");
    ASSERT_TRUE(fixtures && *fixtures) << "XPART_FIXTURES is not set (run through make check)";
    const std::string cap = std::string(fixtures) + "/kfd/mi300x-cpx-8gpu/topology/nodes/";
    auto capture = [&](const std::string& rel) {
        auto text = RootFs("/").read(cap + rel);
        if (!text) throw std::runtime_error(text.error().message + " (real KFD capture missing)");
        return *text;
    };
    EXPECT_EQ(keys_of(root.read(kNodes + "0/properties")), keys_of(capture("0/properties")));
    EXPECT_EQ(keys_of(root.read(kNodes + "4/properties")), keys_of(capture("2/properties")));
    EXPECT_EQ(keys_of(root.read(kNodes + "4/io_links/0/properties")),
              keys_of(capture("2/io_links/0/properties")));
    EXPECT_EQ(keys_of(root.read("/sys/class/kfd/kfd/topology/system_properties")),
              keys_of(RootFs("/").read(std::string(fixtures) +
                                       "/kfd/mi300x-cpx-8gpu/topology/system_properties")
                          .value()));
}

}  // namespace
}  // namespace xpart::sim
