// Where a PCI device sits in the PCIe tree, read from sysfs through the root prefix:
// /sys/bus/pci/devices/<bdf> links to /sys/devices/pci<dom>:<bus>/<root port>/<switch
// ports...>/<bdf>, so the link target names the host bridge and every bridge above the device.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "libxpart/node.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart {

struct PciLocation {
    std::string bdf;                   // "0000:07:00.0"
    std::string host_bridge;           // "pci0000:00"; empty when sysfs does not say
    std::vector<std::string> bridges;  // root port first, down to the device's parent
    int numa_node = -1;
    int socket = -1;                   // physical package of the device's NUMA node, -1 unknown
};

// NUMA node -> socket, filled as devices are located: a node's GPUs and NICs share a few
// NUMA nodes, and each lookup is two file reads.
using SocketCache = std::map<int, int>;

// Never fails: what sysfs does not show stays unknown (empty host bridge, -1), and an
// unknown place compares as far as possible (CrossSocket) with everything.
PciLocation locate_pci_device(const RootFs& root, const std::string& bdf, SocketCache* sockets = nullptr);

// The path class between two located devices.
PciPath pci_path_between(const PciLocation& a, const PciLocation& b);

// Splits a sysfs device path ("/sys/devices/pci0000:00/0000:00:01.1/0000:07:00.0") into host
// bridge and bridges; `bdf` becomes its last component. For tests and for locate_pci_device.
void parse_pci_device_path(const std::string& path, PciLocation& out);

}  // namespace xpart
