// The PCIe tree the simulator writes: devices at their real sysfs paths below host bridges,
// root ports and switch ports, relative links from /sys/bus/pci/devices and
// /sys/class/infiniband that resolve there, and the RDMA attributes in the IB core's text.
#include <gtest/gtest.h>

#include <regex>

#include "libxpart/root_fs.hpp"
#include "tests/sim/tree_links.hpp"

namespace xpart::sim {
namespace {

using xpart::testing::link_of;
using xpart::testing::resolved;
using xpart::testing::TempRoot;

// Switch sw0 holds GPUs 07 and 0f and NIC mlx5_0 (downstream ports 02:00.0, 02:01.0 and
// 02:02.0 in bus order); mlx5_1 (RoCE, 2 ports, DOWN) hangs below a host bridge of its own.
constexpr const char* kSpec = R"({"name":"n","cpus":"0-7",
  "numa":[{"node":0,"cpus":"0-3"},{"node":1,"cpus":"4-7"}],
  "pcie_switches":[{"name":"sw0","root_port":"0000:00:01.1","upstream":"0000:01:00.0"}],
  "nics":[{"name":"mlx5_0","pci_bus_id":"0000:0c:00.0","switch":"sw0"},
          {"name":"mlx5_1","pci_bus_id":"0000:61:00.0","numa_node":1,"link_layer":"Ethernet",
           "ports":2,"state":"DOWN"}],
  "nvidia":{"gpus":[
    {"product":"A100-SXM4-40GB","uuid":"GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77","minor":0,
     "pci_bus_id":"0000:0f:00.0","switch":"sw0"},
    {"product":"A100-SXM4-40GB","uuid":"GPU-0aa11ebd-627f-af3f-1a0d-4e1fd92fd7b0","minor":1,
     "pci_bus_id":"0000:07:00.0","switch":"sw0"}]}})";

const std::string kSwitch = "/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0";



class PcieTreeTest : public ::testing::Test {
protected:
    void SetUp() override { xpart::testing::build_spec_text(root, kSpec); }
    TempRoot root;
};

struct Placed {
    const char* bus_id;
    std::string dir;  // under /sys/devices
};

TEST_F(PcieTreeTest, BusLinksAreRelativeAndLeadToTheDevicePaths) {
    for (const Placed& p : {Placed{"0000:00:01.1", "/sys/devices/pci0000:00/0000:00:01.1"},
                            Placed{"0000:01:00.0", kSwitch},
                            Placed{"0000:02:00.0", kSwitch + "/0000:02:00.0"},
                            Placed{"0000:02:01.0", kSwitch + "/0000:02:01.0"},
                            Placed{"0000:02:02.0", kSwitch + "/0000:02:02.0"},
                            Placed{"0000:07:00.0", kSwitch + "/0000:02:00.0/0000:07:00.0"},
                            Placed{"0000:0c:00.0", kSwitch + "/0000:02:01.0/0000:0c:00.0"},
                            Placed{"0000:0f:00.0", kSwitch + "/0000:02:02.0/0000:0f:00.0"},
                            Placed{"0000:61:00.0", "/sys/devices/pci0000:61/0000:61:00.0"}}) {
        const std::string bus = std::string("/sys/bus/pci/devices/") + p.bus_id;
        EXPECT_EQ(link_of(root, bus), "../../.." + p.dir.substr(4)) << p.bus_id;
        EXPECT_EQ(resolved(root, bus), p.dir) << p.bus_id;
        EXPECT_NE(root.read(bus + "/vendor"), "") << p.bus_id;
    }
    auto entries = RootFs(root.path()).list("/sys/bus/pci/devices");
    ASSERT_TRUE(entries.ok());
    EXPECT_EQ(entries->size(), 9u) << "the root port, 4 switch ports, 2 GPUs and 2 NICs";
}

struct Files {
    const char* bus_id;
    const char* vendor;
    const char* device;
    const char* pci_class;
    const char* numa_node;
    const char* local_cpulist;
};

