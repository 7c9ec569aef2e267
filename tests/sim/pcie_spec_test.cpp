// The PCIe part of node specs (switches, NICs, the GPUs' "switch"): defaults, and one line
// naming the file, the key and the value for each spec a real PCIe tree could not be.
#include <gtest/gtest.h>

#include "sim/spec.hpp"

namespace xpart::sim {
namespace {

// A two-socket node with the given "pcie_switches", "nics" and extra top-level members.
std::string node(const std::string& switches, const std::string& nics, const std::string& more = "") {
    return R"({"name":"n","cpus":"0-7","numa":[{"node":0,"cpus":"0-3"},{"node":1,"cpus":"4-7"}],)"
           R"("pcie_switches":[)" + switches + R"(],"nics":[)" + nics + "]" + more + "}";
}
const std::string kSw0 = R"({"name":"sw0","root_port":"0000:00:01.1","upstream":"0000:01:00.0"})";
std::string nic(const std::string& name, const std::string& bus_id, const std::string& more = "") {
    return R"({"name":")" + name + R"(","pci_bus_id":")" + bus_id + "\"" + more + "}";
}
std::string nvidia_gpu(const std::string& bus_id, const std::string& more = "") {
    return R"(,"nvidia":{"gpus":[{"product":"A100-SXM4-40GB","uuid":"GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77",)"
           R"("minor":0,"pci_bus_id":")" + bus_id + "\"" + more + "}]}";
}
std::string amd_gpu(const std::string& bus_id, const std::string& more = "") {
    return R"(,"amd":{"gpus":[{"model":"MI300X","unique_id":5,"pci_bus_id":")" + bus_id + "\"" + more + "}]}";
}
// 33 NICs behind sw0: one more than its downstream bus has device numbers.
std::string nics_on_sw0(int count) {
    std::string out;
    for (int i = 0; i < count; ++i) {
        char bus[16];
        std::snprintf(bus, sizeof bus, "0000:%02x:00.0", 0x10 + i);
        out += (i ? "," : "") + nic("n" + std::to_string(i), bus, R"(,"switch":"sw0")");
    }
    return out;
}

TEST(PcieSpec, DefaultsAndValues) {
    auto r = parse_spec(node(kSw0, nic("mlx5_0", "0000:0c:00.0", R"(,"switch":"sw0")") + "," +
                                       nic("mlx5_1", "0000:61:00.0", R"(,"numa_node":1,"link_layer":"Ethernet",)"
                                                                     R"("ports":2,"state":"INIT")"),
                             nvidia_gpu("0000:07:00.0", R"(,"switch":"sw0")")),
                        "n.json");
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->pcie_switches.size(), 1u);
    EXPECT_EQ(r->pcie_switches[0].root_port, "0000:00:01.1");
    EXPECT_EQ(r->pcie_switches[0].upstream, "0000:01:00.0");
    ASSERT_EQ(r->nics.size(), 2u);
    const NicSpec& a = r->nics[0];
    EXPECT_EQ(a.switch_name, "sw0");
    EXPECT_EQ(a.numa_node, 0);
    EXPECT_EQ(a.link_layer, LinkLayer::InfiniBand);
    EXPECT_EQ(a.ports, 1u);
    EXPECT_EQ(a.state, PortState::Active);
    const NicSpec& b = r->nics[1];
    EXPECT_EQ(b.switch_name, "");
    EXPECT_EQ(b.numa_node, 1);
    EXPECT_EQ(b.link_layer, LinkLayer::Ethernet);
    EXPECT_EQ(b.ports, 2u);
    EXPECT_EQ(b.state, PortState::Init);
    EXPECT_EQ(r->nvidia.gpus[0].switch_name, "sw0");
}

TEST(PcieSpec, AmdGpuBehindASwitch) {
    auto r = parse_spec(node(kSw0, "", amd_gpu("0000:05:00.0", R"(,"switch":"sw0")")), "n.json");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->amd.gpus[0].switch_name, "sw0");
}

TEST(PciAddress, ParsesSysfsNamesOnly) {
    auto a = parse_pci_address("0001:e1:1f.7");
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->domain, 1u);
    EXPECT_EQ(a->bus, 0xe1u);
    EXPECT_EQ(a->device, 0x1fu);
    EXPECT_EQ(a->function, 7u);
    EXPECT_EQ(a->str(), "0001:e1:1f.7");
    for (const char* bad : {"0000:E1:00.0", "0000:e1:20.0", "0000:e1:00.8", "e1:00.0", "0000:e1:00.0 ", ""})
        EXPECT_FALSE(parse_pci_address(bad).has_value()) << bad;
}

