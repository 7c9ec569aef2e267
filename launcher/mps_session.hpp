// A rank's share of the job's MPS daemons (xpart launch --mps). The first rank in starts the
// daemons under a flock; the others wait on the lock, then until each daemon answers; the
// last rank out (pids of killed ranks are pruned) quits them and removes the directories.
// In a job whose Prolog started the daemons (`managed`), ranks only wait and use them.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "launcher/mps.hpp"

namespace xpart::launch {

class MpsSession {
public:
    static Result<MpsSession> join(const MpsConfig& config,
                                   const std::vector<MpsInstance>& instances);
    // Leaves; the last member stops the daemons. Idempotent.
    Status leave();

    bool managed() const { return managed_; }
    const MpsConfig& config() const { return config_; }

private:
    MpsConfig config_;
    bool managed_ = false;
    bool joined_ = false;
    pid_t pid_ = -1;
};

// Live members (rank pids) of the job directory; dead ones are removed.
std::vector<pid_t> prune_members(const std::string& job_dir);

}  // namespace xpart::launch
