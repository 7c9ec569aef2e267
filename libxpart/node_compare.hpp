// The node slurmd registered (its node cache) against the node as discovery finds it now: what
// `xpart node check` (and the Prolog hook that runs it) reports. It sees what the step check
// cannot afford to (that check makes no NVML call): a MIG instance destroyed and re-made with
// the same GI/CI ids has a new UUID, which only NVML tells.
#pragma once

#include <string>
#include <vector>

#include "libxpart/node.hpp"

namespace xpart {

// One line per difference, GPUs matched by UUID and partitions by MIG GI/CI ids (else their
// index within the GPU): a GPU or partition gone or new, a UUID changed, a mode changed (a
// GPU whose mode changed is one line, not one per partition). Types are not compared: the
// CLI and the plugin may name them differently, and what changes a type changes the UUID or
// the mode too.
std::vector<std::string> node_differences(const Node& registered, const Node& now);

}  // namespace xpart