struct BadSpec {
    std::string text;
    std::string message;
};
class PcieSpecErrorTest : public ::testing::TestWithParam<BadSpec> {};
TEST_P(PcieSpecErrorTest, OneLineNamingKeyAndValue) {
    auto r = parse_spec(GetParam().text, "node.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(Switches, PcieSpecErrorTest, ::testing::Values(
    BadSpec{R"({"name":"n","cpus":"0-7","pcie_switches":{}})",
            "node.json: pcie_switches: expected an array of switches"},
    BadSpec{node(R"({"name":"sw0","root_port":"0000:00:01.1","upstream":"0000:01:00.0","lanes":16})", ""),
            "node.json: pcie_switches[0].lanes: unknown key"},
    BadSpec{node(R"({"name":"","root_port":"0000:00:01.1","upstream":"0000:01:00.0"})", ""),
            "node.json: pcie_switches[0].name: expected a non-empty name"},
    BadSpec{node(kSw0 + R"(,{"name":"sw0","root_port":"0000:40:01.1","upstream":"0000:41:00.0"})", ""),
            "node.json: pcie_switches[1].name: 'sw0' used twice"},
    BadSpec{node(R"({"name":"sw0","root_port":"00:01.1","upstream":"0000:01:00.0"})", ""),
            "node.json: pcie_switches[0].root_port: expected a lower-case 0000:07:00.0 form, got '00:01.1'"},
    BadSpec{node(R"({"name":"sw0","root_port":"0000:00:01.1"})", ""),
            "node.json: pcie_switches[0].upstream: missing (a string is required)"},
    BadSpec{node(R"({"name":"sw0","root_port":"0000:01:01.1","upstream":"0000:01:00.0"})", ""),
            "node.json: pcie_switches[0].upstream: '0000:01:00.0' must be on a bus behind root port "
            "0000:01:01.1 (same domain, bus above 01, at most fd)"},
    BadSpec{node(R"({"name":"sw0","root_port":"0000:00:01.1","upstream":"0001:01:00.0"})", ""),
            "node.json: pcie_switches[0].upstream: '0001:01:00.0' must be on a bus behind root port "
            "0000:00:01.1 (same domain, bus above 00, at most fd)"},
    BadSpec{node(kSw0 + R"(,{"name":"sw1","root_port":"0000:01:00.0","upstream":"0000:41:00.0"})", ""),
            "node.json: pcie_switches[1].root_port: '0000:01:00.0' used twice (also pcie_switches[0].upstream)"}));

INSTANTIATE_TEST_SUITE_P(Nics, PcieSpecErrorTest, ::testing::Values(
    BadSpec{node("", nic("mlx5_0", "0000:0c:00.0", R"(,"speed":200)")), "node.json: nics[0].speed: unknown key"},
    BadSpec{node("", nic("mlx5/0", "0000:0c:00.0")),
            "node.json: nics[0].name: expected 1..63 characters without '/', got 'mlx5/0'"},
    BadSpec{node("", nic("mlx5_0", "0000:0c:00.0") + "," + nic("mlx5_0", "0000:12:00.0")),
            "node.json: nics[1].name: 'mlx5_0' used twice"},
    BadSpec{node("", nic("mlx5_0", "0000:0C:00.0")),
            "node.json: nics[0].pci_bus_id: expected a lower-case 0000:07:00.0 form, got '0000:0C:00.0'"},
    BadSpec{node("", nic("mlx5_0", "0000:0c:00.0", R"(,"numa_node":2)")),
            "node.json: nics[0].numa_node: no NUMA node 2 in the spec's \"numa\""},
    BadSpec{node(kSw0, nic("mlx5_0", "0000:0c:00.0", R"(,"switch":"sw9")")),
            "node.json: nics[0].switch: no PCIe switch 'sw9' in \"pcie_switches\""},
    BadSpec{node("", nic("mlx5_0", "0000:0c:00.0", R"(,"link_layer":"RoCE")")),
            "node.json: nics[0].link_layer: expected InfiniBand or Ethernet, got 'RoCE'"},
    BadSpec{node("", nic("mlx5_0", "0000:0c:00.0", R"(,"state":"UP")")),
            "node.json: nics[0].state: expected ACTIVE, DOWN, INIT or ARMED, got 'UP'"},
    BadSpec{node("", nic("mlx5_0", "0000:0c:00.0", R"(,"ports":0)")),
            "node.json: nics[0].ports: expected 1..16, got 0"},
    BadSpec{node("", nic("mlx5_0", "0000:0c:00.0", R"(,"ports":-1)")),
            "node.json: nics[0].ports: expected a non-negative integer, got -1"},
    BadSpec{node("", nic("mlx5_0", "0000:0c:00.0") + "," + nic("mlx5_1", "0000:0c:00.0")),
            "node.json: nics[1].pci_bus_id: '0000:0c:00.0' used twice (also nics[0].pci_bus_id)"},
    BadSpec{node(kSw0, nic("mlx5_0", "0000:01:00.0")),
            "node.json: nics[0].pci_bus_id: '0000:01:00.0' used twice (also pcie_switches[0].upstream)"}));

