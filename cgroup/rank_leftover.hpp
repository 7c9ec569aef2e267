// Leftover rank cgroups: `xpart launch --confine=rank` makes <own cgroup>/xpart_rank<R>_<pid>
// and removes it when the program ends. A launcher killed with SIGKILL cannot, and the empty
// child then keeps Slurm's task/step/job cgroups from being removed (rmdir of a directory with
// a subdirectory fails). This finds such leftovers and removes them: only a cgroup with no
// process and no child cgroup, whose launcher (the pid in its name) is gone or is no longer
// an xpart process. A busy cgroup is never touched (the kernel would refuse the rmdir anyway,
// but a cgroup whose launcher still runs may be between its mkdir and its child's entry).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cgroup/cgroup_dirs.hpp"
#include "cgroup/layout.hpp"
#include "libxpart/result.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart::cgroup {

// "xpart_rank<rank>_<launcher pid>", the one place the name is spelled.
std::string rank_cgroup_name(unsigned rank, pid_t launcher);
struct RankCgroupName {
    unsigned rank = 0;
    pid_t launcher = 0;
};
// nullopt unless `name` is exactly a rank cgroup name (decimal numbers, no sign, pid > 0).
std::optional<RankCgroupName> parse_rank_cgroup_name(std::string_view name);

// The process a rank cgroup's name points at, from /proc/<pid>/stat.
enum class LauncherState {
    Gone,      // no such process, or a zombie (the launcher died; nobody will remove it)
    NotXpart,  // the pid was reused by another program
    Xpart,     // an xpart process: the launcher itself, or one we cannot tell from it
};
// `proc` is the root /proc is read under ("/" on a live node; a temp tree in tests).
LauncherState launcher_state(const RootFs& proc, pid_t pid);
// The same from /proc/<pid>/stat text (parse_proc_stat); nullopt when not of that form.
std::optional<LauncherState> launcher_state_from_stat(std::string_view stat);

// What a cgroup directory holds: processes (lines of cgroup.procs) and child cgroups.
struct CgroupOccupancy {
    std::size_t processes = 0;
    std::size_t children = 0;
};
Result<CgroupOccupancy> read_occupancy(const std::string& dir);

enum class LeftoverVerdict { Remove, KeepBusy, KeepLauncherRuns };
const char* to_string(LeftoverVerdict v);
// The whole policy, pure: busy first (a cgroup with processes or children is never
// removed, whoever made it), then the launcher (a live xpart launcher still owns it).
LeftoverVerdict judge_rank_leftover(const CgroupOccupancy& occupancy, LauncherState launcher);

// What the sweep reads from and does to the system; tests swap in fakes.
struct SweepHost {
    RootFs proc = RootFs("/");
    bool dry_run = false;  // decide and report, remove nothing
    // Removes one cgroup directory. Empty: DeviceCgroup::open(h, dir) and remove() (rmdir,
    // and our v1 state file with it).
    std::function<Status(Hierarchy, const std::string& dir)> remove;
};

// One decision the sweep made, for the caller to print.
struct SweepEntry {
    enum class Outcome { Removed, WouldRemove, Kept, Failed };
    std::string path;
    Outcome outcome = Outcome::Kept;
    std::string why;  // for Kept and Failed
};
const char* to_string(SweepEntry::Outcome o);
// "removed <path>", "kept <path>: <why>", ...: one line per entry.
std::string format_entry(const SweepEntry& e);

// Removes (via host.remove) one directory if it is empty of processes and children; Kept
// otherwise. Shared by the rank sweep and the Slurm job sweep.
SweepEntry remove_if_empty(Hierarchy h, const std::string& dir, const SweepHost& host);
// Judges and, for Remove, removes one rank cgroup directory named `name`.
SweepEntry sweep_rank_leftover(Hierarchy h, const std::string& dir, const RankCgroupName& name,
                               const SweepHost& host);
// Every rank cgroup at most `depth` levels below `dir` (1: its children only). Other
// directories are only descended into; symbolic links are never followed. Entries in path order.
std::vector<SweepEntry> sweep_rank_leftovers(Hierarchy h, const std::string& dir, unsigned depth,
                                             const SweepHost& host);

// Calls visit(name, path) for each child cgroup of `dir` in name order; a directory that
// cannot be listed becomes a Failed entry in `out`. The walk both sweeps are built on.
void for_each_child(const std::string& dir, std::vector<SweepEntry>& out,
                    const std::function<void(const std::string& name, const std::string& path)>& visit);

}  // namespace xpart::cgroup
