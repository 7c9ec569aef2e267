// Which NIC each GPU gets: path class first, then spread over equal NICs, ports down left out.
// Locations are built from sysfs paths (no tree needed); the sysfs reading is tested on
// simulated nodes (nic_sim_test.cpp).
#include <gtest/gtest.h>


#include <map>

#include "libxpart/rdma_nics.hpp"
#include "tests/case_name.hpp"

namespace xpart {
namespace {

// "sw0" -> below switch 0 of socket 0; "rc1" -> right below root port 1 of socket 0's host
// bridge; "s1" -> socket 1 behind its own switch.
struct Place {
    std::string host_bridge;
    std::vector<std::string> bridges;
    int socket;
};
const std::map<std::string, Place> kPlaces = {
    {"sw0", {"pci0000:00", {"0000:00:01.1", "0000:01:00.0"}, 0}},
    {"sw1", {"pci0000:40", {"0000:40:01.1", "0000:41:00.0"}, 0}},
    {"rc0", {"pci0000:00", {"0000:00:03.1"}, 0}},
    {"s1", {"pci0000:80", {"0000:80:01.1", "0000:81:00.0"}, 1}},
};

PciLocation located(const std::string& place, const std::string& bdf) {
    const Place& p = kPlaces.at(place);
    PciLocation l;
    l.bdf = bdf;
    l.host_bridge = p.host_bridge;
    l.bridges = p.bridges;
    l.numa_node = l.socket = p.socket;
    return l;
}

struct Device {
    std::string place;
    std::string name;  // NICs only
    bool up = true;
};

struct RouteCase {
    const char* name;
    std::vector<Device> gpus;  // PCI order follows the vector
    std::vector<Device> nics;
    std::vector<std::string> own;  // each GPU's own NIC and path, "mlx5_0 switch"; "-" none
    std::size_t warnings;
};

class Routes : public ::testing::TestWithParam<RouteCase> {};

TEST_P(Routes, OwnNicPerGpu) {
    const RouteCase& c = GetParam();
    Node node;
    std::vector<PciLocation> gpu_at, nic_at;
    for (std::size_t i = 0; i < c.gpus.size(); ++i) {
        Gpu g;
        g.index = static_cast<int>(i);
        g.pci_bus_id = "0000:0" + std::to_string(i) + ":00.0";
        gpu_at.push_back(located(c.gpus[i].place, g.pci_bus_id));
        node.gpus.push_back(g);
    }
    for (std::size_t i = 0; i < c.nics.size(); ++i) {
        RdmaNic n;
        n.name = c.nics[i].name;
        n.pci_bus_id = "0000:1" + std::to_string(i) + ":00.0";
        n.ports = {{1, c.nics[i].up ? "ACTIVE" : "DOWN", "InfiniBand"}};
        nic_at.push_back(located(c.nics[i].place, n.pci_bus_id));
        node.nics.push_back(n);
    }
    assign_nic_routes(node, gpu_at, nic_at);
    ASSERT_EQ(node.gpus.size(), c.own.size());
    for (std::size_t i = 0; i < node.gpus.size(); ++i) {
        const Gpu& g = node.gpus[i];
        const std::string got =
            g.nics.empty() ? "-" : g.nics[0].nic + " " + to_string(g.nics[0].path);
        EXPECT_EQ(got, c.own[i]) << c.name << ": GPU " << i;
        for (std::size_t k = 1; k < g.nics.size(); ++k)
            EXPECT_LE(g.nics[k - 1].path, g.nics[k].path) << c.name << ": nearest first";
    }
    EXPECT_EQ(node.warnings.size(), c.warnings) << c.name;
}

const RouteCase kRouteCases[] = {
    {"two GPUs, two NICs per switch: one each",
     {{"sw0", ""}, {"sw0", ""}, {"sw1", ""}, {"sw1", ""}},
     {{"sw0", "mlx5_0"}, {"sw0", "mlx5_1"}, {"sw1", "mlx5_2"}, {"sw1", "mlx5_3"}},
     {"mlx5_0 switch", "mlx5_1 switch", "mlx5_2 switch", "mlx5_3 switch"}, 0},
    {"a NIC port down: its GPU shares the switch's other NIC",
     {{"sw0", ""}, {"sw0", ""}, {"sw1", ""}},
     {{"sw0", "mlx5_0"}, {"sw0", "mlx5_1", false}, {"sw1", "mlx5_2"}},
     {"mlx5_0 switch", "mlx5_0 switch", "mlx5_2 switch"}, 1},
    {"a NIC missing: the other switch of the socket",
     {{"sw0", ""}, {"sw1", ""}},
     {{"sw1", "mlx5_2"}},
     {"mlx5_2 socket", "mlx5_2 switch"}, 0},
    {"two GPUs behind one switch with one NIC share it",
     {{"sw0", ""}, {"sw0", ""}},
     {{"sw0", "mlx5_0"}, {"s1", "mlx5_6"}},
     {"mlx5_0 switch", "mlx5_0 switch"}, 0},
    {"equal class spreads: two GPUs, two NICs on the host bridge",
     {{"sw0", ""}, {"sw0", ""}},
     {{"rc0", "mlx5_4"}, {"rc0", "mlx5_5"}},
     {"mlx5_4 root-complex", "mlx5_5 root-complex"}, 0},
    {"only across sockets: warned",
     {{"sw0", ""}, {"s1", ""}},
     {{"s1", "mlx5_6"}},
     {"mlx5_6 cross-socket", "mlx5_6 switch"}, 1},
    {"every port down: no NIC, one line per NIC",
     {{"sw0", ""}},
     {{"sw0", "mlx5_0", false}},
     {"-"}, 1},
};

INSTANTIATE_TEST_SUITE_P(NicCases, Routes, ::testing::ValuesIn(kRouteCases),
                         testing::SentenceCaseName());

}  // namespace
}  // namespace xpart
