// What a cgroup's device rules allow, asked from inside it: root forks a helper, moves it into
// the cgroup, and the helper open()s each path read-only (libxpart/device_probe.hpp,
// device_denied). The kernel decides, so whatever set the rules (Slurm's programs, ours, a v1
// list) is answered alike; root's privileges change nothing (device rules bind root too).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "cgroup/device_cgroup.hpp"
#include "libxpart/result.hpp"

namespace xpart::cgroup {

// One answer per path (true: the cgroup allows it, false: EPERM; a missing file is allowed). The helper never runs anything else and is
// killed past `limit` (a frozen cgroup): then, or when it cannot be moved in, one line, and
// nothing is left in the cgroup.
Result<std::vector<bool>> allowed_in(const DeviceCgroup& cgroup, const std::vector<std::string>& paths,
                                      std::chrono::milliseconds limit = std::chrono::seconds(10));

}  // namespace xpart::cgroup
