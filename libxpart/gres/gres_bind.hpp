// Which of a step's GPUs one task can use: the set Slurm 22.05's device constraint gives the
// task's cgroup (gres.c: gres_g_get_devices -> _get_usable_gres with get_devices). The set
// Slurm hands task_set_env is computed another way under ConstrainDevices (renumbered 0..n-1,
// map/mask values read as node indices, per_task always the first GPUs) and cannot say which
// partition the task holds; the task's environment must name exactly what its cgroup lets it
// open, so the plugin computes the set the way the constraint does, and says so when it
// cannot know it rather than guess.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "libxpart/gres_record.hpp"

namespace xpart {

// What the task's process knows about its binding when task_set_env runs.
struct TaskBinding {
    std::optional<std::string> tres_bind;  // SLURMD_TRES_BIND (nullopt: unset)
    std::optional<std::string> local_id;   // SLURM_LOCALID
    // The set Slurm passed to task_set_env (usable_gres, by Slurm's own numbering); nullopt
    // when it passed none: Slurm binds this task to nothing narrower than the step.
    std::optional<std::vector<bool>> slurm_set;
    // The task's CPU affinity now (nullopt: unreadable). Slurm 22.05 constrains a task's
    // devices in task/cgroup's post_set_affinity, reading the task's own mask after the
    // ConstrainCores move and after task/affinity bound it; with only those task plugins
    // nothing changes the mask before task_set_env, so it is the mask the constraint used.
    std::optional<std::vector<unsigned>> cpus;
    std::string task_plugins;  // slurm.conf TaskPlugin
    unsigned node_cpus = 0;    // CPU count the records were registered with (slurm_record_cpus)
    // False under a Slurm series whose per-task rule this model does not replicate (24.11:
    // usable_gres comes in the task's local numbering and single/per_task follow every task's
    // CPU set, which one task cannot see). There the task's set is read from its own device
    // constraint instead (can_open), which that series applies before task_set_env.
    bool slurm_rule_modelled = true;
    // Whether this process may open a host device path now (device_openable); empty: unknown.
    std::function<bool(const std::string&)> can_open;
};

struct TaskDevices {
    enum class Kind {
        StepSet,  // no task binding: the task can use the step's set
        Devices,  // the task's own set
        Unknown,  // cannot be determined: bind nothing
    };
    Kind kind = Kind::StepSet;
    std::vector<bool> devices;  // Devices: by record index, never empty
    std::string reason;         // Unknown: one line, why
};

// `alloc`: the step's GPUs on this node by record index; `constrain_devices`: task/cgroup with
// ConstrainDevices=yes (Slurm then reads map/mask values as positions in the allocation).
TaskDevices task_devices(const std::vector<GresRecord>& records, const std::vector<bool>& alloc,
                         bool constrain_devices, const TaskBinding& task);

}  // namespace xpart
