#include "libxpart/gres/gres_bind.hpp"

#include <algorithm>
#include <cstdint>

#include "libxpart/slurm_text/gpu_bind_list.hpp"
#include "libxpart/text.hpp"
#include "libxpart/slurm_text/tres_bind.hpp"

namespace xpart {
namespace {

using Bits = std::vector<bool>;

std::size_t count(const Bits& b) {
    return static_cast<std::size_t>(std::count(b.begin(), b.end(), true));
}
bool test(const Bits& b, std::size_t i) { return i < b.size() && b[i]; }

Bits both(const Bits& a, const Bits& b) {
    Bits out(a.size(), false);
    for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] && test(b, i);
    return out;
}

// bit_consolidate: as many bits, moved to the front (Slurm's renumbering under ConstrainDevices).
Bits consolidate(const Bits& b) {
    Bits out(b.size(), false);
    std::fill_n(out.begin(), count(b), true);
    return out;
}

// Bit k of `local` names the k-th allocated GPU (_translate_step_to_global_device_index).
Bits local_to_node(const Bits& local, const Bits& alloc) {
    Bits out(alloc.size(), false);
    std::size_t k = 0;
    for (std::size_t i = 0; i < alloc.size(); ++i)
        if (alloc[i]) out[i] = test(local, k++);
    return out;
}

// _filter_gres_per_task: skip the earlier tasks' GPUs, keep this task's.
Bits per_task(const Bits& alloc, std::uint32_t gpus_per_task, unsigned local_id) {
    Bits out(alloc.size(), false);
    std::uint64_t skip = std::uint64_t{local_id} * gpus_per_task, take = gpus_per_task;
    for (std::size_t i = 0; i < alloc.size() && take; ++i) {
        if (!alloc[i]) continue;
        if (skip) --skip;
        else { out[i] = true; --take; }
    }
    return out;
}

// _get_usable_gres_cpu_affinity within the allocation, then _filter_usable_gres for single:N.
Bits closest(const std::vector<GresRecord>& records, const Bits& alloc,
             const std::vector<unsigned>& task_cpus, unsigned node_cpus,
             std::uint32_t tasks_per_gpu, unsigned local_id) {
    Bits mask;
    for (unsigned c : task_cpus) {
        if (c >= mask.size()) mask.resize(c + 1, false);
        mask[c] = true;
    }
    Bits out(alloc.size(), false);
    for (std::size_t i = 0; i < alloc.size() && i < records.size(); ++i) {
        const auto cpus = slurm_record_cpus(records[i], node_cpus);
        const bool is_near = cpus.empty() || std::any_of(cpus.begin(), cpus.end(), [&](unsigned c) {
                                 return test(mask, c);
                             });
        out[i] = alloc[i] && is_near;
    }
    const std::size_t near_count = count(out);
    if (tasks_per_gpu == 0 || near_count <= 1) return out;
    const std::size_t nth = (local_id / tasks_per_gpu) % near_count;
    std::size_t seen = 0;
    for (std::size_t i = 0; i < out.size(); ++i)
        if (out[i]) out[i] = seen++ == nth;
    return out;
}

// The two sets Slurm computes for a task from one request.
struct SlurmSets {
    Bits devices;   // the task's device cgroup (get_devices)
    Bits task_env;  // the set handed to task_set_env
};

Result<SlurmSets> slurm_sets(const GpuBind& bind, unsigned local_id, const Bits& alloc,
                             bool local, const std::vector<GresRecord>& records,
                             const TaskBinding& task) {
    SlurmSets s;
    switch (bind.kind) {
    case GpuBind::Kind::Map:
    case GpuBind::Kind::Mask: {
        auto pick = gpu_bind_list_pick(bind.list, local_id, alloc.size(),
                                       bind.kind == GpuBind::Kind::Map);
        if (!pick) return pick.error();
        s.devices = local ? local_to_node(*pick, alloc) : both(*pick, alloc);
        s.task_env = local ? consolidate(both(*pick, alloc)) : both(*pick, alloc);
        break;
    }
    case GpuBind::Kind::Closest:
        s.devices = closest(records, alloc, *task.cpus, task.node_cpus, bind.tasks_per_gpu,
                            local_id);
        s.task_env = local ? consolidate(s.devices) : s.devices;
        break;
    case GpuBind::Kind::PerTask:
        s.devices = per_task(alloc, bind.gpus_per_task, local_id);
        if (local) {
            s.task_env.assign(alloc.size(), false);
            std::fill_n(s.task_env.begin(),
                        std::min<std::size_t>(bind.gpus_per_task, alloc.size()), true);
        } else {
            s.task_env = s.devices;
        }
        break;
    case GpuBind::Kind::None:
        break;
    }
    // "Bind request ... does not specify any devices within the allocation ... Binding to the
    // first device in the allocation instead." (the renumbered first under ConstrainDevices).
    const Bits first = per_task(alloc, 1, 0);  // the first allocated GPU
    if (count(s.devices) == 0) s.devices = first;
    if (count(s.task_env) == 0) s.task_env = local ? consolidate(first) : first;
    return s;
}

// Closest GPUs follow the task's CPUs: known when only task/cgroup and task/affinity run.
std::optional<std::string> cpus_problem(const TaskBinding& task) {
    for (const auto& p : split(task.task_plugins, ',')) {
        std::string name = to_lower(trim(p));
        if (name.rfind("task/", 0) == 0) name = name.substr(5);
        if (!name.empty() && name != "cgroup" && name != "affinity" && name != "none")
            return "TaskPlugin=" + task.task_plugins + " may change the task's CPUs after its "
                   "devices were constrained, so its closest GPUs are unknown";
    }
    if (!task.cpus)
        return std::string("the task's CPU affinity is unreadable: its closest GPUs are unknown");
    return std::nullopt;
}

std::string indices(const Bits& b) {
    std::string out;
    for (std::size_t i = 0; i < b.size(); ++i)
        if (b[i]) out += (out.empty() ? "" : ",") + std::to_string(i);
    return out.empty() ? "none" : out;
}

TaskDevices unknown(std::string reason) {
    TaskDevices d;
    d.kind = TaskDevices::Kind::Unknown;
    d.reason = std::move(reason);
    return d;
}

// The files that tell the allocated records apart: a record's files no other allocated record
// has (a MIG device's capability files, an XCP's render node, a whole GPU's /dev/nvidiaN).
// Probing only those spares the shared control files and parent GPUs an open().
std::vector<std::string> own_files(const std::vector<GresRecord>& records, const Bits& alloc,
                                   std::size_t i) {
    std::vector<std::string> own;
    for (const auto& f : records[i].files) {
        bool shared = false;
        for (std::size_t j = 0; j < alloc.size() && j < records.size() && !shared; ++j)
            if (j != i && alloc[j])
                for (const auto& g : records[j].files) shared = shared || g.path == f.path;
        if (!shared) own.push_back(f.path);
    }
    if (own.empty())
        for (const auto& f : records[i].files) own.push_back(f.path);
    return own;
}

// A series whose rule is not modelled (24.11): Slurm has applied the task's device constraint
// before task_set_env, so the task's set is what the task can open. Unconstrained, Slurm's own
// set is in node numbering and is the answer. Its size must match Slurm's set either way.
TaskDevices devices_from_constraint(const std::vector<GresRecord>& records, const Bits& alloc,
                                    bool constrain_devices, const TaskBinding& task,
                                    const std::string& who) {
    if (task.tres_bind && tres_bind_is_none(*task.tres_bind)) return {};
    const Bits& given = *task.slurm_set;
    Bits devices(alloc.size(), false);
    if (!constrain_devices) {
        for (std::size_t i = 0; i < alloc.size() && i < given.size(); ++i)
            devices[i] = alloc[i] && given[i];
    } else if (!task.can_open) {
        return unknown(who + "its device constraint cannot be read here; binding nothing");
    } else {
        for (std::size_t i = 0; i < alloc.size() && i < records.size(); ++i) {
            if (!alloc[i]) continue;
            bool all = true;
            for (const auto& path : own_files(records, alloc, i)) all = all && task.can_open(path);
            devices[i] = all;
        }
    }
    if (count(devices) == 0 || count(devices) != count(given))
        return unknown(who + "Slurm bound it to " + std::to_string(count(given)) +
                       " GPU(s) but it can open " + indices(devices) +
                       "; binding nothing rather than guessing");
    TaskDevices d;
    d.kind = TaskDevices::Kind::Devices;
    d.devices = std::move(devices);
    return d;
}

}  // namespace

