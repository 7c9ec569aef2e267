// Re-lays the AMD part of a built root in place after a compute-partition switch, as amdgpu
// re-creates a GPU's KFD nodes and render nodes: afterwards the root is what `xpart-sim build`
// of the new spec makes, but for generation_id (incremented, as the kernel does on every
// topology change) and the KFD process registry (kept). Not atomic: readers see a briefly
// incomplete tree, and generation_id changes last.
#pragma once

#include <string>

#include "libxpart/result.hpp"
#include "sim/spec.hpp"

namespace xpart::sim {

// `from`: the spec the root now shows; `to`: the same node with other partition modes.
// current_compute_partition and current_memory_partition files are left as they are (a user
// write not yet handled must survive); the caller sets the switched GPU's own.
Status relay_amd_tree(const NodeSpec& from, const NodeSpec& to, const std::string& root);

}  // namespace xpart::sim
