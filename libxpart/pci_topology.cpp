#include "libxpart/pci_topology.hpp"

#include "libxpart/text.hpp"

namespace xpart {

namespace {

// "/sys/bus/pci/devices" + "../../../devices/pci0000:00/..." -> "/sys/devices/pci0000:00/...".
std::string resolve_relative(const std::string& dir, const std::string& target) {
    std::vector<std::string> parts;
    if (target.empty() || target[0] != '/')
        for (const auto& p : split(dir, '/'))
            if (!p.empty()) parts.push_back(p);
    for (const auto& p : split(target, '/')) {
        if (p.empty() || p == ".") continue;
        if (p == "..") {
            if (!parts.empty()) parts.pop_back();
        } else {
            parts.push_back(p);
        }
    }
    std::string out;
    for (const auto& p : parts) out += "/" + p;
    return out;
}

int read_int(const RootFs& root, const std::string& path, int fallback) {
    auto text = root.read(path);
    if (!text) return fallback;
    try {
        return std::stoi(trim(*text));
    } catch (...) {
        return fallback;
    }
}

// The package of the NUMA node's first CPU: sockets can hold several NUMA nodes (NPS4).
int socket_of_numa_node(const RootFs& root, int numa) {
    if (numa < 0) return -1;
    auto list = root.read("/sys/devices/system/node/node" + std::to_string(numa) + "/cpulist");
    if (!list) return -1;
    auto cpus = parse_cpu_list(trim(*list));
    if (!cpus || cpus->empty()) return -1;
    return read_int(root,
                    "/sys/devices/system/cpu/cpu" + std::to_string(cpus->front()) +
                        "/topology/physical_package_id",
                    -1);
}

}  // namespace

void parse_pci_device_path(const std::string& path, PciLocation& out) {
    out.host_bridge.clear();
    out.bridges.clear();
    bool below_bridge = false;
    for (const auto& part : split(path, '/')) {
        if (!below_bridge) {
            // Virtual machines may put the host bridge below other nodes (LNXSYSTM:00/...).
            if (part.rfind("pci", 0) == 0 && part.find(':') != std::string::npos) {
                out.host_bridge = part;
                below_bridge = true;
            }
            continue;
        }
        out.bridges.push_back(part);
    }
    if (!out.bridges.empty()) {
        out.bdf = out.bridges.back();
        out.bridges.pop_back();
    }
}

PciLocation locate_pci_device(const RootFs& root, const std::string& bdf, SocketCache* sockets) {
    PciLocation loc;
    loc.bdf = bdf;
    const std::string dir = "/sys/bus/pci/devices";
    if (auto target = root.read_link(dir + "/" + bdf)) {
        parse_pci_device_path(resolve_relative(dir, *target), loc);
        if (loc.bdf != bdf) {  // not the device we asked for: know nothing rather than a lie
            loc.host_bridge.clear();
            loc.bridges.clear();
            loc.bdf = bdf;
        }
    }
    loc.numa_node = read_int(root, dir + "/" + bdf + "/numa_node", -1);
    if (!sockets) {
        loc.socket = socket_of_numa_node(root, loc.numa_node);
    } else {
        auto [at, added] = sockets->try_emplace(loc.numa_node, -1);
        if (added) at->second = socket_of_numa_node(root, loc.numa_node);
        loc.socket = at->second;
    }
    return loc;
}

PciPath pci_path_between(const PciLocation& a, const PciLocation& b) {
    if (!a.host_bridge.empty() && a.host_bridge == b.host_bridge) {
        // Sharing the root port means sharing the switch below it: a port has one link.
        if (!a.bridges.empty() && !b.bridges.empty() && a.bridges.front() == b.bridges.front())
            return PciPath::Switch;
        return PciPath::RootComplex;
    }
    if (a.socket >= 0 && a.socket == b.socket) return PciPath::Socket;
    if (a.socket < 0 && b.socket < 0 && a.numa_node >= 0 && a.numa_node == b.numa_node)
        return PciPath::Socket;
    return PciPath::CrossSocket;
}

}  // namespace xpart
