// What a cgroup's device rules allow, asked from inside it: root vforks a helper that moves
// itself into the cgroup and open()s each path read-only (libxpart/device_probe.hpp,
// device_denied). The kernel decides, so whatever set the rules (Slurm's programs, ours, a v1
// list) is answered alike; root's privileges change nothing (device rules bind root too).
// vfork, not fork: slurmstepd is large and multithreaded, and a fork's copy of its page tables
// and the copy-on-write faults after it were most of what the question cost per task.
#pragma once

#include <string>
#include <vector>

#include "cgroup/device_cgroup.hpp"
#include "libxpart/result.hpp"

namespace xpart::cgroup {

// One answer per path (true: the cgroup allows it, false: EPERM; a missing file is allowed).
// The helper runs nothing else and exits before this returns. A cgroup that cannot be entered,
// or a frozen v2 cgroup (the helper would stop there, and its suspended parent with it), is
// one line, and nothing is probed or left inside. Slurm's task cgroup, taken back from the
// user first (task_cgroup), has no ancestor the user can freeze.
Result<std::vector<bool>> allowed_in(const DeviceCgroup& cgroup, const std::vector<std::string>& paths);

}  // namespace xpart::cgroup
