// Each GPU's own RDMA NIC on the simulated DGX-A100-like node (sim/specs/dgx-a100-nic.json),
// as shipped and with the pairing broken: a port down, a NIC missing, a switch without NICs,
// a socket without NICs. Expected NICs are written from the spec's switch layout.
#include <gtest/gtest.h>


#include <map>

#include "libxpart/discovery.hpp"
#include "libxpart/rdma_nics.hpp"
#include "tests/nvidia_sim_root.hpp"
#include "tests/case_name.hpp"

namespace xpart {
namespace {

using nlohmann::json;

// Edits of the shipped spec: "down:mlx5_1" sets a NIC's ports DOWN, "drop:mlx5_3" removes it.
json edited_spec(const std::vector<std::string>& edits) {
    json spec = testing::spec_json("dgx-a100-nic");
    for (const std::string& e : edits) {
        const std::string what = e.substr(0, e.find(':')), nic = e.substr(e.find(':') + 1);
        json& nics = spec["nics"];
        bool found = false;
        for (auto it = nics.begin(); it != nics.end(); ++it)
            if ((*it)["name"] == nic) {
                found = true;
                if (what == "down") (*it)["state"] = "DOWN";
                else nics.erase(it);
                break;
            }
        if (!found) throw std::runtime_error("no NIC " + nic + " in the spec");
    }
    return spec;
}

struct PairingCase {
    const char* name;
    std::vector<std::string> edits;
    // GPU bus id -> "own NIC, path"; GPUs not listed keep their switch's NIC as shipped.
    std::map<std::string, std::string> changed;
    std::size_t warnings;
};

const std::map<std::string, std::string> kShipped = {
    {"0000:07:00.0", "mlx5_0 switch"}, {"0000:0f:00.0", "mlx5_1 switch"},
    {"0000:47:00.0", "mlx5_2 switch"}, {"0000:4e:00.0", "mlx5_3 switch"},
    {"0000:87:00.0", "mlx5_6 switch"}, {"0000:90:00.0", "mlx5_7 switch"},
    {"0000:b7:00.0", "mlx5_8 switch"}, {"0000:bd:00.0", "mlx5_9 switch"},
};

class DgxPairing : public ::testing::TestWithParam<PairingCase> {};

TEST_P(DgxPairing, OwnNicPerGpu) {
    const PairingCase& c = GetParam();
    testing::SimRoot r(edited_spec(c.edits));
    ASSERT_EQ(r.error(), "");
    auto node = discover(r.discovery_options());
    ASSERT_TRUE(node.ok()) << node.error().message;
    ASSERT_EQ(node->gpus.size(), 8u);
    for (const Gpu& g : node->gpus) {
        auto want = c.changed.count(g.pci_bus_id) ? c.changed.at(g.pci_bus_id) : kShipped.at(g.pci_bus_id);
        ASSERT_FALSE(g.nics.empty()) << g.pci_bus_id;
        EXPECT_EQ(g.nics[0].nic + " " + to_string(g.nics[0].path), want) << c.name << ": " << g.pci_bus_id;
    }
    EXPECT_EQ(node->warnings.size(), c.warnings) << c.name;
}

const PairingCase kPairingCases[] = {
    {"as shipped", {}, {}, 0},
    {"a port down: the switch's other NIC, shared", {"down:mlx5_1"},
     {{"0000:0f:00.0", "mlx5_0 switch"}}, 1},
    {"a NIC missing: the switch's other NIC, shared", {"drop:mlx5_3"},
     {{"0000:4e:00.0", "mlx5_2 switch"}}, 0},
    // The storage NIC no GPU had yet comes first, then the least used by PCI order.
    {"a switch without NICs: the socket's, spread", {"drop:mlx5_8", "drop:mlx5_9"},
     {{"0000:b7:00.0", "mlx5_10 socket"}, {"0000:bd:00.0", "mlx5_6 socket"}}, 0},
    {"a socket without NICs: across sockets, warned per GPU",
     {"drop:mlx5_6", "drop:mlx5_7", "drop:mlx5_8", "drop:mlx5_9", "drop:mlx5_10"},
     {{"0000:87:00.0", "mlx5_4 cross-socket"}, {"0000:90:00.0", "mlx5_0 cross-socket"},
      {"0000:b7:00.0", "mlx5_1 cross-socket"}, {"0000:bd:00.0", "mlx5_2 cross-socket"}}, 4},
};

INSTANTIATE_TEST_SUITE_P(Dgx, DgxPairing, ::testing::ValuesIn(kPairingCases),
                         testing::SentenceCaseName());

TEST(DgxNics, PortsAndLinkLayersAsTheSpecSays) {
    testing::SimRoot r(edited_spec({"down:mlx5_2"}));
    ASSERT_EQ(r.error(), "");
    auto node = discover(r.discovery_options());
    ASSERT_TRUE(node.ok()) << node.error().message;
    ASSERT_EQ(node->nics.size(), 10u);
    std::map<std::string, const RdmaNic*> by_name;
    for (const RdmaNic& n : node->nics) by_name[n.name] = &n;
    EXPECT_EQ(by_name.at("mlx5_0")->pci_bus_id, "0000:0c:00.0");
    EXPECT_EQ(by_name.at("mlx5_0")->ports.at(0).link_layer, "InfiniBand");
    EXPECT_EQ(by_name.at("mlx5_4")->ports.at(0).link_layer, "Ethernet");
    EXPECT_EQ(by_name.at("mlx5_10")->numa_node, 1);
    EXPECT_EQ(by_name.at("mlx5_2")->ports.at(0).state, "DOWN");
    EXPECT_EQ(by_name.at("mlx5_2")->active_port(), 0u);
    // A DOWN NIC is never in a GPU's list.
    for (const Gpu& g : node->gpus)
        for (const NicRoute& route : g.nics) EXPECT_NE(route.nic, "mlx5_2");
}

// A node without /sys/class/infiniband (every other shipped spec): no NIC, no warning.
TEST(DgxNics, NodeWithoutRdmaHasNone) {
    testing::SimRoot r(testing::read_text(testing::spec_file("a100-guide")));
    ASSERT_EQ(r.error(), "");
    auto node = discover(r.discovery_options());
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_TRUE(node->nics.empty());
    for (const Gpu& g : node->gpus) EXPECT_TRUE(g.nics.empty());
}

}  // namespace
}  // namespace xpart
