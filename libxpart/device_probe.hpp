// Whether this process may open a device file, as the device cgroup decides: the probe the
// isolation tests use, and what a task under its own device constraint can learn about it.
#pragma once

#include <string>

namespace xpart {

// open(O_RDWR) of a host path: success, ENXIO or ENODEV (a node without its driver, as in the
// simulator) = the cgroup lets it through; EPERM (the device cgroup), EACCES or ENOENT = not.
bool device_openable(const std::string& host_path);

}  // namespace xpart
