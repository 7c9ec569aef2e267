// One step on one node as the SPANK plugin runs it in slurmstepd (spank_plugin/ is only the
// glue): begin() before the tasks fork (root), confine() per task after Slurm placed it in
// its cgroups and before it execs (root), env() inside each task (the user), task_ended()
// and end() as the tasks and the step finish (root). Each call returns one line on error.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "process/credentials.hpp"
#include "mps/mps.hpp"
#include "spank_plugin/step_options.hpp"
#include "spank_plugin/step_plan.hpp"
#include "spank_plugin/task_confine.hpp"

namespace xpart::spank {

struct StepIdentity {
    std::string job_id, step_id;
    process::Credentials user;
    int local_tasks = 1;
};

class StepSession {
public:
    // Plans the step and, with MPS, starts its daemons as the user. A step without GPUs on
    // this node gives a session that does nothing (nullopt plan).
    static Result<StepSession> begin(const StepOptions& options, const RootFs& root,
                                     const EnvMap& step_env, const StepIdentity& id);

    bool binds() const { return plan_.has_value(); }
    // Root, slurmstepd: the task's partition within what Slurm's per-task rules allow, its own
    // device rules (when confining) and its CPUs (Closest).
    Status confine(int local_id, pid_t task);
    // In the task: what its environment must say.
    std::vector<EnvChange> env(int local_id, const EnvMap& task_env, std::string* note = nullptr) const;
    // Root, slurmstepd: removes the task's cgroup.
    Status task_ended(int local_id);
    // Root, slurmstepd: the tasks' cgroups left, then the step's MPS daemons. Idempotent.
    std::vector<std::string> end();

    const std::vector<std::string>& notes() const { return notes_; }

private:
    // The allotment slot of the task in `where`, within what Slurm's rules there allow.
    Result<std::size_t> slot_within_slurms_rules(int local_id, const TaskCgroup& where) const;

    StepOptions options_;
    RootFs root_;
    StepIdentity id_;
    std::optional<StepPlan> plan_;
    std::optional<mps::MpsConfig> mps_;
    bool mps_managed_ = false;
    std::map<int, std::string> cgroups_;  // local task id -> its cgroup
    std::vector<std::string> notes_;      // begin()'s warnings, for the log
};

}  // namespace xpart::spank
