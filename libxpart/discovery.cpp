#include "libxpart/discovery.hpp"

namespace xpart {

Result<Node> discover(const DiscoveryOptions& options) {
    Node node;
    if (options.nvidia) {
        auto gpus = discover_nvidia(options, options.tolerate_nvml_failure ? &node.errors : nullptr);
        if (!gpus) return gpus.error();
        for (auto& g : *gpus) {
            if (g.mode == PartitionMode::MigPending)
                node.warnings.push_back("GPU " + std::to_string(g.index) + " (" + g.uuid +
                                        "): MIG mode change pending a GPU reset; not bound");
            node.gpus.push_back(std::move(g));
        }
    }
    if (options.amd) {
        auto gpus = discover_amd(options, &node.warnings);
        if (!gpus) return gpus.error();
        for (auto& g : *gpus) node.gpus.push_back(std::move(g));
    }
    return node;
}

}  // namespace xpart
