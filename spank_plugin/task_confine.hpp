// slurmstepd, as root, between Slurm placing a task (forked, not yet exec'd) in its cgroups
// and the task's exec: what Slurm's rules let the task open, and --xpart-confine.
// - TaskCgroup: the task's device cgroup. Slurm's own task cgroup (task/cgroup,
//   ConstrainDevices=yes) is taken back from the user first (see take_back).
// - task_openable: which device files Slurm's rules (its per-task choice under --gpu-bind or
//   --gpus-per-task among them) let the task open, asked from a helper in that cgroup, so the
//   task's partition is chosen among those (step_plan.hpp, task_slot).
// - confine_task: Slurm's task cgroup is narrowed in place, and Slurm removes it with the step.
//   v1: only denials are written (cgroup::narrow_in_place), so nothing Slurm denied the task
//   opens again. v2: Slurm attaches the task's device program with no flag, so the kernel
//   lets nothing be attached below it; ours replaces it on the task cgroup and runs its code
//   for whatever ours allows (V2DeviceProgram), so every denial of Slurm's stays.
//   Otherwise (no task cgroup): a child cgroup of the task's own, entered by the task, removed
//   by release_task() when the task ends. On v2 our program there carries the program it
//   overrides. The name is rank_cgroup_name(task, slurmstepd pid): one per task and step, and
//   the sweeps recognise it when slurmstepd itself was killed.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "binding/allotment.hpp"
#include "cgroup/layout.hpp"
#include "libxpart/node.hpp"
#include "libxpart/root_fs.hpp"
#include "libxpart/result.hpp"

namespace xpart::spank {

struct TaskCgroup {
    cgroup::Hierarchy hierarchy = cgroup::Hierarchy::V2;
    std::string dir;       // the task's cgroup of that hierarchy
    bool slurms = false;   // Slurm's own task cgroup (narrowed in place)
};

// The task's device cgroup, Slurm's taken back from the user, then looked up again: a user
// who renamed it in between fails the task. Error: one line.
Result<TaskCgroup> task_cgroup(pid_t task);
// The same, with what it reads (/proc/self/mountinfo, /proc/<task>/cgroup) read by `read`
// (tests answer differently from one read to the next).
using ProcRead = std::function<Result<std::string>(const std::string& path)>;
Result<TaskCgroup> task_cgroup(pid_t task, const ProcRead& read);

// Whether the task may open a device file, as its cgroup's rules say now: `files` (host paths
// through `root`) are probed at once; any other file asked of the result counts as openable.
Result<binding::DeviceOpenable> task_openable(const TaskCgroup& where, const RootFs& root,
                                     const std::vector<DeviceFile>& files);

// The child cgroup made for the task, or "" when Slurm's own was narrowed in place. Error
// (nothing left behind): one line naming the task and the cgroup.
Result<std::string> confine_task(const TaskCgroup& where, const Node& node, const Partition& mine,
                                 pid_t task, unsigned local_id);

// Removes a confined task's cgroup once the task ended (what it left running moves to the
// step's cgroup first).
Status release_task(const std::string& dir);

}  // namespace xpart::spank
