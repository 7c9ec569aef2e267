// --xpart-confine: slurmstepd, as root, moves each task (forked, not yet exec'd) into its own
// device cgroup that opens only the task's partition.
// - cgroup v1 (the devices controller, what Slurm 22.05 uses on hybrid nodes): the cgroup is
//   made beside Slurm's task cgroup, under the step's, not inside it: Slurm's own per-task
//   choice (--gpu-bind, --gpus-per-task) may have left the task a different partition, and a
//   v1 child can only narrow its parent. Only the devices hierarchy changes; Slurm's other
//   controllers (freezer, cpuset, memory) keep the task where Slurm put it. The step's
//   devices cgroup still bounds it, so a task never opens anything the step was not given.
// - cgroup v2: one tree holds every controller, and a task moved beside its task cgroup would
//   leave Slurm's per-task accounting and limits. The cgroup is made inside the task's own;
//   every BPF device program on the path must allow an open, so a partition Slurm's per-task
//   choice withheld opens nowhere (fail closed). Not run here: Slurm refuses cgroup/v2 on
//   this machine's hybrid mount.
// The name is rank_cgroup_name(task, slurmstepd pid): one per task and step, and the sweeps
// recognise it when slurmstepd itself was killed.
#pragma once

#include <sys/types.h>

#include <string>

#include "libxpart/node.hpp"
#include "libxpart/result.hpp"

namespace xpart::launch {

// The cgroup directory the confined task runs in. Error (nothing left behind): one line
// naming the task and the cgroup.
Result<std::string> confine_task(const Node& node, const Partition& mine, pid_t task, unsigned local_id);

// Removes a confined task's cgroup once the task ended (what it left running moves to the
// step's cgroup first).
Status release_task(const std::string& dir);

}  // namespace xpart::launch
