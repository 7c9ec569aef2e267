// Who a process acts as. Root's code never works inside a place a user controls: it forks a
// child that becomes the job's user first (as pyxis does before it touches user files), so
// whatever that user planted there (a symlink, a socket, a renamed directory) can only ever
// redirect the user's own privileges.
#pragma once

#include <sys/types.h>

#include <functional>

#include "libxpart/result.hpp"

namespace xpart::process {

struct Credentials {
    uid_t uid = 0;
    gid_t gid = 0;
};

Credentials current_credentials();

// In a child about to act for the user: primary group only (no supplementary groups, no
// inherited ones of root), then gid, then uid; checks that root cannot be regained. A no-op
// when the process already runs as `who`.
Status become(const Credentials& who);

// Runs `work` in a forked child that has become `who`; returns its exit code (128+signal when
// killed). The child never returns into the caller: it _exits with what `work` returned.
Result<int> run_as(const Credentials& who, const std::function<int()>& work);

}  // namespace xpart::process
