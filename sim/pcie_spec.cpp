// Parsing and validation of the PCIe part of a node spec (sim/spec_pcie.hpp): switches, NICs,
// the "switch" of GPUs and NICs, and the checks that keep the PCIe tree one a kernel could
// show (one bus id per device, a switch's devices on buses behind it and on one socket).
#include <algorithm>
#include <cstdio>

#include "sim/pcie_layout.hpp"
#include "sim/spec_parse.hpp"

namespace xpart::sim {

using nlohmann::json;

std::string PciAddress::str() const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, device, function);
    return buf;
}

std::optional<PciAddress> parse_pci_address(const std::string& s) {
    if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return std::nullopt;
    // Lower-case hex only: sysfs names devices that way, and the names are compared as text.
    auto field = [&](std::size_t pos, std::size_t len, unsigned& out) {
        out = 0;
        for (std::size_t i = pos; i < pos + len; ++i) {
            const char c = s[i];
            const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (d < 0) return false;
            out = out * 16 + static_cast<unsigned>(d);
        }
        return true;
    };
    PciAddress a;
    if (!field(0, 4, a.domain) || !field(5, 2, a.bus) || !field(8, 2, a.device) ||
        !field(11, 1, a.function) || a.device > 0x1f || a.function > 7)
        return std::nullopt;
    return a;
}

Result<std::string> get_pci_bus_id(const json& obj, const SpecPath& at, const char* key) {
    auto text = get_string(obj, at, key);
    if (!text) return text.error();
    if (!parse_pci_address(*text))
        return at.child(key).error("expected a lower-case 0000:07:00.0 form, got '" + *text + "'");
    return *text;
}

Result<std::string> get_switch(const json& obj, const SpecPath& at, const NodeSpec& spec) {
    if (!obj.contains("switch")) return std::string();
    auto name = get_string(obj, at, "switch");
    if (!name) return name.error();
    for (const auto& s : spec.pcie_switches)
        if (s.name == *name) return *name;
    return at.child("switch").error("no PCIe switch '" + *name + "' in \"pcie_switches\"");
}

Result<int> get_numa_node(const json& obj, const SpecPath& at, const NodeSpec& spec) {
    const auto first = static_cast<std::uint64_t>(spec.numa.front().node);
    auto numa = get_uint_or(obj, at, "numa_node", first);
    if (!numa) return numa.error();
    for (const auto& n : spec.numa)
        if (n.node == static_cast<int>(*numa)) return n.node;
    return at.child("numa_node").error("no NUMA node " + std::to_string(*numa) +
                                       " in the spec's \"numa\"");
}

Status parse_pcie_switches(const json& j, const SpecPath& at, NodeSpec& spec) {
    if (!j.is_array()) return at.error("expected an array of switches");
    for (std::size_t i = 0; i < j.size(); ++i) {
        const SpecPath sat = at.item(i);
        if (auto st = check_keys(j[i], sat, {"name", "root_port", "upstream"}); !st) return st;
        PcieSwitchSpec s;
        auto name = get_string(j[i], sat, "name");
        if (!name) return name.error();
        if (name->empty()) return sat.child("name").error("expected a non-empty name");
        for (const auto& other : spec.pcie_switches)
            if (other.name == *name) return sat.child("name").error("'" + *name + "' used twice");
        s.name = *name;
        auto root_port = get_pci_bus_id(j[i], sat, "root_port");
        if (!root_port) return root_port.error();
        s.root_port = *root_port;
        auto upstream = get_pci_bus_id(j[i], sat, "upstream");
        if (!upstream) return upstream.error();
        s.upstream = *upstream;
        spec.pcie_switches.push_back(std::move(s));
    }
    return ok_status();
}

namespace {

std::string bus_hex(unsigned bus) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%02x", bus);
    return buf;
}

// An RDMA device name becomes a directory name (IB_DEVICE_NAME_MAX is 64 with the NUL).
bool valid_rdma_name(const std::string& s) {
    return !s.empty() && s.size() < 64 && s.find('/') == std::string::npos && s != "." && s != "..";
}

