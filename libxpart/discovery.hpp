// Discovery: what partitions this node has, read through the root prefix and NVML.
#pragma once

#include <string>
#include <vector>

#include "libxpart/node.hpp"
#include "libxpart/result.hpp"
#include "libxpart/root_fs.hpp"
#include "libxpart/slurm_type_naming.hpp"

namespace xpart {

// How AMD partitions are named as GRES types (xpart.conf AmdTypeNaming=).
enum class AmdTypeNaming {
    Mode,             // "cpx"             (default: short, what users type)
    ModeMemory,       // "cpx.nps4"
    ModelModeMemory,  // "mi300x.cpx.nps4" (sites mixing AMD models)
};

struct DiscoveryOptions {
    RootFs root;
    bool nvidia = true;
    bool amd = true;
    // NVML library to dlopen. Empty: $XPART_NVML_LIBRARY, else "libnvidia-ml.so.1".
    std::string nvml_library;
    // When false (the default), NVML is loaded only on a node that shows NVIDIA GPUs without
    // it (nvidia_presence.hpp); any other node simply has none, whatever NVML would say.
    bool nvml_required = false;
    // NVML that cannot be loaded or initialised where NVIDIA GPUs are (or are required): when
    // true, one line in Node::errors and discovery goes on with the other vendors (xpart
    // discover, slurmd: register what works, say what does not); when false, the Error.
    // Callers that derive device denials from the node keep false: a node missing its NVIDIA
    // half would leave those devices out of the denied set.
    bool tolerate_nvml_failure = false;
    AmdTypeNaming amd_type_naming = AmdTypeNaming::Mode;
    // TypeNaming=slurm: every GRES type is the name Slurm's own autodetect (gpu/nvml,
    // gpu/rsmi) of `slurm_series` computes (slurm_type_naming.hpp); AmdTypeNaming is then unused.
    TypeNaming type_naming = TypeNaming::Xpart;
    SlurmSeries slurm_series = SlurmSeries::S22_05;
    // Give every MIG partition the monitor capability (/dev/nvidia-caps/nvidia-cap2), which
    // lets its processes watch every MIG instance of the GPU. Off by default, as in Slurm's
    // NVML plugin and NVIDIA's container toolkit; off, the cap is listed in
    // Gpu::withheld_files so deny rules still cover it.
    bool mig_monitor_capability = false;
    // RDMA NICs and each GPU's nearest (rdma_nics.hpp): a few sysfs reads per NIC.
    bool rdma_nics = true;
};

// Full discovery: NVIDIA GPUs first (NVML order), then AMD GPUs (PCI order).
// A GPU in MIG mode without any MIG device stays in Node::gpus with no partition (its device
// node withheld) and gives one line in Node::errors:
// "GPU <index> (<uuid>, <bdf>): " + kMigWithoutDevices.
extern const char* const kMigWithoutDevices;
Result<Node> discover(const DiscoveryOptions& options);

// Vendor halves, for tests and tools.
Result<std::vector<Gpu>> discover_nvidia(const DiscoveryOptions& options);
// With `errors`: an NVML that cannot be loaded or initialised is one line appended there
// ("NVML <file>: nvmlInit_v2: <code> \"<words>\": NVIDIA GPUs not discovered") and no GPU.
Result<std::vector<Gpu>> discover_nvidia(const DiscoveryOptions& options,
                                         std::vector<std::string>* errors);
Result<std::vector<Gpu>> discover_amd(const DiscoveryOptions& options);
// Also appends non-fatal findings (a GPU showing fewer partitions than its mode makes).
Result<std::vector<Gpu>> discover_amd(const DiscoveryOptions& options,
                                      std::vector<std::string>* warnings);

}  // namespace xpart
