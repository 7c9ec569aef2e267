// The per-instance MIG capability files and device nodes of one GPU, shared by the tree
// builder and the fake NVML (which keeps a simulated root in step when it reshapes a GPU).
#pragma once

#include "libxpart/result.hpp"
#include "sim/spec_nvidia.hpp"
#include "sim/tree.hpp"

namespace xpart::sim {

// /proc/driver/nvidia/capabilities/gpu<minor>/mig/gi<G>[/ci<C>]/access and
// /dev/nvidia-caps/nvidia-cap<N> for every instance of g. With skip_unpermitted_nodes, a node
// that mknod refuses with EPERM (not root) is left out and the procfs files still written.
Status write_mig_capabilities(const NvidiaGpuSpec& g, unsigned caps_major, const TreeWriter& tree,
                              bool skip_unpermitted_nodes = false);
// Removes every per-instance capability file and node of g's minor (whatever instances had).
Status remove_mig_capabilities(const NvidiaGpuSpec& g, const TreeWriter& tree);

}  // namespace xpart::sim
