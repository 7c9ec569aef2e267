#include "spank_plugin/step_session.hpp"

#include "binding/locality.hpp"
#include "mps/mps_session.hpp"
#include "mps/root/mps_job.hpp"
#include "spank_plugin/task_confine.hpp"
#include "libxpart/text.hpp"

namespace xpart::launch {
namespace {

// Closest: the task's CPUs near its partition, within what Slurm already gave it.
Status pin(pid_t task, const std::vector<unsigned>& cpus, std::vector<std::string>& notes) {
    auto pinned = pin_within_allocation(task, cpus);
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
    if (options.nic != NicBind::None && s.plan_->node.nics.empty())
        s.notes_.push_back("--xpart-nic: this node has no RDMA NIC; no NIC variable is set");
    if (options.mps) {
        auto instances = mps_instances(s.plan_->node, used_partitions(*s.plan_));
        if (!instances) return Error{"--xpart-mps: " + instances.error().message};
        MpsStartReport report;
        auto config = start_step_daemons(options.mps_job, id.job_id, id.step_id, id.user,
                                         *instances, s.mps_managed_, report);
        if (!config) return Error{"--xpart-mps: " + config.error().message};
        s.mps_ = std::move(*config);
        s.notes_.insert(s.notes_.end(), report.warnings.begin(), report.warnings.end());
    }
    return s;
}

Status StepSession::confine(int local_id, pid_t task) {
    if (!plan_) return ok_status();
    if (options_.effective_confine()) {
        auto dir = confine_task(plan_->node, task_partition(*plan_, local_id), task,
                                static_cast<unsigned>(local_id));
        if (!dir) return dir.error();
        if (!dir->empty()) cgroups_[local_id] = *dir;
    }
    const auto& cpus = plan_->plan.assignments.at(static_cast<std::size_t>(local_id)).cpus;
    if (!cpus.empty()) return pin(task, cpus, notes_);
    return ok_status();
}

std::vector<EnvChange> StepSession::env(int local_id, const EnvMap& task_env, std::string* note) const {
    if (!plan_) return {};
    std::string withheld;
    auto changes = launch::task_env(*plan_, local_id, task_env, options_.effective_confine(),
                                    open_probe(root_), &withheld);
    if (note) *note = withheld;
    if (mps_ && withheld.empty()) {
        const auto& used = plan_->plan.allotment.partitions[plan_->plan.assignments.at(
            static_cast<std::size_t>(local_id)).slot];
        // begin() found every used partition's instance, so this cannot fail.
        if (auto mps = mps_rank_env(plan_->node, *mps_, used_partitions(*plan_), used))
            for (auto& [name, value] : *mps) changes.push_back({name, value});
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
        auto r = stop_step_daemons(options_.mps_job, id_.job_id, id_.step_id);
        problems.insert(problems.end(), r.notes.begin(), r.notes.end());
        for (const auto& s : r.survivors) problems.push_back("MPS daemon survived SIGKILL: " + s);
    }
    mps_.reset();
    return problems;
}

}  // namespace xpart::launch
