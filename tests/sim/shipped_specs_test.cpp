// Every spec shipped in sim/specs builds a tree, and the NIC nodes put each GPU and NIC where
// their comments say: behind the right switch, root port and root complex.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "libxpart/root_fs.hpp"
#include "sim/nvidia_model.hpp"
#include "tests/sim/tree_links.hpp"

namespace xpart::sim {
namespace {

using xpart::testing::resolved;
using xpart::testing::TempRoot;

std::string parent(const std::string& path) { return path.substr(0, path.rfind('/')); }

TEST(ShippedSpecs, EveryOneBuildsATree) {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(testing::srcdir() + "/sim/specs"))
        if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
    std::sort(names.begin(), names.end());
    for (const char* expected : {"a100-guide", "dgx-a100-nic", "mi300x-cpx-8gpu", "mi300x-nic"})
        EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
    for (const std::string& name : names) {
        TempRoot root;
        EXPECT_NO_THROW(testing::build_spec_file(root, name)) << name;
        EXPECT_EQ(root.read("/.xpart-sim-root"), name + "\n") << name << ": the spec's name is its file's";
    }
}

// dgx-a100-nic: downstream port k of a switch leads to its k-th device in bus order.
TEST(ShippedSpecs, DgxA100NicPlacesGpusAndNicsBehindTheirSwitches) {
    TempRoot root;
    testing::build_spec_file(root, "dgx-a100-nic");
    const std::string s0 = "/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/";
    const std::string s1 = "/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0/";
    const std::string s2 = "/sys/devices/pci0000:80/0000:80:01.1/0000:81:00.0/";
    const std::string s3 = "/sys/devices/pci0000:b0/0000:b0:01.1/0000:b1:00.0/";
    const std::vector<std::pair<std::string, std::string>> placed = {
        {"0000:07:00.0", s0 + "0000:02:00.0/0000:07:00.0"}, {"0000:0c:00.0", s0 + "0000:02:01.0/0000:0c:00.0"},
        {"0000:0f:00.0", s0 + "0000:02:02.0/0000:0f:00.0"}, {"0000:12:00.0", s0 + "0000:02:03.0/0000:12:00.0"},
        {"0000:47:00.0", s1 + "0000:42:00.0/0000:47:00.0"}, {"0000:4b:00.0", s1 + "0000:42:01.0/0000:4b:00.0"},
        {"0000:4e:00.0", s1 + "0000:42:02.0/0000:4e:00.0"}, {"0000:54:00.0", s1 + "0000:42:03.0/0000:54:00.0"},
        {"0000:87:00.0", s2 + "0000:82:00.0/0000:87:00.0"}, {"0000:8d:00.0", s2 + "0000:82:01.0/0000:8d:00.0"},
        {"0000:90:00.0", s2 + "0000:82:02.0/0000:90:00.0"}, {"0000:94:00.0", s2 + "0000:82:03.0/0000:94:00.0"},
        {"0000:b7:00.0", s3 + "0000:b2:00.0/0000:b7:00.0"}, {"0000:ba:00.0", s3 + "0000:b2:01.0/0000:ba:00.0"},
        {"0000:bd:00.0", s3 + "0000:b2:02.0/0000:bd:00.0"}, {"0000:cc:00.0", s3 + "0000:b2:03.0/0000:cc:00.0"},
        {"0000:61:00.0", "/sys/devices/pci0000:61/0000:61:00.0"},
        {"0000:e1:00.0", "/sys/devices/pci0000:e1/0000:e1:00.0"}};
    for (const auto& [bus_id, dir] : placed)
        EXPECT_EQ(resolved(root, "/sys/bus/pci/devices/" + bus_id), dir) << bus_id;
    struct Nic {
        const char* name;
        const char* bus_id;
        const char* link_layer;
        const char* numa_node;
    };
    for (const Nic& n : {Nic{"mlx5_0", "0000:0c:00.0", "InfiniBand", "0"}, Nic{"mlx5_3", "0000:54:00.0", "InfiniBand", "0"},
                         Nic{"mlx5_4", "0000:61:00.0", "Ethernet", "0"}, Nic{"mlx5_6", "0000:8d:00.0", "InfiniBand", "1"},
                         Nic{"mlx5_9", "0000:cc:00.0", "InfiniBand", "1"}, Nic{"mlx5_10", "0000:e1:00.0", "Ethernet", "1"}}) {
        const std::string dev = std::string("/sys/class/infiniband/") + n.name;
        EXPECT_EQ(resolved(root, dev + "/device"), resolved(root, std::string("/sys/bus/pci/devices/") + n.bus_id));
        EXPECT_EQ(root.read(dev + "/ports/1/state"), "4: ACTIVE\n") << n.name;
        EXPECT_EQ(root.read(dev + "/ports/1/link_layer"), std::string(n.link_layer) + "\n") << n.name;
        EXPECT_EQ(root.read(dev + "/device/numa_node"), std::string(n.numa_node) + "\n") << n.name;
    }
    auto names = RootFs(root.path()).list("/sys/class/infiniband");
    ASSERT_TRUE(names.ok());
    EXPECT_EQ(names->size(), 10u);
}

// Each GPU: six 1g.5gb at 0..5 and one 1g.10gb at 6, so 7 MIG devices and one profile once.
TEST(ShippedSpecs, DgxA100NicGeometry) {
    auto spec = load_spec(testing::srcdir() + "/sim/specs/dgx-a100-nic.json");
    ASSERT_TRUE(spec.ok()) << spec.error().message;
    ASSERT_EQ(spec->nvidia.gpus.size(), 8u);
    for (const NvidiaGpuSpec& g : spec->nvidia.gpus) {
        EXPECT_EQ(g.mig, MigState::Enabled) << g.pci_bus_id;
        EXPECT_EQ(sim_mig_devices(g).size(), 7u) << g.pci_bus_id;
        std::map<std::string, std::vector<unsigned>> starts;
        for (const GpuInstanceSpec& gi : g.instances) starts[gi.profile].push_back(gi.start);
        EXPECT_EQ(starts["1g.5gb"], (std::vector<unsigned>{0, 1, 2, 3, 4, 5})) << g.pci_bus_id;
        EXPECT_EQ(starts["1g.10gb"], (std::vector<unsigned>{6})) << g.pci_bus_id;
        EXPECT_FALSE(g.switch_name.empty()) << g.pci_bus_id;
    }
}

// mi300x-nic: GPU N and mlx5_N hang below the same switch (one upstream port), which is below
// a root complex of their own; the DRM links still lead to the GPU's PCI device.
TEST(ShippedSpecs, Mi300xNicPairsEachGpuWithItsNic) {
    TempRoot root;
    testing::build_spec_file(root, "mi300x-nic");
    const char* gpus[] = {"0000:05:00.0", "0000:26:00.0", "0000:47:00.0", "0000:65:00.0",
                          "0000:85:00.0", "0000:a6:00.0", "0000:c7:00.0", "0000:e5:00.0"};
    std::vector<std::string> complexes;
    for (int i = 0; i < 8; ++i) {
        const std::string gpu = resolved(root, std::string("/sys/bus/pci/devices/") + gpus[i]);
        const std::string nic = resolved(root, "/sys/class/infiniband/mlx5_" + std::to_string(i) + "/device");
        ASSERT_FALSE(gpu.empty()) << gpus[i];
        EXPECT_EQ(parent(parent(gpu)), parent(parent(nic))) << gpus[i] << ": one switch";
        EXPECT_NE(parent(gpu), parent(nic)) << gpus[i] << ": downstream ports of their own";
        EXPECT_EQ(root.read("/sys/class/infiniband/mlx5_" + std::to_string(i) + "/ports/1/link_layer"), "Ethernet\n");
        EXPECT_EQ(root.read(gpu + "/numa_node"), root.read(nic + "/numa_node")) << gpus[i];
        complexes.push_back(gpu.substr(0, gpu.find('/', std::strlen("/sys/devices/"))));
    }
    std::sort(complexes.begin(), complexes.end());
    EXPECT_EQ(std::unique(complexes.begin(), complexes.end()), complexes.end()) << "one root complex each";
    EXPECT_EQ(resolved(root, "/sys/class/drm/renderD128/device"), resolved(root, "/sys/bus/pci/devices/0000:05:00.0"));
    EXPECT_EQ(resolved(root, "/sys/class/drm/renderD128"),
              resolved(root, "/sys/bus/pci/devices/0000:05:00.0") + "/drm/renderD128");
}

}  // namespace
}  // namespace xpart::sim
