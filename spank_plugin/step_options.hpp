// What the SPANK plugin does for a step: its srun/sbatch/salloc options over the site's
// defaults from plugstack.conf. Parsed here, not in the plugin, so the rules are tested as
// plain functions.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "binding/nic_env.hpp"
#include "mps/mps_options.hpp"
#include "libxpart/result.hpp"

namespace xpart::spank {

enum class StepBind {
    None,     // tasks keep the step's partitions (and whatever --gpu-bind Slurm applies)
    Rank,     // one partition per task (tasks share only when there are fewer partitions)
    Closest,  // as Rank, partitions grouped by NUMA node, each task pinned near its own
};
const char* to_string(StepBind b);

struct StepOptions {
    StepBind bind = StepBind::None;
    // Each task's devices narrowed to its own partition; unset: on whenever tasks are bound,
    // since a binding the task could step out of only tells it what to use.
    std::optional<bool> confine;
    bool mps = false;  // one MPS control daemon per MIG GPU instance the step uses
    binding::NicBind nic = binding::NicBind::None;  // each task's RDMA NIC in NCCL_IB_HCA, UCX_NET_DEVICES
    // Site only (plugstack.conf): root acts there, so a user must not choose them.
    mps::MpsJobOptions mps_job;

    // Confinement, MPS and a NIC need a per-task choice: each alone binds one partition per
    // task (a task's NIC is its partition's GPU's).
    StepBind effective_bind() const {
        return bind == StepBind::None && (confine.value_or(false) || mps || nic != binding::NicBind::None)
                   ? StepBind::Rank
                   : bind;
    }
    bool effective_confine() const { return confine.value_or(effective_bind() != StepBind::None); }
    bool active() const { return effective_bind() != StepBind::None; }
};

// plugstack.conf arguments ("bind=rank", "confine=yes", "mps=no", "nic=closest", "run_dir=/run/xpart",
// "mps_control=PATH", "mps_timeout=SECONDS", "job_dir_size=MIB"). Error: "plugstack.conf: argument '<arg>':
// <why>" (the plugin prefixes "xpart: ").
Result<StepOptions> parse_site_args(const std::vector<std::string>& args);

// One user option over the site's defaults: `name` is the srun option without "--"
// ("xpart-bind"); `value` is empty for a bare flag. Error: "--<name>=<value>: <why>".
Status apply_user_option(StepOptions& options, const std::string& name, const std::string& value);

}  // namespace xpart::spank
