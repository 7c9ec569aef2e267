// A step's binding as the SPANK plugin computes it: once per step in slurmstepd, before the
// tasks are forked, so every task inherits the whole plan and none computes anything.
// - The node is the gres plugin's cache (discovery when there is none).
// - The step's partitions come from SLURM_STEP_GPUS, the gres plugin's record indices: in
//   slurmstepd the ROCR indices cannot be resolved (they count what the task's device cgroup
//   leaves visible), while record indices name partitions on both vendors. NVIDIA UUIDs in
//   CUDA_VISIBLE_DEVICES must agree, or the step is refused.
// - Each local task gets one partition (binding/mapping.hpp: block sharing when there are
//   fewer, NUMA grouping and CPUs near it for Closest).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "binding/allotment.hpp"
#include "libxpart/env_map.hpp"
#include "binding/nic_env.hpp"
#include "binding/rank_plan.hpp"
#include "spank_plugin/step_options.hpp"
#include "libxpart/gres/gres_env.hpp"
#include "libxpart/node.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart::spank {

struct StepPlan {
    Node node;
    binding::NodePlan plan;  // allotment (step order), slots, one assignment per local task
    StepBind bind = StepBind::None;
    std::vector<std::string> step_gpus;  // SLURM_STEP_GPUS entries, parallel to the allotment
    binding::NicBind nic = binding::NicBind::None;         // each task's RDMA NIC (nic_env.hpp)
};

// Error: one line naming what is missing or inconsistent (no cache and no discovery, no
// SLURM_STEP_GPUS, a UUID that disagrees, more tasks than any map can place).
Result<StepPlan> plan_step(const RootFs& root, const EnvMap& step_env, int local_tasks, StepBind bind);

// What a task may open, asked two ways: `allowed`, by the device cgroup's rules (Slurm's
// per-task choice among them), decides its partition; `opens`, by open() as ROCm does,
// numbers the XCPs an unconfined task sees. Tests give one predicate for both.
struct TaskProbe {
    TaskProbe(binding::DeviceOpenable both) : allowed(both), opens(std::move(both)) {}  // NOLINT: implicit
    TaskProbe(binding::DeviceOpenable allowed_, binding::DeviceOpenable opens_)
        : allowed(std::move(allowed_)), opens(std::move(opens_)) {}
    binding::DeviceOpenable allowed, opens;
};

// Whether a task may open a partition: every device file only it has passes `openable`.
bool partition_openable(const Partition& p, const binding::DeviceOpenable& openable);
// The allotment slot local task `local_id` runs on, within what Slurm's rules let it open
// (`openable`): the plan's slot while its partition opens, else the first of the step's
// partitions that does (Slurm's per-task choice, --gpu-bind or --gpus-per-task, gave the
// plan's to another task), else the plan's (the task opens none: task_env says so).
// slurmstepd asks from the task's cgroup before confining it; the task asks again itself and,
// confined, can open only the partition chosen then, so both name the same one.
std::size_t task_slot(const StepPlan& step, int local_id, const binding::DeviceOpenable& openable);
// Closest: the CPUs to pin local task `local_id` to when it runs on `slot`: its share near the
// planned partition, or all near the one Slurm's rules moved it to. Else none.
std::vector<unsigned> task_cpus(const StepPlan& step, int local_id, std::size_t slot);
// The partition in allotment slot `slot`.
const Partition& slot_partition(const StepPlan& step, std::size_t slot);
// The partition the plan gives local task `local_id`, whatever Slurm's rules say.
const Partition& task_partition(const StepPlan& step, int local_id);
// Every non-shared device file of the step's partitions (what task_slot asks about).
std::vector<DeviceFile> step_device_files(const StepPlan& step);
// Every partition the step's tasks use, in task order (MPS needs their instances).
std::vector<binding::AllottedPartition> used_partitions(const StepPlan& step);

// What task `local_id`'s environment must say: the vendor list (CUDA_VISIBLE_DEVICES or
// ROCR_VISIBLE_DEVICES: "0" when confined, the task's cgroup leaving ROCm one agent; else its
// place among the XCPs the task can open, `openable` probing from inside the task),
// GPU_DEVICE_ORDINAL the same, SLURM_STEP_GPUS its record index, XPART_STEP_GPUS the step's,
// XPART_PARTITION, XPART_CPUS when it is pinned, and its GPU's RDMA NIC when `step.nic` asks. Variables that would name other partitions are unset.
// The partition is task_slot's. Where it is not the plan's, or where Slurm's rules left the
// task none of the step's partitions (no GPU then), `note` (when given) says so in one line.
std::vector<EnvChange> task_env(const StepPlan& step, int local_id, const EnvMap& step_env,
                                bool confined, const TaskProbe& probe,
                                std::string* note = nullptr);

}  // namespace xpart::spank
