// Which of a step's GPUs one task gets under --gpus-per-task / --gpu-bind, computed the way
// Slurm 22.05's device constraint computes it (gres.c, the get_devices path). The set Slurm
// hands task_set_env is renumbered ("consolidated") when ConstrainDevices is on and no longer
// says which partition the task holds; a UUID list must name exactly the partition the task's
// cgroup lets it open, so the plugin recomputes it from the task's SLURMD_TRES_BIND.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace xpart {

struct TaskBinding {
    enum class Kind { None, Closest, PerTask, Map, Mask };
    Kind kind = Kind::None;
    unsigned long gpus_per_task = 0;  // PerTask (parsed as Slurm does: leading digits)
    std::string list;                 // Map/Mask: "1,0" / "0x1,0x2*2"
};

// SLURMD_TRES_BIND ("gpu:per_task:1", "gpu:verbose,map_gpu:1,0", ...).
TaskBinding parse_tres_bind(const std::string& tres_bind);

// The task's GPUs as record indices. `local_indices`: map/mask values count within the step's
// allocation (task/cgroup with ConstrainDevices=yes), else they are node indices.
// nullopt for bindings that depend on the task's CPU mask (closest): use Slurm's set.
std::optional<std::vector<bool>> task_share(const TaskBinding& binding, unsigned local_id,
                                            const std::vector<bool>& alloc, bool local_indices);

}  // namespace xpart
