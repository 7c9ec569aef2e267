// --xpart-confine: slurmstepd, as root, narrows each task (forked, not yet exec'd) to its own
// partition's device files.
// - Slurm's task cgroup (task/cgroup, ConstrainDevices=yes): narrowed in place, and Slurm
//   removes it with the step.
//   v1: its parent, the step's cgroup, bounds what can be granted (cgroup::narrow_in_place),
//   so a task never opens anything the step was not given; the task's own partition is
//   allowed even where Slurm's per-task choice (--gpu-bind, --gpus-per-task) left it another.
//   v2: Slurm attaches the task's device program with no flag, so the kernel lets nothing be
//   attached below it; ours replaces it on the task cgroup and runs its code for whatever ours
//   allows (V2DeviceProgram), so every denial of Slurm's stays and a partition Slurm's
//   per-task choice withheld opens nowhere (task_env then tells the task none).
// - Otherwise (no task cgroup): a child cgroup of the task's own, entered by the task, removed
//   by release_task() when the task ends. On v2 our program there carries the program it
//   overrides. The name is rank_cgroup_name(task, slurmstepd pid): one per task and step, and
//   the sweeps recognise it when slurmstepd itself was killed.
#pragma once

#include <sys/types.h>

#include <string>

#include "libxpart/node.hpp"
#include "libxpart/result.hpp"

namespace xpart::launch {

// The child cgroup made for the task, or "" when Slurm's own was narrowed in place. Error
// (nothing left behind): one line naming the task and the cgroup.
Result<std::string> confine_task(const Node& node, const Partition& mine, pid_t task, unsigned local_id);

// Removes a confined task's cgroup once the task ended (what it left running moves to the
// step's cgroup first).
Status release_task(const std::string& dir);

}  // namespace xpart::launch
