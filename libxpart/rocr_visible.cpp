#include "libxpart/rocr_visible.hpp"

#include <algorithm>

#include "libxpart/visibility.hpp"

namespace xpart {

Result<std::string> rocr_visible_devices(const Node& node, const std::vector<int>& allotted,
                                         RocrCounting counting) {
    if (allotted.empty()) return Error{"ROCR_VISIBLE_DEVICES: no AMD partitions allotted"};
    std::vector<int> all;  // every AMD GPU node of the node
    for (const Gpu& g : node.gpus)
        if (g.vendor == Vendor::Amd)
            for (const Partition& p : g.partitions) all.push_back(p.kfd_node);
    std::vector<int> mine(allotted);
    std::sort(mine.begin(), mine.end());
    for (std::size_t i = 0; i < mine.size(); ++i) {
        if (i > 0 && mine[i] == mine[i - 1])
            return Error{"ROCR_VISIBLE_DEVICES: KFD node " + std::to_string(mine[i]) +
                         " allotted twice"};
        if (std::find(all.begin(), all.end(), mine[i]) == all.end())
            return Error{"ROCR_VISIBLE_DEVICES: KFD node " + std::to_string(mine[i]) +
                         " is not an AMD partition of this node"};
    }
    // What ROCm can open: everything, or only the allotted ones.
    std::vector<bool> openable;
    for (int kfd : all)
        openable.push_back(counting == RocrCounting::AllVisible ||
                           std::binary_search(mine.begin(), mine.end(), kfd));
    const auto numbers = rocm_numbers(all, openable);
    std::string out;
    for (int kfd : mine) {
        const auto at = std::find(all.begin(), all.end(), kfd) - all.begin();
        if (!out.empty()) out += ',';
        out += std::to_string(numbers[static_cast<std::size_t>(at)].value_or(0));
    }
    return out;
}

}  // namespace xpart
