#include "libxpart/rocr_visible.hpp"

#include <algorithm>

namespace xpart {

Result<std::string> rocr_visible_devices(const Node& node, const std::vector<int>& allotted,
                                         RocrCounting counting) {
    if (allotted.empty()) return Error{"ROCR_VISIBLE_DEVICES: no AMD partitions allotted"};
    std::vector<int> all;  // every AMD GPU node of the node, KFD order
    for (const Gpu& g : node.gpus)
        if (g.vendor == Vendor::Amd)
            for (const Partition& p : g.partitions) all.push_back(p.kfd_node);
    std::sort(all.begin(), all.end());
    std::vector<int> mine(allotted);
    std::sort(mine.begin(), mine.end());
    for (std::size_t i = 0; i < mine.size(); ++i) {
        if (i > 0 && mine[i] == mine[i - 1])
            return Error{"ROCR_VISIBLE_DEVICES: KFD node " + std::to_string(mine[i]) +
                         " allotted twice"};
        if (!std::binary_search(all.begin(), all.end(), mine[i]))
            return Error{"ROCR_VISIBLE_DEVICES: KFD node " + std::to_string(mine[i]) +
                         " is not an AMD partition of this node"};
    }
    std::string out;
    for (std::size_t i = 0; i < mine.size(); ++i) {
        std::size_t index = counting == RocrCounting::OthersHidden
                                ? i
                                : static_cast<std::size_t>(
                                      std::lower_bound(all.begin(), all.end(), mine[i]) - all.begin());
        if (!out.empty()) out += ',';
        out += std::to_string(index);
    }
    return out;
}

}  // namespace xpart