TaskDevices task_devices(const std::vector<GresRecord>& records, const Bits& alloc,
                         bool constrain_devices, const TaskBinding& task) {
    if (!task.slurm_set || count(alloc) == 0) return {};
    auto id = task.local_id ? parse_u64(*task.local_id) : std::nullopt;
    if (!id || *id > 0xffffffffu)
        return unknown("SLURM_LOCALID=" + task.local_id.value_or("<unset>") +
                       " is not a task index");
    const unsigned local_id = static_cast<unsigned>(*id);
    const std::string who = "task " + std::to_string(local_id) + ": ";
    if (!task.slurm_rule_modelled)
        return devices_from_constraint(records, alloc, constrain_devices, task, who);

    // Slurm binds, yet SLURMD_TRES_BIND asks for nothing: --accel-bind=g, which the task cannot
    // see (it also overrides any SLURMD_TRES_BIND; the check below catches that).
    GpuBind bind = task.tres_bind ? parse_tres_bind(*task.tres_bind) : GpuBind{};
    const std::string request = bind.kind == GpuBind::Kind::None
                                    ? std::string("--accel-bind=g")
                                    : "SLURMD_TRES_BIND=" + *task.tres_bind;
    if (bind.kind == GpuBind::Kind::None) bind = accel_bind_closest();
    if (bind.kind == GpuBind::Kind::Closest)
        if (auto problem = cpus_problem(task)) return unknown(who + *problem);

    auto sets = slurm_sets(bind, local_id, alloc, constrain_devices, records, task);
    if (!sets) return unknown(who + sets.error().message);
    // Slurm's own set for task_set_env must be what this request gives it; if not, something
    // the task cannot see decided the binding (--accel-bind=g beside --gpu-bind).
    Bits given = *task.slurm_set;
    given.resize(std::max(given.size(), alloc.size()), false);
    Bits expected = sets->task_env;
    expected.resize(given.size(), false);
    if (given != expected)
        return unknown(who + "Slurm bound it to GPUs " + indices(given) +
                       " (its numbering) where " + request + " gives " + indices(expected) +
                       "; an option the task cannot see (--accel-bind=g?) decided its GPUs");
    TaskDevices d;
    d.kind = TaskDevices::Kind::Devices;
    d.devices = std::move(sets->devices);
    return d;
}

}  // namespace xpart
