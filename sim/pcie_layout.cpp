#include "sim/pcie_layout.hpp"

#include <algorithm>
#include <cstdio>

namespace xpart::sim {

namespace {

std::string host_bridge_dir(const PciAddress& a) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "/sys/devices/pci%04x:%02x", a.domain, a.bus);
    return buf;
}

// Downstream port k of a switch: device k on the bus right below the upstream port.
std::string downstream_port(const PciAddress& upstream, std::size_t k) {
    PciAddress port{upstream.domain, upstream.bus + 1, static_cast<unsigned>(k), 0};
    return port.str();
}

PciAddress address(const std::string& bus_id) {
    return parse_pci_address(bus_id).value_or(PciAddress{});
}

// The directories of a switch's root port and upstream port.
struct SwitchDirs {
    std::string root_port, upstream;
};
SwitchDirs switch_dirs(const PcieSwitchSpec& s) {
    const std::string root_port = host_bridge_dir(address(s.root_port)) + "/" + s.root_port;
    return {root_port, root_port + "/" + s.upstream};
}

const PcieSwitchSpec* find_switch(const NodeSpec& spec, const std::string& name) {
    for (const auto& s : spec.pcie_switches)
        if (s.name == name) return &s;
    return nullptr;
}

}  // namespace

std::vector<PciDeviceRef> pci_devices(const NodeSpec& spec) {
    std::vector<PciDeviceRef> out;
    auto item = [](const char* list, std::size_t i) {
        return std::string(list) + "[" + std::to_string(i) + "]";
    };
    for (std::size_t i = 0; i < spec.pcie_switches.size(); ++i) {
        const PcieSwitchSpec& s = spec.pcie_switches[i];
        out.push_back({item("pcie_switches", i), "root_port", s.root_port, "", -1, true});
        out.push_back({item("pcie_switches", i), "upstream", s.upstream, "", -1, true});
    }
    for (std::size_t i = 0; i < spec.nics.size(); ++i) {
        const NicSpec& n = spec.nics[i];
        out.push_back({item("nics", i), "pci_bus_id", n.pci_bus_id, n.switch_name, n.numa_node,
                       false});
    }
    for (std::size_t i = 0; i < spec.nvidia.gpus.size(); ++i) {
        const NvidiaGpuSpec& g = spec.nvidia.gpus[i];
        out.push_back({item("nvidia.gpus", i), "pci_bus_id", g.pci_bus_id, g.switch_name,
                       g.numa_node, false});
    }
    for (std::size_t i = 0; i < spec.amd.gpus.size(); ++i) {
        const AmdGpuSpec& g = spec.amd.gpus[i];
        out.push_back({item("amd.gpus", i), "pci_bus_id", g.pci_bus_id(), g.switch_name,
                       g.numa_node, false});
    }
    return out;
}

std::vector<const PciDeviceRef*> switch_devices(const std::vector<PciDeviceRef>& devices,
                                                const std::string& switch_name) {
    std::vector<const PciDeviceRef*> out;
    for (const auto& d : devices)
        if (!d.bridge && d.switch_name == switch_name) out.push_back(&d);
    // Fixed-width lower-case hex: string order is bus order.
    std::stable_sort(out.begin(), out.end(), [](const PciDeviceRef* a, const PciDeviceRef* b) {
        return a->bus_id < b->bus_id;
    });
    return out;
}

std::vector<PciBridge> pci_bridges(const NodeSpec& spec) {
    const auto devices = pci_devices(spec);
    std::vector<PciBridge> out;
    for (const PcieSwitchSpec& s : spec.pcie_switches) {
        const auto attached = switch_devices(devices, s.name);
        const PciAddress up = address(s.upstream);
        const int numa = attached.empty() ? -1 : attached.front()->numa_node;
        unsigned last = up.bus + 1;
        for (const auto* d : attached) last = std::max(last, address(d->bus_id).bus);
        const SwitchDirs dirs = switch_dirs(s);
        out.push_back({BridgeKind::RootPort, s.root_port, dirs.root_port, up.bus, last, numa});
        out.push_back({BridgeKind::Upstream, s.upstream, dirs.upstream, up.bus + 1, last, numa});
        for (std::size_t k = 0; k < attached.size(); ++k) {
            const std::string port = downstream_port(up, k);
            const unsigned bus = address(attached[k]->bus_id).bus;
            out.push_back(
                {BridgeKind::Downstream, port, dirs.upstream + "/" + port, bus, bus, numa});
        }
    }
    return out;
}

std::string pci_device_dir(const NodeSpec& spec, const std::string& bus_id) {
    const auto devices = pci_devices(spec);
    const PciDeviceRef* self = nullptr;
    for (const auto& d : devices)
        if (!d.bridge && d.bus_id == bus_id) self = &d;
    const PcieSwitchSpec* sw = self ? find_switch(spec, self->switch_name) : nullptr;
    if (!sw) return host_bridge_dir(address(bus_id)) + "/" + bus_id;
    const auto attached = switch_devices(devices, sw->name);
    const std::size_t k = static_cast<std::size_t>(
        std::find(attached.begin(), attached.end(), self) - attached.begin());
    return switch_dirs(*sw).upstream + "/" + downstream_port(address(sw->upstream), k) + "/" +
           bus_id;
}

}  // namespace xpart::sim
