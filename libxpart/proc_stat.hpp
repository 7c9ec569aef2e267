// /proc/<pid>/stat, read and parsed in one place, for everything that asks whether a pid is
// (still) a given process: the launcher's identity check and the rank-cgroup sweep.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "libxpart/root_fs.hpp"

namespace xpart {

struct ProcStat {
    std::string comm;  // field 2 without its parentheses: the executable's name, 15 bytes at most
    char state = '?';  // field 3
    pid_t ppid = 0;    // field 4: the parent (0: none, or the text ends before it)
    // Field 22, clock ticks since boot: with the pid, what tells a process from a later one
    // under the same pid. nullopt when the text ends before it.
    std::optional<unsigned long long> start_time;

    // A zombie or a dead task ('x' on kernels before 3.14): it runs no more.
    bool gone() const { return state == 'Z' || state == 'X' || state == 'x'; }
};

// "<pid> (<comm>) <state> ...": the comm may hold spaces and parentheses, so it ends at the
// LAST ')'. nullopt when the text is not of that form.
std::optional<ProcStat> parse_proc_stat(std::string_view text);

// /proc/<pid>/stat under `proc` ("/" on a live node). nullopt when there is no such process
// to show: the read failed (ENOENT, or ESRCH when it died while read) or the text is not of
// the form. Never throws.
std::optional<ProcStat> read_proc_stat(const RootFs& proc, pid_t pid);

}  // namespace xpart
