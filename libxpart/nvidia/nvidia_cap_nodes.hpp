// After a reshape, the /dev/nvidia-caps nodes of new MIG instances may not exist yet: the
// driver adds their procfs capability files at once, while the device nodes are made by
// nvidia-modprobe when a process first needs them, which a job confined by a device cgroup may
// not be allowed to (mknod is a device access too). Root makes them here, as nvidia-modprobe
// would: the minor and mode from the instance's capability file, the major from /proc/devices.
#pragma once

#include "libxpart/node.hpp"
#include "libxpart/result.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart {

// Makes each missing GPU-instance and compute-instance capability node of `gpu`'s MIG
// partitions; returns how many it made. An existing path that is not that character device is
// an error naming it (never replaced).
Result<unsigned> make_missing_cap_nodes(const RootFs& root, const Gpu& gpu);

}  // namespace xpart
