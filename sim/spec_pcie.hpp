// PCIe part of the simulator spec: switches above GPUs and NICs, and RDMA NICs.
//
//   "pcie_switches": [
//     // A switch below one root port of a root complex (host bridge): its devices show as
//     // /sys/devices/pci<dom>:<root port bus>/<root_port>/<upstream>/<downstream k>/<device>
//     {"name": "sw0", "root_port": "0000:00:01.1", "upstream": "0000:01:00.0"}
//   ],
//   "nics": [
//     {"name": "mlx5_0", "pci_bus_id": "0000:0c:00.0", "numa_node": 0,
//      "switch": "sw0",               // optional, as for GPUs ("nvidia"/"amd" gpus[].switch)
//      "link_layer": "InfiniBand",    // or "Ethernet" (RoCE); default InfiniBand
//      "ports": 1,                    // default 1
//      "state": "ACTIVE"}             // every port: ACTIVE (default), DOWN, INIT or ARMED
//   ]
//
// A device without "switch" hangs directly below a host bridge of its own bus
// (/sys/devices/pci<dom>:<bus>/<device>). A switch has one downstream port per device attached
// to it, in bus id order, named <dom>:<upstream bus + 1>:<k>.0; so its devices' buses must lie
// above that bus, and no other device's bus may fall in the range the switch covers.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace xpart::sim {

// A PCI address as sysfs names devices: "0000:07:00.0", lower-case hex.
struct PciAddress {
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    std::string str() const;
};
std::optional<PciAddress> parse_pci_address(const std::string& text);

struct PcieSwitchSpec {
    std::string name;       // "sw0"
    std::string root_port;  // "0000:00:01.1"
    std::string upstream;   // "0000:01:00.0": the switch's upstream port
};

enum class LinkLayer { InfiniBand, Ethernet };
// Values are the IB port states the kernel prints ("4: ACTIVE").
enum class PortState { Down = 1, Init = 2, Armed = 3, Active = 4 };

struct NicSpec {
    std::string name;         // RDMA device name: "mlx5_0"
    std::string pci_bus_id;
    int numa_node = 0;
    std::string switch_name;  // "" : below a host bridge of its own
    LinkLayer link_layer = LinkLayer::InfiniBand;
    unsigned ports = 1;
    PortState state = PortState::Active;
};

}  // namespace xpart::sim
