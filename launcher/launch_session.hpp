// One rank as `xpart launch` runs it, mirroring the SPANK plugin's StepSession
// (spank_plugin/step_session.hpp); cli/launch_cmd.cpp only turns the command line into
// LaunchOptions and prints. begin() plans the rank from its environment (the node, its
// partition, CPUs, NIC, MPS share) and makes its cgroup when confining; the caller runs the
// program with env(), before_exec() and health(), then calls end(). Errors are one line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "binding/mapping.hpp"
#include "binding/nic_env.hpp"
#include "binding/rank_cgroup.hpp"
#include "binding/rank_env.hpp"
#include "binding/rank_plan.hpp"
#include "libxpart/root_fs.hpp"
#include "mps/mps_session.hpp"
#include "process/supervise.hpp"

namespace xpart::launcher {

struct LaunchOptions {
    binding::BindPolicy bind = binding::BindPolicy::None;
    bool confine = false;            // each rank in its own device cgroup (CAP_SYS_ADMIN)
    std::vector<int> explicit_map;   // --map: entry i = partition (environment order) of rank i
    binding::NicBind nic = binding::NicBind::None;
    bool mps = false;
    mps::MpsJobOptions mps_job;
    std::string job_id;        // the MPS directory's job key; default from Slurm or PMIx
    std::string node_json;     // the node from this file instead of the cache or discovery
    std::string topology_xml;  // hwloc XML instead of this machine's (or the root's)
    bool mig_monitor_capability = false;
};

class LaunchSession {
public:
    static Result<LaunchSession> begin(const LaunchOptions& options, const RootFs& root,
                                       const EnvMap& env);

    const binding::RankInfo& rank() const { return rank_; }
    // The rank's environment: its partition, CPUs, NIC and MPS daemon.
    const EnvMap& env() const { return env_; }
    // One line: rank, partition, UUID, GPU, NUMA node, CPUs, NIC (--verbose).
    std::string describe() const;
    // The rank's cgroup (confining), entered by the program's process before it execs.
    const binding::RankCgroup* cgroup() const { return cgroup_ ? &*cgroup_ : nullptr; }
    process::BeforeExec before_exec();
    // With MPS: whether the rank's daemon still runs (the supervisor ends the program if not).
    process::HealthCheck health() const;
    // Whether the program must run under a supervisor (a cgroup or MPS to end after it).
    bool supervised() const { return cgroup_.has_value() || mps_session_.has_value(); }
    const std::vector<std::string>& warnings() const { return warnings_; }
    // Leaves the MPS daemons and removes the rank's cgroup: the problems, one line each.
    std::vector<std::string> end();

private:
    binding::RankInfo rank_;
    Node node_;
    binding::NodePlan plan_;
    EnvMap env_;
    std::optional<binding::RankCgroup> cgroup_;
    std::optional<mps::MpsConfig> mps_;
    std::optional<mps::MpsInstance> mps_instance_;
    std::optional<mps::MpsSession> mps_session_;
    std::vector<std::string> warnings_;
};

}  // namespace xpart::launcher
