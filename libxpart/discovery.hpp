// Discovery: what partitions this node has, read through the root prefix and NVML.
#pragma once

#include <string>
#include <vector>

#include "libxpart/node.hpp"
#include "libxpart/result.hpp"
#include "libxpart/root_fs.hpp"

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
    // When false (the default), a node without the NVML library and without
    // /proc/driver/nvidia simply has no NVIDIA GPUs. When the driver is present but NVML
    // cannot be loaded or fails, discovery fails: a GPU node must never look GPU-less.
    bool nvml_required = false;
    AmdTypeNaming amd_type_naming = AmdTypeNaming::Mode;
    // Give every MIG partition the monitor capability (/dev/nvidia-caps/nvidia-cap2), which
    // lets its processes watch every MIG instance of the GPU. Off by default, as in Slurm's
    // NVML plugin and NVIDIA's container toolkit; off, the cap is listed in
    // Gpu::withheld_files so deny rules still cover it.
    bool mig_monitor_capability = false;
};

// Full discovery: NVIDIA GPUs first (NVML order), then AMD GPUs (PCI order).
Result<Node> discover(const DiscoveryOptions& options);

// Vendor halves, for tests and tools.
Result<std::vector<Gpu>> discover_nvidia(const DiscoveryOptions& options);
Result<std::vector<Gpu>> discover_amd(const DiscoveryOptions& options);
// Also appends non-fatal findings (a GPU showing fewer partitions than its mode makes).
Result<std::vector<Gpu>> discover_amd(const DiscoveryOptions& options,
                                      std::vector<std::string>* warnings);

}  // namespace xpart
