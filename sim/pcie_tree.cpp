// The PCI devices' sysfs as the kernel shows it: each device directory at its place below
// /sys/devices/pci<domain>:<bus> (bridges above those behind a switch), and
// /sys/bus/pci/devices/<bus id> a relative link to it. Tools that walk that tree see the same
// hierarchy as on a real node: discovery follows the links' paths, hwloc the bridges' config
// space (header type and bus numbers).
#include <cstdio>

#include "sim/pcie_layout.hpp"
#include "sim/tree.hpp"

namespace xpart::sim {

namespace {

constexpr unsigned kClassPciBridge = 0x060400;
constexpr unsigned kVendorAmd = 0x1022;
constexpr unsigned kRootPortDevice = 0x1483;  // EPYC (Rome) GPP bridge, as on a DGX A100
constexpr unsigned kVendorBroadcom = 0x1000;
constexpr unsigned kSwitchDevice = 0xc010;    // PEX880xx PCIe Gen 4 switch ports

std::string hex(unsigned value, int digits) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%0*x\n", digits, value);
    return buf;
}

// The first 64 bytes of a type 1 (bridge) config header, what an unprivileged reader of
// `config` gets: ids, class, header type and the buses behind the bridge.
std::string bridge_config(const PciIds& ids, const PciBridge& b) {
    std::string c(64, '\0');
    c[0x00] = static_cast<char>(ids.vendor & 0xff);
    c[0x01] = static_cast<char>(ids.vendor >> 8);
    c[0x02] = static_cast<char>(ids.device & 0xff);
    c[0x03] = static_cast<char>(ids.device >> 8);
    c[0x04] = 0x07;  // command: I/O, memory, bus master
    c[0x09] = static_cast<char>(ids.pci_class & 0xff);
    c[0x0a] = static_cast<char>((ids.pci_class >> 8) & 0xff);
    c[0x0b] = static_cast<char>(ids.pci_class >> 16);
    c[0x0e] = 0x01;  // header type 1: PCI-to-PCI bridge
    c[0x18] = static_cast<char>(parse_pci_address(b.bus_id)->bus);  // primary
    c[0x19] = static_cast<char>(b.secondary);
    c[0x1a] = static_cast<char>(b.subordinate);
    return c;
}

}  // namespace

Status write_pci_function(const NodeSpec& spec, TreeWriter& tree, const std::string& dir,
                          const PciIds& ids, int numa_node) {
    if (auto st = tree.write_file(dir + "/vendor", hex(ids.vendor, 4)); !st) return st;
    if (auto st = tree.write_file(dir + "/device", hex(ids.device, 4)); !st) return st;
    if (ids.pci_class != 0)
        if (auto st = tree.write_file(dir + "/class", hex(ids.pci_class, 6)); !st) return st;
    if (auto st = tree.write_file(dir + "/numa_node", std::to_string(numa_node) + "\n"); !st)
        return st;
    // A device of no NUMA node is as near to every CPU (the kernel's mask is all of them).
    const std::vector<unsigned>* cpus = &spec.cpus;
    for (const auto& n : spec.numa)
        if (n.node == numa_node) cpus = &n.cpus;
    if (auto st = write_local_cpus(spec, tree, dir, *cpus); !st) return st;
    const std::string bus_id = dir.substr(dir.rfind('/') + 1);
    // "/sys/devices/..." seen from /sys/bus/pci/devices.
    return tree.make_symlink("/sys/bus/pci/devices/" + bus_id, "../../.." + dir.substr(4));
}

Status write_pcie_tree(const NodeSpec& spec, TreeWriter& tree) {
    for (const PciBridge& b : pci_bridges(spec)) {
        const PciIds ids = b.kind == BridgeKind::RootPort
                               ? PciIds{kVendorAmd, kRootPortDevice, kClassPciBridge}
                               : PciIds{kVendorBroadcom, kSwitchDevice, kClassPciBridge};
        if (auto st = write_pci_function(spec, tree, b.dir, ids, b.numa_node); !st) return st;
        if (auto st = tree.write_file(b.dir + "/config", bridge_config(ids, b)); !st) return st;
    }
    return write_nics(spec, tree);
}

}  // namespace xpart::sim
