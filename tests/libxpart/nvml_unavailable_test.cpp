// NVML that cannot be loaded or initialised: an error only where the node has NVIDIA GPUs
// (seen by the kernel, with or without the driver), one line naming the library and the
// code, and the other vendor's GPUs still discovered. NVML itself is the fake one here, made
// to fail; tests/cli/real_nvml_test does the same with NVIDIA's real library.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "libxpart/discovery.hpp"
#include "libxpart/nvidia/nvidia_presence.hpp"
#include "tests/nvidia_sim_root.hpp"

namespace xpart {
namespace {

using testing::ScopedEnv;
using testing::SimRoot;

// One H100 in MIG (2 x 1g.10gb) and one MI300X in SPX.
std::string mixed_vendor_spec() {
    return testing::read_text(testing::source_dir() + "/tests/fixtures/mixed-vendor.json");
}

std::string not_discovered(const SimRoot& r, const std::string& why) {
    return "NVML " + r.nvml_library() + ": nvmlInit_v2: " + why + ": NVIDIA GPUs not discovered";
}

TEST(NvmlUnavailable, InitFailureIsOneLineAndTheAmdGpuIsStillDiscovered) {
    SimRoot r(mixed_vendor_spec());
    ASSERT_EQ(r.error(), "");
    DiscoveryOptions o = r.discovery_options();
    o.amd = true;
    o.tolerate_nvml_failure = true;
    ScopedEnv faults("XPART_SIM_NVML_FAULTS", "nvmlInit_v2=9");
    auto node = discover(o);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->errors, std::vector<std::string>{not_discovered(
                                r, "NVML_ERROR_DRIVER_NOT_LOADED (9) \"Driver Not Loaded\"")});
    ASSERT_EQ(node->gpus.size(), 1u);
    EXPECT_EQ(node->gpus[0].vendor, Vendor::Amd);
    EXPECT_EQ(node->partition_count(), 1u);
}

TEST(NvmlUnavailable, WithoutToleranceTheSameLineIsTheError) {
    SimRoot r(mixed_vendor_spec());
    ASSERT_EQ(r.error(), "");
    DiscoveryOptions o = r.discovery_options();
    o.amd = true;
    ScopedEnv faults("XPART_SIM_NVML_FAULTS", "nvmlInit_v2=999");
    auto node = discover(o);
    ASSERT_FALSE(node.ok());
    EXPECT_EQ(node.error().message, not_discovered(r, "NVML_ERROR_UNKNOWN (999) \"Unknown Error\""));
}

TEST(NvmlUnavailable, WorkingNvmlOnTheMixedNodeFindsBothVendors) {
    SimRoot r(mixed_vendor_spec());
    ASSERT_EQ(r.error(), "");
    DiscoveryOptions o = r.discovery_options();
    o.amd = true;
    o.tolerate_nvml_failure = true;
    auto node = discover(o);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_TRUE(node->errors.empty());
    EXPECT_EQ(node->partition_count(), 3u);
}

// A driver that failed to load leaves no /proc/driver/nvidia and no /dev/nvidia*: only the PCI
// devices say the GPUs are there.
TEST(NvmlUnavailable, DriverNotLoadedIsSeenFromPciDevicesAlone) {
    SimRoot r(testing::read_text(testing::spec_file("h100-80gb")));
    ASSERT_EQ(r.error(), "");
    std::filesystem::remove_all(r.host("/proc/driver/nvidia"));
    DiscoveryOptions o = r.discovery_options();
    o.tolerate_nvml_failure = true;
    ScopedEnv faults("XPART_SIM_NVML_FAULTS", "nvmlInit_v2=9");
    auto node = discover(o);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_TRUE(node->gpus.empty());
    EXPECT_EQ(node->errors, std::vector<std::string>{not_discovered(
                                r, "NVML_ERROR_DRIVER_NOT_LOADED (9) \"Driver Not Loaded\"")});
}

TEST(NvmlUnavailable, MissingLibraryOnAnNvidiaNodeIsOneLineToo) {
    SimRoot r(mixed_vendor_spec());
    ASSERT_EQ(r.error(), "");
    DiscoveryOptions o = r.discovery_options();
    o.amd = true;
    o.tolerate_nvml_failure = true;
    o.nvml_library = r.root() + "/nonexistent/libnvidia-ml.so.1";
    auto node = discover(o);
    ASSERT_TRUE(node.ok()) << node.error().message;
    ASSERT_EQ(node->errors.size(), 1u);
    EXPECT_EQ(node->errors[0].rfind("NVML library '" + o.nvml_library + "' could not be loaded: ", 0), 0u)
        << node->errors[0];
    EXPECT_NE(node->errors[0].find(": NVIDIA GPUs not discovered"), std::string::npos);
    EXPECT_EQ(node->partition_count(), 1u);
}

// An AMD node with libnvidia-ml installed: NVML is not asked, so its failure cannot show.
TEST(NvmlUnavailable, NodeWithoutNvidiaGpusNeverAsksNvml) {
    SimRoot r(testing::read_text(testing::spec_file("mi300x-spx")));
    ASSERT_EQ(r.error(), "");
    DiscoveryOptions o;
    o.root = RootFs(r.root());
    o.tolerate_nvml_failure = true;
    o.nvml_library = r.root() + "/nonexistent/libnvidia-ml.so.1";  // an error if loaded
    auto node = discover(o);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_TRUE(node->errors.empty());
    EXPECT_EQ(node->partition_count(), 8u);
}

// --- has_nvidia_gpus on hand-made PCI devices -------------------------------------------------

class PciRoot {
public:
    PciRoot() {
        char tmpl[] = "/tmp/xpart-pci-XXXXXX";
        if (::mkdtemp(tmpl)) dir_ = tmpl;
    }
    ~PciRoot() { std::filesystem::remove_all(dir_); }
    // A device with these files; an empty value leaves the file out.
    void add(const std::string& bdf, const std::string& vendor, const std::string& pci_class) const {
        const std::string dev = dir_ + "/sys/bus/pci/devices/" + bdf;
        std::filesystem::create_directories(dev);
        if (!vendor.empty()) testing::write_text(dev + "/vendor", vendor + "\n");
        if (!pci_class.empty()) testing::write_text(dev + "/class", pci_class + "\n");
    }
    RootFs root() const { return RootFs(dir_); }

private:
    std::string dir_;
};

TEST(NvidiaPresence, EmptyNodeHasNone) {
    PciRoot p;
    EXPECT_FALSE(has_nvidia_gpus(p.root()));
}

TEST(NvidiaPresence, NvSwitchAndOtherVendorsAreNotNvidiaGpus) {
    PciRoot p;
    p.add("0000:c1:00.0", "0x10de", "0x068000");  // NVSwitch: a bridge
    p.add("0000:05:00.0", "0x1002", "0x030200");  // AMD 3D controller
    p.add("0000:00:1f.3", "0x8086", "0x040300");  // audio
    EXPECT_FALSE(has_nvidia_gpus(p.root()));
}

TEST(NvidiaPresence, Nvidia3dControllerOrVgaIsAGpu) {
    for (const char* pci_class : {"0x030200", "0x030000"}) {
        PciRoot p;
        p.add("0000:07:00.0", "0x10DE", pci_class);
        EXPECT_TRUE(has_nvidia_gpus(p.root())) << pci_class;
    }
}

TEST(NvidiaPresence, UnreadableClassOfAnNvidiaDeviceCounts) {
    PciRoot p;
    p.add("0000:07:00.0", "0x10de", "");
    EXPECT_TRUE(has_nvidia_gpus(p.root()));
    PciRoot q;
    q.add("0000:07:00.0", "0x10de", "not-hex");
    EXPECT_TRUE(has_nvidia_gpus(q.root()));
}

TEST(NvidiaPresence, DriverGpuDirectoryAloneIsAGpu) {
    PciRoot p;
    std::filesystem::create_directories(p.root().host_path("/proc/driver/nvidia/gpus/0000:07:00.0"));
    EXPECT_TRUE(has_nvidia_gpus(p.root()));
}

}  // namespace
}  // namespace xpart
