// The environment a job, step or task gets from its gres/gpu allocation, and what a
// Prolog/Epilog learns about it. Pure functions of the node's records and Slurm's bitmaps.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "libxpart/gres/gres_bind.hpp"
#include "libxpart/gres_record.hpp"
#include "libxpart/visibility.hpp"
#include "libxpart/gres/xpart_conf.hpp"

namespace xpart {

enum class EnvScope { Job, Step, Task };

struct EnvRequest {
    EnvScope scope = EnvScope::Step;
    std::vector<bool> alloc;             // by record index; empty = nothing allocated
    std::optional<TaskBinding> task;     // Task scope: how Slurm binds this task (task_devices)
    bool constrain_devices = false;      // task/cgroup with ConstrainDevices=yes
    AmdIndexMode amd_index_mode = AmdIndexMode::Index;
    // Problems found outside (a vanished partition at step launch): reported as errors, and
    // the vendor lists then bind nothing.
    std::vector<std::string> faults;
};

struct EnvResult {
    std::vector<EnvChange> changes;
    std::vector<std::string> errors;  // each one line; when present the vendor lists bind nothing
};

// SLURM_JOB_GPUS (Job) / SLURM_STEP_GPUS (Step, Task) and SLURM_GPUS_ON_NODE as stock Slurm
// sets them; the vendor lists as libxpart/visibility.hpp decides (list_visibility):
// GPU_DEVICE_ORDINAL as stock, CUDA_VISIBLE_DEVICES with the allotted NVIDIA UUIDs;
// ROCR_VISIBLE_DEVICES selecting the allotted AMD partitions as ROCm numbers them
// (renumbered among what the device cgroup leaves visible). Nothing allocated: all unset.
// Task scope names the task's own set (task_devices) as stock names a task's GPUs, indices
// counted among what the task's cgroup leaves it; no task binding: the step's variables; a
// set that cannot be determined: one error and every list but SLURM_GPUS_ON_NODE binds nothing.
EnvResult gres_env(const std::vector<GresRecord>& records, const EnvRequest& request);

// Prolog/Epilog variables for a job's allocation on this node: SLURM_JOB_GPUS,
// CUDA_VISIBLE_DEVICES (NVIDIA UUIDs), XPART_PARTITION_UUIDS, XPART_PARTITION_TYPES,
// XPART_GPU_UUIDS, XPART_MIG_INSTANCES ("<gpu minor>:<gi>:<ci>") and XPART_AMD_KFD_NODES.
EnvResult epilog_env(const std::vector<GresRecord>& records, const std::vector<bool>& alloc);

// Names of every variable gres_env() may set (to clear them all).
const std::vector<std::string>& gres_env_names(EnvScope scope);

}  // namespace xpart