INSTANTIATE_TEST_SUITE_P(Gpus, PcieSpecErrorTest, ::testing::Values(
    BadSpec{node(kSw0, "", nvidia_gpu("0000:07:00.0", R"(,"switch":"sw1")")),
            "node.json: nvidia.gpus[0].switch: no PCIe switch 'sw1' in \"pcie_switches\""},
    BadSpec{node(kSw0, "", amd_gpu("0000:05:00.0", R"(,"switch":"sw1")")),
            "node.json: amd.gpus[0].switch: no PCIe switch 'sw1' in \"pcie_switches\""},
    BadSpec{node("", nic("mlx5_0", "0000:07:00.0"), nvidia_gpu("0000:07:00.0")),
            "node.json: nvidia.gpus[0].pci_bus_id: '0000:07:00.0' used twice (also nics[0].pci_bus_id)"},
    BadSpec{node(kSw0, "", amd_gpu("0000:00:01.1")),
            "node.json: amd.gpus[0].pci_bus_id: expected 'dddd:bb:00.0' (lower-case hex), got '0000:00:01.1'"},
    BadSpec{node(kSw0, "", amd_gpu("0000:01:00.0")),
            "node.json: amd.gpus[0].pci_bus_id: '0000:01:00.0' used twice (also pcie_switches[0].upstream)"},
    BadSpec{node("", "", nvidia_gpu("0000:05:00.0") + amd_gpu("0000:05:00.0")),
            "node.json: amd.gpus[0].pci_bus_id: '0000:05:00.0' used twice (also nvidia.gpus[0].pci_bus_id)"}));

// What a switch's place in the bus numbering allows.
INSTANTIATE_TEST_SUITE_P(SwitchBuses, PcieSpecErrorTest, ::testing::Values(
    BadSpec{node(kSw0, nic("mlx5_0", "0000:02:00.0", R"(,"switch":"sw0")")),
            "node.json: nics[0].pci_bus_id: '0000:02:00.0' must be on a bus behind the downstream "
            "ports of switch 'sw0' (bus 02)"},
    BadSpec{node(kSw0, "", nvidia_gpu("0001:07:00.0", R"(,"switch":"sw0")")),
            "node.json: nvidia.gpus[0].pci_bus_id: '0001:07:00.0' must be on a bus behind the "
            "downstream ports of switch 'sw0' (bus 02)"},
    BadSpec{node(kSw0, nic("mlx5_0", "0000:0c:00.0", R"(,"switch":"sw0")") + "," +
                           nic("mlx5_1", "0000:12:00.0", R"(,"switch":"sw0","numa_node":1)")),
            "node.json: nics[1].numa_node: 1, but nics[0] on the same switch 'sw0' is on NUMA node 0"},
    BadSpec{node(kSw0, nic("mlx5_0", "0000:0c:00.0", R"(,"switch":"sw0")") + "," + nic("mlx5_1", "0000:05:00.0")),
            "node.json: nics[1].pci_bus_id: '0000:05:00.0' is on a bus of switch 'sw0' (01..0c) but "
            "not attached to it"},
    BadSpec{node(kSw0 + R"(,{"name":"sw1","root_port":"0000:03:01.1","upstream":"0000:41:00.0"})",
                 nic("mlx5_0", "0000:0c:00.0", R"(,"switch":"sw0")")),
            "node.json: pcie_switches[1].root_port: '0000:03:01.1' is on a bus of switch 'sw0' "
            "(01..0c) but not attached to it"},
    BadSpec{node(kSw0, nics_on_sw0(33)),
            "node.json: nics[32].switch: switch 'sw0' has 32 downstream ports, all used"}));

}  // namespace
}  // namespace xpart::sim
