// Where root houses the MPS processes it starts (the Prolog's daemons, slurmstepd's for
// --xpart-mps): each control daemon, the servers it forks and every control command root runs
// for it live in one cgroup root made, outside Slurm's tree, on the node's device hierarchy:
//   <mount>/<group>/job_<id>/<scope>.<instance>      scope: "job" (Prolog) or "step_<s>"
// <group> is "xpart" for the run dir /run/xpart, else "xpart-<hash of the run dir>" (so two
// test clusters on one machine, with the same job ids, never meet). Every level is made by
// root and checked to be root's: its cgroup.procs is root's, so no user can add a process to
// it or make a cgroup in it. An instance's cgroup allows the device files of the job's
// partitions in that GPU instance and denies every other partition of the node: a job's user
// who ptraces its daemon opens nothing through it that the job was not given.
// Stopping is ending the cgroup (every member SIGKILLed, then rmdir): membership, which only
// root grants, is the authority to signal; no pid from a file is.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "cgroup/device_rule.hpp"
#include "cgroup/layout.hpp"
#include "libxpart/result.hpp"
#include "mps/mps.hpp"

namespace xpart::mps {

class MpsCgroups {
public:
    // The job's place on this node's device hierarchy (v1 devices where mounted, else v2);
    // nothing is made yet.
    static Result<MpsCgroups> for_job(const std::string& run_dir, const std::string& job_id);
    // The same on a given hierarchy (tests: the v2 path on a hybrid node's cgroup2 mount).
    static Result<MpsCgroups> for_job(const std::string& run_dir, const std::string& job_id,
                                      cgroup::Hierarchy hierarchy);

    const std::string& job_dir() const { return job_dir_; }
    // The cgroup.procs file a process writes "0" to, to join cgroup `name` (made by make()).
    std::string procs_file(const std::string& name) const;
    // Makes cgroup `name` with `rules`, the levels above it as needed; one left by an earlier
    // start is ended and made anew.
    Status make(const std::string& name, const cgroup::DeviceRuleSet& rules) const;
    // Kills every member of cgroup `name` and removes it; the number of processes killed.
    // `grace`: first, how long members may take to exit by themselves (a daemon's servers after
    // its quit). Error, naming the cgroup and what is left, when a member outlives `wait`.
    Result<std::size_t> end(const std::string& name, std::chrono::milliseconds wait,
                            std::chrono::milliseconds grace = std::chrono::milliseconds(0)) const;

    struct Ended {
        std::vector<std::string> ended;   // describe_ended()
        std::vector<std::string> failed;  // one line each
    };
    // Ends every cgroup of the job whose name starts with `prefix` ("" : all, and then the
    // job's own level too).
    Ended end_all(const std::string& prefix, std::chrono::milliseconds wait) const;

private:
    MpsCgroups() = default;
    cgroup::Hierarchy hierarchy_ = cgroup::Hierarchy::V1;
    std::string mount_, group_dir_, job_dir_;
};

// "<name>", or "<name> (<n> killed)" when members were left to kill: the Epilog's line.
std::string describe_ended(const std::string& name, std::size_t killed);
// "<scope>.<instance>", the one place the name is spelled.
std::string mps_cgroup_name(const std::string& scope, const std::string& instance);

// One scope's daemons ("job": the Prolog's; "step_<s>": slurmstepd's) in the job's cgroups,
// each instance's in mps_cgroup_name(scope, instance): how MpsConfig's housing is root's.
class MpsCgroupHousing final : public DaemonHousing {
public:
    MpsCgroupHousing(MpsCgroups cgroups, std::string scope) : cgroups_(std::move(cgroups)), scope_(std::move(scope)) {}
    std::string procs_file(const std::string& instance) const override;
    Status make(const std::string& instance, const cgroup::DeviceRuleSet& rules) const override;
    Result<std::string> end(const std::string& instance, std::chrono::milliseconds wait,
                            std::chrono::milliseconds grace) const override;

private:
    MpsCgroups cgroups_;
    std::string scope_;
};

}  // namespace xpart::mps
