// A rank's share of the job's MPS daemons (xpart launch --mps).
// - When the Prolog started them (root's records in the job directory), ranks only wait until
//   each answers and use them; when the Prolog's start failed, ranks fail with its reason.
// - Otherwise the ranks of a step run their own, as the user, in a step directory: the
//   job directory's user leaf (<run dir>/job_<id>/user/step_<s>, made by root's Prolog and
//   closed to others) or, without the Prolog hook, /tmp/xpart-mps-<uid>/job-<id>.<step>.
//   The first rank in starts them under the directory's flock; the last out (pids of killed
//   ranks are pruned) stops them; the Epilog stops what killed ranks left.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "libxpart/env_map.hpp"
#include "mps/mps.hpp"

namespace xpart::mps {

// What a rank's environment says of MPS: its GPU instance's daemon (pipe and log directories)
// and, when several local ranks (`used`, one entry per rank) share that instance, an even
// share of its threads. Both front ends (xpart launch, the SPANK plugin's tasks) use it.
Result<EnvMap> mps_rank_env(const Node& node, const MpsConfig& config,
                            const std::vector<binding::AllottedPartition>& used, const binding::AllottedPartition& mine);

class MpsSession {
public:
    static Result<MpsSession> join(const MpsConfig& config, bool managed,
                                   const std::vector<MpsInstance>& instances);
    // Leaves; the last member stops the daemons. Idempotent.
    Status leave();

    bool managed() const { return managed_; }
    const MpsConfig& config() const { return config_; }
    // What the start noticed without failing (printed by the caller).
    const std::vector<std::string>& warnings() const { return warnings_; }

private:
    static Result<MpsSession> join_step(const MpsConfig& config, bool managed,
                                        const std::vector<MpsInstance>& instances);
    MpsConfig config_;
    bool managed_ = false;
    bool joined_ = false;
    pid_t pid_ = -1;
    std::vector<std::string> warnings_;
};

// Live members (rank pids) of a step directory; dead ones are removed.
std::vector<pid_t> prune_members(const std::string& step_dir);

}  // namespace xpart::mps
