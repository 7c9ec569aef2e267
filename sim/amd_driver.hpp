// `xpart-sim driver SPEC ROOT`: plays the amdgpu driver for the AMD GPUs of a root that
// `xpart-sim build SPEC ROOT` made. A write of a PCI device's current_compute_partition is
// refused (EINVAL: not a mode of the model or of its memory partition; EBUSY: a KFD process
// holds the GPU) by restoring the old value, or switches the GPU: its KFD nodes, render nodes
// and platform devices are re-laid (sim/amd_relayout.hpp). A write of current_memory_partition
// takes effect only at the next driver load (a reboot), so the file keeps the old value.
#pragma once

#include <string>

#include "sim/spec.hpp"

namespace xpart::sim {

// Watches ROOT with inotify, prints "ready" on stdout once watching, logs each decision as one
// "xpart-sim driver: ..." line on stderr, and returns 0 at SIGTERM/SIGINT (1 after a one-line
// error when the spec has no switchable AMD GPU or ROOT is not its tree).
int run_amd_driver(const NodeSpec& spec, const std::string& root);

}  // namespace xpart::sim