Result<NicSpec> parse_nic(const json& j, const SpecPath& at, const NodeSpec& spec) {
    if (auto st = check_keys(j, at, {"name", "pci_bus_id", "numa_node", "switch", "link_layer",
                                     "ports", "state"});
        !st)
        return st.error();
    NicSpec n;
    auto name = get_string(j, at, "name");
    if (!name) return name.error();
    if (!valid_rdma_name(*name))
        return at.child("name").error("expected 1..63 characters without '/', got '" + *name + "'");
    n.name = *name;
    auto bus_id = get_pci_bus_id(j, at, "pci_bus_id");
    if (!bus_id) return bus_id.error();
    n.pci_bus_id = *bus_id;
    auto numa = get_numa_node(j, at, spec);
    if (!numa) return numa.error();
    n.numa_node = *numa;
    auto sw = get_switch(j, at, spec);
    if (!sw) return sw.error();
    n.switch_name = *sw;
    if (auto it = j.find("link_layer"); it != j.end()) {
        auto layer = get_string(j, at, "link_layer");
        if (!layer) return layer.error();
        if (*layer == "InfiniBand")
            n.link_layer = LinkLayer::InfiniBand;
        else if (*layer == "Ethernet")
            n.link_layer = LinkLayer::Ethernet;
        else
            return at.child("link_layer")
                .error("expected InfiniBand or Ethernet, got '" + *layer + "'");
    }
    auto ports = get_uint_or(j, at, "ports", 1);
    if (!ports) return ports.error();
    if (*ports < 1 || *ports > 16)  // no RDMA device has more ports
        return at.child("ports").error("expected 1..16, got " + std::to_string(*ports));
    n.ports = static_cast<unsigned>(*ports);
    if (auto it = j.find("state"); it != j.end()) {
        auto state = get_string(j, at, "state");
        if (!state) return state.error();
        const std::pair<const char*, PortState> states[] = {
            {"ACTIVE", PortState::Active}, {"DOWN", PortState::Down},
            {"INIT", PortState::Init}, {"ARMED", PortState::Armed}};
        bool known = false;
        for (const auto& [text, value] : states)
            if (*state == text) n.state = value, known = true;
        if (!known)
            return at.child("state")
                .error("expected ACTIVE, DOWN, INIT or ARMED, got '" + *state + "'");
    }
    return n;
}

}  // namespace

Status parse_nics(const json& j, const SpecPath& at, NodeSpec& spec) {
    if (!j.is_array()) return at.error("expected an array of NICs");
    for (std::size_t i = 0; i < j.size(); ++i) {
        const SpecPath nat = at.item(i);
        auto n = parse_nic(j[i], nat, spec);
        if (!n) return n.error();
        for (const auto& other : spec.nics)
            if (other.name == n->name)
                return nat.child("name").error("'" + n->name + "' used twice");
        spec.nics.push_back(std::move(*n));
    }
    return ok_status();
}

Status check_pcie_tree(const NodeSpec& spec) {
    const auto devices = pci_devices(spec);
    auto at = [&](const PciDeviceRef& d, const std::string& field) {
        return SpecPath{spec.file, d.item + "." + field};
    };
    for (std::size_t i = 0; i < devices.size(); ++i)
        for (std::size_t k = 0; k < i; ++k)
            if (devices[k].bus_id == devices[i].bus_id)
                return at(devices[i], devices[i].field)
                    .error("'" + devices[i].bus_id + "' used twice (also " + devices[k].item + "." +
                           devices[k].field + ")");

    for (std::size_t s = 0; s < spec.pcie_switches.size(); ++s) {
        const PcieSwitchSpec& sw = spec.pcie_switches[s];
        const PciDeviceRef& up_ref = devices[2 * s + 1];  // pci_devices: root port, upstream, ...
        const PciAddress root = *parse_pci_address(sw.root_port);
        const PciAddress up = *parse_pci_address(sw.upstream);
        if (up.domain != root.domain || up.bus <= root.bus || up.bus > 0xfd)
            return at(up_ref, "upstream")
                .error("'" + sw.upstream + "' must be on a bus behind root port " + sw.root_port +
                       " (same domain, bus above " + bus_hex(root.bus) + ", at most fd)");
        const auto attached = switch_devices(devices, sw.name);
        unsigned last = up.bus + 1;
        for (std::size_t k = 0; k < attached.size(); ++k) {
            const PciDeviceRef& d = *attached[k];
            const PciAddress a = *parse_pci_address(d.bus_id);
            if (k == 32)
                return at(d, "switch")
                    .error("switch '" + sw.name + "' has 32 downstream ports, all used");
            if (a.domain != up.domain || a.bus <= up.bus + 1)
                return at(d, "pci_bus_id")
                    .error("'" + d.bus_id + "' must be on a bus behind the downstream ports of " +
                           "switch '" + sw.name + "' (bus " + bus_hex(up.bus + 1) + ")");
            // A switch hangs below one root port: its devices are local to one NUMA node.
            if (d.numa_node != attached.front()->numa_node)
                return at(d, "numa_node")
                    .error(std::to_string(d.numa_node) + ", but " + attached.front()->item +
                           " on the same switch '" + sw.name + "' is on NUMA node " +
                           std::to_string(attached.front()->numa_node));
            last = std::max(last, a.bus);
        }
        // The buses up..last are the switch's: no other device may claim one.
        for (const PciDeviceRef& d : devices) {
            const PciAddress a = *parse_pci_address(d.bus_id);
            const bool own = d.item == up_ref.item || (!d.bridge && d.switch_name == sw.name);
            if (!own && a.domain == up.domain && a.bus >= up.bus && a.bus <= last)
                return at(d, d.field)
                    .error("'" + d.bus_id + "' is on a bus of switch '" + sw.name + "' (" +
                           bus_hex(up.bus) + ".." + bus_hex(last) + ") but not attached to it");
        }
    }
    return ok_status();
}

}  // namespace xpart::sim
