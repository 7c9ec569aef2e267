// A Slurm step's v1 cgroups made root's again before the step's processes run, in every
// controller Slurm uses (freezer, cpuset, memory, devices, ...).
//
// Slurm's cgroup/v1 makes each step's directory and each task's the job user's
// (xcgroup_create_hierarchy and _handle_task_cgroup pass the job's uid to
// common_cgroup_instantiate, which chowns the directory; the files inside stay root's). The
// user could then make a cgroup there, and on v1 moving a process of one's own needs write
// access to the target only: any process of the job, an MPS daemon root started for it among
// them, would leave the cgroups Slurm and root list and kill at the job's end, keeping the
// job's device rules in one of its own. Root takes every such directory back (fchown to 0:0),
// so no cgroup can be made below a step once its tasks run.
//
// A process of another step of the same job (or of another job of the same user) may still
// have made one between Slurm's chown and the take-back: a cgroup whose cgroup.procs is not
// root's is the user's (the kernel gives a new cgroup's files to its creator); its processes
// are killed and it is removed, and the caller logs it.
//
// On cgroup v2 nothing is needed: moving a process needs write access to the cgroup.procs of
// the common ancestor too, and every one of Slurm's is root's.
#pragma once

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cgroup/layout.hpp"
#include "libxpart/result.hpp"

namespace xpart::cgroup {

// The step's path below each v1 mount ("/slurm_n1/uid_5/job_7/step_0"), from a
// /proc/<pid>/cgroup text of a process in the step's cgroups (slurmstepd joins its step's own
// in each controller it constrains): the first v1 line whose path ends in
// "/job_<digits>/step_<name>", or one level below it. nullopt when no line does.
std::optional<std::string> slurm_step_path(std::string_view proc_cgroup);

// fchown(0, 0) of `dir` unless root owns it already (opened O_NOFOLLOW: never through a link);
// true when it was someone else's.
Result<bool> take_back(const std::string& dir);

// Is `dir` a cgroup its creator was not root: its cgroup.procs is not root's?
bool made_by_user(const std::string& dir);

struct StepReclaim {
    std::size_t taken = 0;             // directories made root's
    std::vector<std::string> removed;  // the user's cgroups ended: "<dir> (<n> killed)"
};

// One slurmstepd's take-back, called once per task (slurm_spank_task_post_fork): the first
// call takes back the step's directory on each hierarchy, then each call only the task
// directories made since. Once the step's directory is root's no cgroup of the user's can
// appear in it, only inside a task directory not yet taken back, so a step of T tasks costs
// O(T) directory operations, not O(T^2).
class SlurmStepReclaimer {
public:
    // `v1`: the node's v1 hierarchies; `step`: the step's path below each (slurm_step_path).
    SlurmStepReclaimer(std::vector<MountedHierarchy> v1, std::string step);
    // slurmstepd's own, from /proc/self/mountinfo and /proc/self/cgroup; one with nothing to
    // do on a node without v1 hierarchies, or for a process outside Slurm's v1 step cgroups.
    static Result<SlurmStepReclaimer> for_this_process();

    // Error (one line naming the cgroup) when a directory cannot be taken back, or a cgroup of
    // the user's cannot be ended within `wait`.
    Result<StepReclaim> run(std::chrono::milliseconds wait);

private:
    // Takes `dir` back unless done, ends the user's cgroups among its children not yet done,
    // and for the step's directory (`step`) does the same in each task directory.
    Status reclaim(const MountedHierarchy& h, const std::string& dir, bool step, std::chrono::milliseconds wait,
                   StepReclaim& out);
    std::vector<MountedHierarchy> v1_;
    std::string step_;
    std::set<std::string> done_;  // directories taken back, the user's cgroups in them ended
};

// One whole take-back of `step` (a fresh SlurmStepReclaimer's run).
Result<StepReclaim> reclaim_slurm_step(const std::vector<MountedHierarchy>& v1, const std::string& step,
                                       std::chrono::milliseconds wait);

}  // namespace xpart::cgroup
