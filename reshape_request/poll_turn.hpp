// One poller per node list: the jobs that wait for the same sibling take turns, so slurmctld
// is asked about that sibling by one of them at a time, whatever the number of jobs (a CPX
// sibling takes eight). The turn is a flock on a file in a directory only the hook's user
// (SlurmUser) owns; the others wait for it without asking slurmctld anything.
#pragma once

#include <memory>
#include <string>

#include "libxpart/result.hpp"

namespace xpart::reshape_request {

class PollTurn {
public:
    virtual ~PollTurn() = default;
    // True once it is this waiter's turn; it keeps it until destroyed. Never blocks.
    virtual bool take() = 0;
};

// The turn for `nodelist` in `dir` (made 0700 when missing). Error, and then each waiter polls
// alone, when `dir` is not a directory of this user's that nobody else may write (a user
// could have made it first in /tmp), or the lock file cannot be opened.
Result<std::unique_ptr<PollTurn>> shared_turn(const std::string& dir, const std::string& nodelist);

// The lock file's name for a node list: its letters, digits, '.', '-' and '_' kept, the rest
// '_', at most 100 bytes (then its hash): "gpu1-2x3g40gb", "gpu_1-4_".
std::string turn_file_name(const std::string& nodelist);

}  // namespace xpart::reshape_request
