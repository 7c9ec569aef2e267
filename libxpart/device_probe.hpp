// Whether this process may open a device file, as the device cgroup decides: the probe the
// isolation tests use, and what a task under its own device constraint can learn about it.
#pragma once

#include <string>

namespace xpart {

// open() of a host path, read-write as ROCm opens render nodes, or read-only as CUDA opens MIG
// capability files (0444 on a real node): success, ENXIO or ENODEV (a node without its driver,
// as in the simulator) = openable; EPERM (the device cgroup), EACCES or ENOENT = not.
bool device_openable(const std::string& host_path, bool write = true);

// Whether the device cgroup refuses this process the file (open() read-only fails with
// EPERM): what Slurm's device rules decide, apart from the file's mode bits or its absence.
bool device_denied(const std::string& host_path);

}  // namespace xpart
