#include "libxpart/rdma_nics.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "libxpart/text.hpp"

namespace xpart {

const char* const kNoNearNic =
    "no RDMA NIC nearer than across sockets: GPUDirect RDMA may be very slow or fail";

namespace {

std::string base_name(const std::string& path) {
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "4: ACTIVE" -> "ACTIVE" (ib core writes "<number>: <name>").
std::string state_word(const std::string& text) {
    const std::string t = trim(text);
    const auto colon = t.find(':');
    return colon == std::string::npos ? t : trim(t.substr(colon + 1));
}

Result<RdmaNic> read_nic(const RootFs& root, const std::string& name) {
    const std::string dir = "/sys/class/infiniband/" + name;
    RdmaNic nic;
    nic.name = name;
    // `device` links to the PCI function ("../../../0000:0c:00.0").
    auto device = root.read_link(dir + "/device");
    if (!device) return device.error();
    nic.pci_bus_id = base_name(*device);
    auto ports = root.list(dir + "/ports");
    if (!ports) return ports.error();
    for (const std::string& p : *ports) {
        RdmaPort port;
        try {
            port.number = static_cast<unsigned>(std::stoul(p));
        } catch (...) {
            continue;  // not a port directory
        }
        auto state = root.read(dir + "/ports/" + p + "/state");
        if (!state) return state.error();
        port.state = state_word(*state);
        if (auto layer = root.read(dir + "/ports/" + p + "/link_layer")) port.link_layer = trim(*layer);
        nic.ports.push_back(std::move(port));
    }
    std::sort(nic.ports.begin(), nic.ports.end(),
              [](const RdmaPort& a, const RdmaPort& b) { return a.number < b.number; });
    return nic;
}

}  // namespace

std::vector<RdmaNic> discover_rdma_nics(const RootFs& root, std::vector<std::string>& warnings) {
    std::vector<RdmaNic> nics;
    const std::string cls = "/sys/class/infiniband";
    if (!root.exists(cls)) return nics;
    auto names = root.list(cls);
    if (!names) {
        warnings.push_back("RDMA NICs not read: " + names.error().message);
        return nics;
    }
    for (const std::string& name : *names) {
        auto nic = read_nic(root, name);
        if (!nic) {
            warnings.push_back("RDMA NIC " + name + " left out: " + nic.error().message);
            continue;
        }
        nics.push_back(std::move(*nic));
    }
    std::stable_sort(nics.begin(), nics.end(), [](const RdmaNic& a, const RdmaNic& b) {
        return std::tie(a.pci_bus_id, a.name) < std::tie(b.pci_bus_id, b.name);
    });
    return nics;
}

void assign_nic_routes(Node& node, const std::vector<PciLocation>& gpus,
                       const std::vector<PciLocation>& nics) {
    for (const RdmaNic& n : node.nics)
        if (n.active_port() == 0)
            node.warnings.push_back("RDMA NIC " + n.name + " (" + n.pci_bus_id +
                                    "): no port ACTIVE; not chosen for any GPU");
    std::vector<std::size_t> order(node.gpus.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return node.gpus[a].pci_bus_id < node.gpus[b].pci_bus_id;
    });
    std::vector<unsigned> taken(node.nics.size(), 0);  // GPUs that have the NIC as their own
    for (std::size_t g : order) {
        struct Candidate {
            PciPath path;
            unsigned taken;
            std::size_t nic;
        };
        std::vector<Candidate> candidates;
        for (std::size_t n = 0; n < node.nics.size(); ++n)
            if (node.nics[n].active_port() != 0)
                candidates.push_back({pci_path_between(gpus[g], nics[n]), taken[n], n});
        std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
            return std::tie(a.path, a.taken, a.nic) < std::tie(b.path, b.taken, b.nic);
        });
        Gpu& gpu = node.gpus[g];
        gpu.nics.clear();
        for (const Candidate& c : candidates)
            gpu.nics.push_back({node.nics[c.nic].name, node.nics[c.nic].active_port(), c.path});
        if (candidates.empty()) continue;
        ++taken[candidates.front().nic];
        if (candidates.front().path == PciPath::CrossSocket)
            node.warnings.push_back("GPU " + std::to_string(gpu.index) + " (" + gpu.pci_bus_id +
                                    "): " + kNoNearNic + " (nearest: " + gpu.nics.front().nic + ")");
    }
}

void attach_rdma_nics(const RootFs& root, Node& node) {
    node.nics = discover_rdma_nics(root, node.warnings);
    if (node.nics.empty()) return;
    std::vector<PciLocation> gpus, nics;
    SocketCache sockets;
    for (const Gpu& g : node.gpus) gpus.push_back(locate_pci_device(root, g.pci_bus_id, &sockets));
    for (RdmaNic& n : node.nics) {
        nics.push_back(locate_pci_device(root, n.pci_bus_id, &sockets));
        n.numa_node = nics.back().numa_node;
    }
    assign_nic_routes(node, gpus, nics);
}

}  // namespace xpart
