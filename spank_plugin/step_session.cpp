#include "spank_plugin/step_session.hpp"

#include "binding/locality.hpp"
#include "mps/mps_session.hpp"
#include "mps/root/mps_job.hpp"
#include "spank_plugin/task_confine.hpp"
#include "libxpart/text.hpp"

namespace xpart::spank {
namespace {

// Closest: the task's CPUs near its partition, within what Slurm already gave it.
Status pin(pid_t task, const std::vector<unsigned>& cpus, std::vector<std::string>& notes) {
    auto pinned = binding::pin_within_allocation(task, cpus);
    if (!pinned) return pinned.error();
    if (!*pinned)
        notes.push_back("--xpart-bind=closest: none of CPUs " + format_cpu_list(cpus) +
                        " near the task's partition is in its allocation; left as Slurm set it");
    return ok_status();
}

}  // namespace

Result<StepSession> StepSession::begin(const StepOptions& options, const RootFs& root,
                                       const EnvMap& step_env, const StepIdentity& id) {
    StepSession s;
    s.root_ = root;
    s.options_ = options;
    s.id_ = id;
    if (!options.active()) return s;
    if (!env_get(step_env, "SLURM_STEP_GPUS")) {
        s.notes_.push_back("the step has no GPU on this node; --xpart options do nothing here");
        return s;
    }
    auto plan = plan_step(root, step_env, id.local_tasks, options.effective_bind());
    if (!plan) return plan.error();
    s.plan_ = std::move(*plan);
    s.plan_->nic = options.nic;
    if (options.nic != binding::NicBind::None && s.plan_->node.nics.empty())
        s.notes_.push_back("--xpart-nic: this node has no RDMA NIC; no NIC variable is set");
    if (options.mps) {
        auto instances = mps::mps_instances(s.plan_->node, used_partitions(*s.plan_));
        if (!instances) return Error{"--xpart-mps: " + instances.error().message};
        mps::MpsStartReport report;
        auto config = mps::start_step_daemons(options.mps_job, id.job_id, id.step_id, id.user,
                                         *instances, s.mps_managed_, report);
        if (!config) return Error{"--xpart-mps: " + config.error().message};
        s.mps_ = std::move(*config);
        s.notes_.insert(s.notes_.end(), report.warnings.begin(), report.warnings.end());
    }
    return s;
}

Result<std::size_t> StepSession::slot_within_slurms_rules(int local_id, const TaskCgroup& where) const {
    // Slurm's per-task rules live only in its task cgroups; elsewhere the step's rules hold,
    // which allow every partition of the step.
    if (!where.slurms) return plan_->plan.assignments.at(static_cast<std::size_t>(local_id)).slot;
    auto allowed = task_openable(where, root_, step_device_files(*plan_));
    if (!allowed) return allowed.error();
    return task_slot(*plan_, local_id, *allowed);
}

Status StepSession::confine(int local_id, pid_t task) {
    if (!plan_) return ok_status();
    const bool confining = options_.effective_confine();
    const auto& me = plan_->plan.assignments.at(static_cast<std::size_t>(local_id));
    if (!confining && me.cpus.empty()) return ok_status();  // the task's own probe decides
    // Slurm placed the task in its cgroups, with its per-task device rules, before this call
    // (task_g_pre_launch_priv in 24.11, post_set_affinity in 22.05): the partition is chosen
    // among those they let the task open, as the task's own probe will choose it.
    auto where = task_cgroup(task);
    if (!where && confining) return where.error();
    Result<std::size_t> slot = where ? slot_within_slurms_rules(local_id, *where) : Result<std::size_t>(me.slot);
    if (!slot) return slot.error();
    if (confining) {
        auto dir = confine_task(*where, plan_->node, slot_partition(*plan_, *slot), task,
                                static_cast<unsigned>(local_id));
        if (!dir) return dir.error();
        if (!dir->empty()) cgroups_[local_id] = *dir;
    }
    const auto cpus = task_cpus(*plan_, local_id, *slot);
    return cpus.empty() ? ok_status() : pin(task, cpus, notes_);
}

std::vector<EnvChange> StepSession::env(int local_id, const EnvMap& task_env, std::string* note) const {
    if (!plan_) return {};
    const TaskProbe probe(binding::cgroup_probe(root_), binding::open_probe(root_));
    std::string why;
    auto changes = spank::task_env(*plan_, local_id, task_env, options_.effective_confine(), probe, &why);
    if (note) *note = why;
    const std::size_t slot = task_slot(*plan_, local_id, probe.allowed);
    if (mps_ && partition_openable(slot_partition(*plan_, slot), probe.allowed)) {
        const auto& used = plan_->plan.allotment.partitions[slot];
        // begin() started a daemon for every instance the plan uses; one Slurm's rules moved
        // the task to may have none: the task then runs without MPS, and says so.
        if (auto mps = mps::mps_rank_env(plan_->node, *mps_, used_partitions(*plan_), used))
            for (auto& [name, value] : *mps) changes.push_back({name, value});
        else if (note)
            *note += std::string(note->empty() ? "" : "; ") + "--xpart-mps: " + mps.error().message;
    }
    return changes;
}

Status StepSession::task_ended(int local_id) {
    auto it = cgroups_.find(local_id);
    if (it == cgroups_.end()) return ok_status();
    Status s = release_task(it->second);
    cgroups_.erase(it);
    return s;
}

std::vector<std::string> StepSession::end() {
    std::vector<std::string> problems;
    while (!cgroups_.empty())
        if (auto s = task_ended(cgroups_.begin()->first); !s) problems.push_back(s.error().message);
    if (mps_ && !mps_managed_) {
        auto r = mps::stop_step_daemons(options_.mps_job, id_.job_id, id_.step_id);
        problems.insert(problems.end(), r.notes.begin(), r.notes.end());
        for (const auto& s : r.survivors) problems.push_back("MPS daemon survived SIGKILL: " + s);
    }
    mps_.reset();
    return problems;
}

}  // namespace xpart::spank
