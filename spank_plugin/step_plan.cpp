#include "spank_plugin/step_plan.hpp"

#include "binding/node_source.hpp"
#include "binding/locality.hpp"
#include "libxpart/gres_record.hpp"
#include "libxpart/node_cache.hpp"
#include "libxpart/text.hpp"
#include "libxpart/visibility.hpp"

namespace xpart::spank {
namespace {

// Slurm's record indices mean what slurmd registered, which only its cache says: discovering
// here instead, without xpart.conf (Root, Vendors, MigMonitorCapability), could bind other
// partitions than the ones allocated. So no cache, no binding.
Result<Node> load_node(const RootFs& root) {
    CacheMiss miss;
    auto cached = read_node_cache(root, &miss);
    if (!cached && miss == CacheMiss::Unavailable)
        return Error{cached.error().message +
                     " (the step's partitions are the records slurmd's xpart gres/gpu plugin "
                     "registered there; is slurmd running with it?)"};
    return cached;
}

// NVIDIA partitions must be the ones CUDA_VISIBLE_DEVICES names, in the same order: a cache
// that no longer matches the records slurmd registered must not bind anything.
Status check_uuids(const Node& node, const binding::Allotment& a, const EnvMap& env) {
    const std::string* cuda = env_get(env, "CUDA_VISIBLE_DEVICES");
    std::vector<std::string> tokens = cuda ? split(*cuda, ',') : std::vector<std::string>{};
    std::size_t k = 0;
    for (const auto& p : a.partitions) {
        const Gpu& gpu = node.gpus[p.gpu];
        if (gpu.vendor != Vendor::Nvidia) continue;
        const std::string& uuid = gpu.partitions[p.partition].uuid;
        if (k >= tokens.size() || trim(tokens[k]) != uuid)
            return Error{"SLURM_STEP_GPUS names " + uuid + " but CUDA_VISIBLE_DEVICES is '" +
                         (cuda ? *cuda : std::string()) +
                         "': the node changed since slurmd started (restart slurmd)"};
        ++k;
    }
    return ok_status();
}

}  // namespace

Result<StepPlan> plan_step(const RootFs& root, const EnvMap& step_env, int local_tasks, StepBind bind) {
    const std::string* step_gpus = env_get(step_env, "SLURM_STEP_GPUS");
    if (!step_gpus) return Error{"the step has no GPU on this node (SLURM_STEP_GPUS unset)"};
    auto node = load_node(root);
    if (!node) return node.error();
    auto allotment = binding::from_record_indices(*node, "SLURM_STEP_GPUS", *step_gpus);
    if (!allotment) return allotment.error();
    if (auto s = check_uuids(*node, *allotment, step_env); !s) return s.error();

    binding::MapOptions options;
    options.bind = bind == StepBind::Closest ? binding::BindPolicy::Closest : binding::BindPolicy::None;
    auto topology = binding::load_locality(options, "", root.root());
    if (!topology) return topology.error();
    StepPlan step;
    step.bind = bind;
    step.step_gpus = split(*step_gpus, ',');
    for (auto& s : step.step_gpus) s = trim(s);
    auto plan = binding::plan_node(*node, std::move(*allotment), *topology ? &**topology : nullptr,
                          local_tasks, options);
    if (!plan) return plan.error();
    step.plan = std::move(*plan);
    step.node = std::move(*node);
    return step;
}

bool partition_openable(const Partition& p, const binding::DeviceOpenable& openable) {
    for (const DeviceFile& f : p.device_files)
        if (!f.shared && !openable(f)) return false;
    return true;
}

const Partition& slot_partition(const StepPlan& step, std::size_t slot) {
    const auto& a = step.plan.allotment.partitions.at(slot);
    return step.node.gpus[a.gpu].partitions[a.partition];
}

std::size_t task_slot(const StepPlan& step, int local_id, const binding::DeviceOpenable& openable) {
    const std::size_t planned = step.plan.assignments.at(static_cast<std::size_t>(local_id)).slot;
    if (partition_openable(slot_partition(step, planned), openable)) return planned;
    for (std::size_t slot = 0; slot < step.plan.allotment.partitions.size(); ++slot)
        if (partition_openable(slot_partition(step, slot), openable)) return slot;
    return planned;
}

const Partition& task_partition(const StepPlan& step, int local_id) {
    return slot_partition(step, step.plan.assignments.at(static_cast<std::size_t>(local_id)).slot);
}

std::vector<unsigned> task_cpus(const StepPlan& step, int local_id, std::size_t slot) {
    const binding::RankAssignment& me = step.plan.assignments.at(static_cast<std::size_t>(local_id));
    if (me.cpus.empty() || slot == me.slot) return me.cpus;
    return step.plan.slots.at(slot).cpus;
}

std::vector<DeviceFile> step_device_files(const StepPlan& step) {
    std::vector<DeviceFile> files;
    for (std::size_t slot = 0; slot < step.plan.allotment.partitions.size(); ++slot)
        for (const DeviceFile& f : slot_partition(step, slot).device_files)
            if (!f.shared) files.push_back(f);
    return files;
}

std::vector<binding::AllottedPartition> used_partitions(const StepPlan& step) {
    std::vector<binding::AllottedPartition> used;
    for (const auto& a : step.plan.assignments) used.push_back(step.plan.allotment.partitions[a.slot]);
    return used;
}

std::vector<EnvChange> task_env(const StepPlan& step, int local_id, const EnvMap& step_env,
                                bool confined, const TaskProbe& probe, std::string* note) {
    const binding::RankAssignment& me = step.plan.assignments.at(static_cast<std::size_t>(local_id));
    const std::size_t slot = task_slot(step, local_id, probe.allowed);
    binding::AllottedPartition mine = step.plan.allotment.partitions[slot];
    const bool nvidia = step.node.gpus[mine.gpu].vendor == Vendor::Nvidia;
    if (!nvidia && !confined) {
        // Unconfined, the task sees what Slurm's cgroup leaves it: ROCm's index counts those.
        auto index = binding::rocr_index(step.node, mine, probe.opens);
        mine.token = index ? std::to_string(*index) : std::string(kBindNothing);
    }
    EnvMap env = binding::narrow_env(step_env, step.node, mine, confined);
    // Slurm's own per-task choice (--gpus-per-task, --gpu-bind) holds beside ours, on both
    // hierarchies: the task gets one of the partitions Slurm left it, and where Slurm left it
    // none of the step's, it is told so (no vendor device, no SLURM_STEP_GPUS) rather than of
    // a partition it cannot open.
    const bool withheld = !partition_openable(slot_partition(step, slot), probe.allowed);
    TaskPlacement placed{task_cpus(step, local_id, slot), std::nullopt, std::nullopt};
    if (withheld) {
        apply_changes(env, withheld_visibility());
        if (note)
            *note = "Slurm's own per-task GPU binding (--gpu-bind, --gpus-per-task) left this task none of "
                    "the step's partitions; it is bound to no GPU";
    } else {
        placed.step_gpu = step.step_gpus.at(slot);
        if (note && slot != me.slot)
            *note = "Slurm's own per-task GPU binding (--gpu-bind, --gpus-per-task) gave partition " +
                    step.step_gpus.at(me.slot) + ", which --xpart-bind chose for this task, to another "
                    "task; bound to partition " + step.step_gpus.at(slot) + ", one of those Slurm gave it";
    }
    // What the whole step holds on this node, for programs that look beyond their own.
    if (const std::string* all = env_get(step_env, "SLURM_STEP_GPUS")) placed.step_gpus = *all;
    apply_changes(env, placement_visibility(placed));
    binding::apply_nic_env(env, step.node.gpus[mine.gpu], step.nic);

    std::vector<EnvChange> changes;
    for (const auto& [name, value] : env) {
        const std::string* before = env_get(step_env, name);
        if (!before || *before != value) changes.push_back({name, value});
    }
    for (const auto& [name, value] : step_env)
        if (!env.count(name)) changes.push_back({name, std::nullopt});
    return changes;
}

}  // namespace xpart::spank
