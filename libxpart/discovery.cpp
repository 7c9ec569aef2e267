#include "libxpart/discovery.hpp"

#include "libxpart/rdma_nics.hpp"

namespace xpart {

const char* const kMigWithoutDevices =
    "MIG mode is on but no MIG device exists; not registered: create MIG devices "
    "(nvidia-smi mig -cgi ... -C) or disable MIG mode";

Result<Node> discover(const DiscoveryOptions& options) {
    Node node;
    if (options.nvidia) {
        auto gpus = discover_nvidia(options, options.tolerate_nvml_failure ? &node.errors : nullptr);
        if (!gpus) return gpus.error();
        for (auto& g : *gpus) {
            if (g.mode == PartitionMode::MigPending)
                node.warnings.push_back("GPU " + std::to_string(g.index) + " (" + g.uuid +
                                        "): MIG mode change pending a GPU reset; not bound");
            // Slurm 22.05's own NVML autodetect stops slurmd here (fatal); the other GPUs
            // still register, and this one is said once.
            if (g.mode == PartitionMode::Mig && g.partitions.empty())
                node.errors.push_back("GPU " + std::to_string(g.index) + " (" + g.uuid + ", " +
                                      g.pci_bus_id + "): " + kMigWithoutDevices);
            node.gpus.push_back(std::move(g));
        }
    }
    if (options.amd) {
        auto gpus = discover_amd(options, &node.warnings);
        if (!gpus) return gpus.error();
        for (auto& g : *gpus) node.gpus.push_back(std::move(g));
    }
    if (options.rdma_nics) attach_rdma_nics(options.root, node);
    return node;
}

}  // namespace xpart
