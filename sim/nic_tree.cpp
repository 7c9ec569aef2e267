// RDMA NICs as mlx5 and the kernel's IB core show them: the PCI device (a ConnectX-6), its
// RDMA device <pci dir>/infiniband/<name> with the attributes of drivers/infiniband/core/
// sysfs.c in their exact text, and /sys/class/infiniband/<name> linking to it.
#include <cstdio>

#include "sim/pcie_layout.hpp"
#include "sim/tree.hpp"

namespace xpart::sim {

namespace {

constexpr unsigned kVendorMellanox = 0x15b3;
constexpr unsigned kConnectX6 = 0x101b;
constexpr unsigned kClassInfiniBand = 0x020700;
constexpr unsigned kClassEthernet = 0x020000;

// A stable GUID per PCI address under a Mellanox OUI (0c:42:a1), printed as the IB core does.
std::string node_guid(const std::string& bus_id) {
    const PciAddress a = *parse_pci_address(bus_id);
    char buf[32];
    std::snprintf(buf, sizeof buf, "0c42:a103:%04x:%02x%02x\n", a.domain, a.bus,
                  a.device << 3 | a.function);
    return buf;
}

const char* state_text(PortState s) {
    switch (s) {
        case PortState::Down: return "1: DOWN\n";
        case PortState::Init: return "2: INIT\n";
        case PortState::Armed: return "3: ARMED\n";
        case PortState::Active: break;
    }
    return "4: ACTIVE\n";
}

// A port past DOWN has its physical link up (INIT and ARMED wait for the subnet manager).
const char* phys_state_text(PortState s) {
    return s == PortState::Down ? "3: Disabled\n" : "5: LinkUp\n";
}

Status write_nic(const NodeSpec& spec, const NicSpec& nic, TreeWriter& tree) {
    const bool ib = nic.link_layer == LinkLayer::InfiniBand;
    const std::string pci = pci_device_dir(spec, nic.pci_bus_id);
    const PciIds ids{kVendorMellanox, kConnectX6, ib ? kClassInfiniBand : kClassEthernet};
    if (auto st = write_pci_function(spec, tree, pci, ids, nic.numa_node); !st) return st;
    const std::string dev = pci + "/infiniband/" + nic.name;
    const std::pair<const char*, std::string> files[] = {
        {"node_type", "1: CA\n"},
        {"node_guid", node_guid(nic.pci_bus_id)},
        {"hca_type", "MT" + std::to_string(kConnectX6) + "\n"}};  // mlx5: MT<PCI device id>
    for (const auto& [name, text] : files)
        if (auto st = tree.write_file(dev + "/" + name, text); !st) return st;
    if (auto st = tree.make_symlink(dev + "/device", "../../../" + nic.pci_bus_id); !st) return st;
    for (unsigned p = 1; p <= nic.ports; ++p) {
        const std::string port = dev + "/ports/" + std::to_string(p);
        const std::pair<const char*, std::string> port_files[] = {
            {"state", state_text(nic.state)},
            {"phys_state", phys_state_text(nic.state)},
            {"link_layer", ib ? "InfiniBand\n" : "Ethernet\n"},
            {"rate", "200 Gb/sec (4X HDR)\n"}};
        for (const auto& [name, text] : port_files)
            if (auto st = tree.write_file(port + "/" + name, text); !st) return st;
    }
    // "/sys/devices/..." seen from /sys/class/infiniband.
    return tree.make_symlink("/sys/class/infiniband/" + nic.name, "../.." + dev.substr(4));
}

}  // namespace

Status write_nics(const NodeSpec& spec, TreeWriter& tree) {
    for (const NicSpec& nic : spec.nics)
        if (auto st = write_nic(spec, nic, tree); !st) return st;
    return ok_status();
}

}  // namespace xpart::sim
