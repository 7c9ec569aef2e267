#include "libxpart/node_compare.hpp"

namespace xpart {
namespace {

std::string gpu_name(const Gpu& g) {
    return "GPU " + std::to_string(g.index) + " (" + g.pci_bus_id + ", " + g.uuid + ")";
}

std::string partition_name(const Partition& p) {
    std::string where = p.gi >= 0 ? "GI " + std::to_string(p.gi) + " CI " + std::to_string(p.ci)
                                  : "partition " + std::to_string(p.index);
    return where + " (" + p.type + ")";
}

bool same_place(const Partition& a, const Partition& b) {
    return a.gi == b.gi && a.ci == b.ci && a.index == b.index;
}

const Gpu* find_gpu(const Node& node, const Gpu& like) {
    for (const auto& g : node.gpus)
        if (g.vendor == like.vendor && g.uuid == like.uuid) return &g;
    return nullptr;
}

void partition_differences(const Gpu& was, const Gpu& now, std::vector<std::string>& out) {
    const std::string gpu = gpu_name(now) + ": ";
    for (const auto& p : was.partitions) {
        const Partition* q = nullptr;
        for (const auto& c : now.partitions)
            if (same_place(p, c)) q = &c;
        if (!q) out.push_back(gpu + partition_name(p) + " " + p.uuid + " gone");
        else if (q->uuid != p.uuid)
            out.push_back(gpu + partition_name(p) + ": UUID is now " + q->uuid +
                          ", slurmd registered " + p.uuid);
    }
    for (const auto& c : now.partitions) {
        bool known = false;
        for (const auto& p : was.partitions) known = known || same_place(p, c);
        if (!known) out.push_back(gpu + partition_name(c) + " " + c.uuid + " new");
    }
}

}  // namespace

std::vector<std::string> node_differences(const Node& registered, const Node& now) {
    std::vector<std::string> out;
    for (const auto& was : registered.gpus) {
        const Gpu* is = find_gpu(now, was);
        if (!is) {
            out.push_back(gpu_name(was) + ": gone");
        } else if (is->mode != was.mode) {
            out.push_back(gpu_name(*is) + ": mode is now " + to_string(is->mode) +
                          ", slurmd registered " + to_string(was.mode));
        } else {
            partition_differences(was, *is, out);
        }
    }
    for (const auto& is : now.gpus)
        if (!find_gpu(registered, is)) out.push_back(gpu_name(is) + ": new");
    return out;
}

}  // namespace xpart
