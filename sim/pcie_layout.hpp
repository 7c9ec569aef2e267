// Where a spec's PCI devices sit in sysfs: the device directory of every GPU and NIC under
// /sys/devices, and the bridges (root ports, switch ports) above those behind a switch.
// Pure computation from the spec; sim/pcie_tree.cpp writes the files.
#pragma once

#include <string>
#include <vector>

#include "sim/spec.hpp"

namespace xpart::sim {

// One PCI device named in the spec, in spec order: switch ports, NICs, NVIDIA and AMD GPUs.
struct PciDeviceRef {
    std::string item;         // "nics[1]", as the spec names it (AMD GPUs: before sorting)
    std::string field;        // its bus id key: "pci_bus_id", "root_port" or "upstream"
    std::string bus_id;
    std::string switch_name;  // the switch an endpoint is attached to ("" : none)
    int numa_node = -1;
    bool bridge = false;      // a switch's root port or upstream port
};
std::vector<PciDeviceRef> pci_devices(const NodeSpec& spec);

// The endpoints attached to a switch, in bus id order: downstream port k leads to the k-th.
std::vector<const PciDeviceRef*> switch_devices(const std::vector<PciDeviceRef>& devices,
                                                const std::string& switch_name);

enum class BridgeKind { RootPort, Upstream, Downstream };
struct PciBridge {
    BridgeKind kind = BridgeKind::RootPort;
    std::string bus_id;
    std::string dir;                          // /sys/devices/pci0000:00/0000:00:01.1
    unsigned secondary = 0, subordinate = 0;  // the buses behind it
    int numa_node = -1;                       // its switch's devices' node; -1: none attached
};
std::vector<PciBridge> pci_bridges(const NodeSpec& spec);

// The sysfs directory of a GPU or NIC of the spec:
// /sys/devices/pci0000:07/0000:07:00.0 without a switch, else
// /sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:00.0/0000:07:00.0.
std::string pci_device_dir(const NodeSpec& spec, const std::string& bus_id);

}  // namespace xpart::sim