TEST_F(PcieTreeTest, PciFilesOfEachKindOfDevice) {
    for (const Files& f : {Files{"0000:00:01.1", "0x1022", "0x1483", "0x060400", "0", "0-3"},
                           Files{"0000:01:00.0", "0x1000", "0xc010", "0x060400", "0", "0-3"},
                           Files{"0000:02:01.0", "0x1000", "0xc010", "0x060400", "0", "0-3"},
                           Files{"0000:07:00.0", "0x10de", "0x20b0", "0x030200", "0", "0-3"},
                           Files{"0000:0c:00.0", "0x15b3", "0x101b", "0x020700", "0", "0-3"},
                           Files{"0000:61:00.0", "0x15b3", "0x101b", "0x020000", "1", "4-7"}}) {
        const std::string dir = std::string("/sys/bus/pci/devices/") + f.bus_id + "/";
        EXPECT_EQ(root.read(dir + "vendor"), std::string(f.vendor) + "\n") << f.bus_id;
        EXPECT_EQ(root.read(dir + "device"), std::string(f.device) + "\n") << f.bus_id;
        EXPECT_EQ(root.read(dir + "class"), std::string(f.pci_class) + "\n") << f.bus_id;
        EXPECT_EQ(root.read(dir + "numa_node"), std::string(f.numa_node) + "\n") << f.bus_id;
        EXPECT_EQ(root.read(dir + "local_cpulist"), std::string(f.local_cpulist) + "\n") << f.bus_id;
    }
    EXPECT_EQ(root.read("/sys/bus/pci/devices/0000:61:00.0/local_cpus"), "f0\n");
}

struct BridgeBuses {
    const char* bus_id;
    unsigned primary, secondary, subordinate;
};

// hwloc builds the bridge hierarchy from these bytes of `config`, not from the paths.
TEST_F(PcieTreeTest, BridgeConfigSpaceNamesTheBusesBehind) {
    for (const BridgeBuses& b : {BridgeBuses{"0000:00:01.1", 0x00, 0x01, 0x0f},
                                 BridgeBuses{"0000:01:00.0", 0x01, 0x02, 0x0f},
                                 BridgeBuses{"0000:02:00.0", 0x02, 0x07, 0x07},
                                 BridgeBuses{"0000:02:01.0", 0x02, 0x0c, 0x0c},
                                 BridgeBuses{"0000:02:02.0", 0x02, 0x0f, 0x0f}}) {
        const std::string c = root.read(std::string("/sys/bus/pci/devices/") + b.bus_id + "/config");
        ASSERT_EQ(c.size(), 64u) << b.bus_id;
        auto byte = [&](std::size_t i) { return static_cast<unsigned>(static_cast<unsigned char>(c[i])); };
        EXPECT_EQ(byte(0x0e), 1u) << b.bus_id << ": header type 1 (bridge)";
        EXPECT_EQ(byte(0x0b) << 16 | byte(0x0a) << 8 | byte(0x09), 0x060400u) << b.bus_id;
        EXPECT_EQ(byte(0x18), b.primary) << b.bus_id;
        EXPECT_EQ(byte(0x19), b.secondary) << b.bus_id;
        EXPECT_EQ(byte(0x1a), b.subordinate) << b.bus_id;
    }
    RootFs fs(root.path());
    EXPECT_FALSE(fs.exists("/sys/bus/pci/devices/0000:07:00.0/config")) << "endpoints: none written";
}

