// Ending every process of a cgroup root made. The authority to signal is membership, which
// only root can grant where root owns the cgroup's cgroup.procs: never a pid read from a file.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

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
// The same for any hierarchy: `controller` as in MountedHierarchy ("" : the "0::" line).
bool member_of(std::string_view proc_cgroup, std::string_view controller, std::string_view relative);

// A process still listed when the wait ran out, and where.
struct Survivor {
    pid_t pid = 0;
    std::string cgroup;
};
struct SubtreeKill {
    std::size_t signalled = 0;        // processes sent SIGKILL
    std::vector<Survivor> survivors;  // still listed when `wait` ran out
};
// SIGKILLs every process in `top` and in every cgroup below it (a user may have made some on
// v1, and moved processes there), until none is listed or `wait` passes; links are never
// followed. Each pid is signalled through a pidfd, only while /proc/<pid>/cgroup still puts it
// in the cgroup it was listed in (a pid reused elsewhere is never signalled); on v2,
// cgroup.kill of `top` first (the kernel kills the subtree and what forks meanwhile). A
// process that moves within the subtree is found again on the next round.
Result<SubtreeKill> kill_subtree(const MountedHierarchy& where, const std::string& top,
                                 std::chrono::milliseconds wait);

// Every cgroup directory below `top` (not `top`), each before its parent: the order to remove
// them in. Error past 65536 of them (a user's v1 cgroups are bounded by nothing else).
Result<std::vector<std::string>> cgroups_below(const std::string& top);
// rmdir of every cgroup below `top`, deepest first, then of `top` (once kill_subtree left them
// empty). Error names the first that stays.
Status remove_cgroup_tree(const std::string& top);

}  // namespace xpart::cgroup
