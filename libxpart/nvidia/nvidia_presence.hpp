// Whether a node has NVIDIA GPUs, from what the kernel shows without NVML. It decides whether
// an NVML that fails matters: on an NVIDIA node it hides GPUs (an error); on any other node
// (an AMD node with libnvidia-ml installed) NVML is not asked at all.
#pragma once

#include "libxpart/root_fs.hpp"

namespace xpart {

// True when the driver lists a GPU (/proc/driver/nvidia/gpus/<bdf>), or, since a driver that
// failed to load lists nothing, when a PCI device of vendor 0x10de is a display controller
// (class 0x0300 VGA or 0x0302 3D; NVSwitches are bridges, 0x0680). A vendor-0x10de device
// whose class cannot be read or parsed counts: better a loud error than GPUs lost in silence.
bool has_nvidia_gpus(const RootFs& root);

}  // namespace xpart