TEST_F(PcieTreeTest, InfinibandClassLinksLeadIntoThePciDevice) {
    const std::string dev0 = kSwitch + "/0000:02:01.0/0000:0c:00.0";
    const std::string dev1 = "/sys/devices/pci0000:61/0000:61:00.0";
    EXPECT_EQ(link_of(root, "/sys/class/infiniband/mlx5_0"), "../.." + dev0.substr(4) + "/infiniband/mlx5_0");
    EXPECT_EQ(resolved(root, "/sys/class/infiniband/mlx5_0"), dev0 + "/infiniband/mlx5_0");
    EXPECT_EQ(resolved(root, "/sys/class/infiniband/mlx5_1"), dev1 + "/infiniband/mlx5_1");
    // `device` goes back to the PCI device.
    EXPECT_EQ(link_of(root, "/sys/class/infiniband/mlx5_0/device"), "../../../0000:0c:00.0");
    EXPECT_EQ(resolved(root, "/sys/class/infiniband/mlx5_0/device"), dev0);
    EXPECT_EQ(resolved(root, "/sys/class/infiniband/mlx5_1/device"), dev1);
    auto names = RootFs(root.path()).list("/sys/class/infiniband");
    ASSERT_TRUE(names.ok());
    EXPECT_EQ(*names, (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
}

TEST_F(PcieTreeTest, DeviceAttributesInTheIbCoreFormat) {
    for (const char* name : {"mlx5_0", "mlx5_1"}) {
        const std::string dev = std::string("/sys/class/infiniband/") + name + "/";
        EXPECT_EQ(root.read(dev + "node_type"), "1: CA\n");
        EXPECT_EQ(root.read(dev + "hca_type"), "MT4123\n");
        EXPECT_TRUE(std::regex_match(root.read(dev + "node_guid"),
                                     std::regex("[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}\n")))
            << root.read(dev + "node_guid");
    }
    EXPECT_NE(root.read("/sys/class/infiniband/mlx5_0/node_guid"),
              root.read("/sys/class/infiniband/mlx5_1/node_guid"));
}

struct PortFiles {
    const char* port;  // /sys/class/infiniband/<name>/ports/<n>
    const char* state;
    const char* phys_state;
    const char* link_layer;
};

TEST_F(PcieTreeTest, PortFilesHaveTheExactText) {
    for (const PortFiles& p : {PortFiles{"mlx5_0/ports/1", "4: ACTIVE", "5: LinkUp", "InfiniBand"},
                               PortFiles{"mlx5_1/ports/1", "1: DOWN", "3: Disabled", "Ethernet"},
                               PortFiles{"mlx5_1/ports/2", "1: DOWN", "3: Disabled", "Ethernet"}}) {
        const std::string dir = std::string("/sys/class/infiniband/") + p.port + "/";
        EXPECT_EQ(root.read(dir + "state"), std::string(p.state) + "\n") << p.port;
        EXPECT_EQ(root.read(dir + "phys_state"), std::string(p.phys_state) + "\n") << p.port;
        EXPECT_EQ(root.read(dir + "link_layer"), std::string(p.link_layer) + "\n") << p.port;
        EXPECT_EQ(root.read(dir + "rate"), "200 Gb/sec (4X HDR)\n") << p.port;
    }
    RootFs fs(root.path());
    EXPECT_FALSE(fs.exists("/sys/class/infiniband/mlx5_0/ports/2"));
    EXPECT_FALSE(fs.exists("/sys/class/infiniband/mlx5_1/ports/3"));
}

// INIT and ARMED ports have their physical link up: they wait for the subnet manager.
TEST(PcieTree, PortStatesAndTheirPhysicalState) {
    struct Case {
        const char* state;
        const char* text;
        const char* phys;
    };
    for (const Case& c : {Case{"ACTIVE", "4: ACTIVE\n", "5: LinkUp\n"}, Case{"DOWN", "1: DOWN\n", "3: Disabled\n"},
                          Case{"INIT", "2: INIT\n", "5: LinkUp\n"}, Case{"ARMED", "3: ARMED\n", "5: LinkUp\n"}}) {
        TempRoot r;
        xpart::testing::build_spec_text(
            r, std::string(R"({"name":"n","cpus":"0-1","nics":[{"name":"ib0","pci_bus_id":"0000:0c:00.0","state":")") +
                   c.state + "\"}]}");
        EXPECT_EQ(r.read("/sys/class/infiniband/ib0/ports/1/state"), c.text) << c.state;
        EXPECT_EQ(r.read("/sys/class/infiniband/ib0/ports/1/phys_state"), c.phys) << c.state;
    }
}

}  // namespace
}  // namespace xpart::sim
