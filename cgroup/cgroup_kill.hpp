// Ending every process of a cgroup root made. The authority to signal is membership, which
// only root can grant where root owns the cgroup's cgroup.procs: never a pid read from a file.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "cgroup/layout.hpp"
#include "libxpart/result.hpp"

namespace xpart::cgroup {

struct KillReport {
    std::size_t signalled = 0;  // processes sent SIGKILL
    std::size_t left = 0;       // members still listed when `wait` ran out
};

// SIGKILLs every member of `dir` (the cgroup <mount>/<...> on hierarchy `h`) until none is
// listed or `wait` passes. v2 writes cgroup.kill where the kernel has it (5.14); otherwise
// each listed pid is opened as a pidfd and signalled only while its /proc/<pid>/cgroup still
// names `dir`, so a pid that exited and was reused by a process elsewhere is never signalled.
Result<KillReport> kill_members(Hierarchy h, const std::string& mount, const std::string& dir,
                                std::chrono::milliseconds wait);

// No process listed in the cgroup's cgroup.procs (also: it cannot be read).
bool is_empty(const std::string& dir);

// Does this /proc/<pid>/cgroup text put the process in `relative` (the cgroup's path below its
// mount, "/a/b") on hierarchy `h` (v1: the line whose controllers include "devices")?
bool member_of(std::string_view proc_cgroup, Hierarchy h, std::string_view relative);

}  // namespace xpart::cgroup
