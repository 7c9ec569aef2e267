// --xpart-confine: slurmstepd, as root, narrows each task (forked, not yet exec'd) to its own
// partition's device files.
// - cgroup v1 with Slurm's task cgroup (task/cgroup, ConstrainDevices=yes; what Slurm 22.05
//   uses on hybrid nodes): that cgroup is narrowed in place (cgroup::narrow_in_place). Its
//   parent, the step's cgroup, bounds what can be granted, so a task never opens anything the
//   step was not given; the task's own partition is allowed even where Slurm's per-task
//   choice (--gpu-bind, --gpus-per-task) left it another. Slurm removes it with the step.
// - Otherwise (cgroup v2; no task cgroup): a child cgroup of the task's own, entered by the
//   task, removed by release_task() when the task ends. On v2 every BPF device program on the
//   path must allow an open, so a partition Slurm's per-task choice withheld opens nowhere
//   (fail closed). Not run here: Slurm refuses cgroup/v2 on this machine's hybrid mount.
//   The name is rank_cgroup_name(task, slurmstepd pid): one per task and step, and the sweeps
//   recognise it when slurmstepd itself was killed.
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
