// --xpart-confine: slurmstepd, as root, moves each task (forked, not yet exec'd) into its own
// device cgroup that opens only the task's partition. The cgroup is made beside Slurm's task
// cgroup, under the step's, and not inside it: Slurm's own per-task choice (--gpu-bind,
// --gpus-per-task) may have left the task a different partition, and a v1 child can only
// narrow its parent. The step's cgroup still bounds it, so a task never opens anything the
// step was not given. The name is rank_cgroup_name(task, slurmstepd pid): one per task and
// step, and the sweeps recognise it when slurmstepd itself was killed.
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
