// A process as root can prove it started it: pid, kernel start time and real uid, taken while
// the process was known to be the one spawned. A pid alone is not proof (pids are reused, and
// a user can write any number into a file); the triple is, for as long as it matches.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "libxpart/unique_fd.hpp"

namespace xpart::process {

struct ProcessIdentity {
    pid_t pid = -1;
    unsigned long long start_time = 0;  // /proc/<pid>/stat field 22, clock ticks since boot
    uid_t uid = 0;                      // real uid
};

// The identity of a running (not zombie) process, or nullopt.
std::optional<ProcessIdentity> identify(pid_t pid);
// True while `id` names the same process, still running.
bool still_running(const ProcessIdentity& id);
// Sends `sig` only to that very process: a pidfd is opened first and the identity checked
// after, so a pid reused in between is never signalled. False when it is gone (or differs).
bool signal_if_same(const ProcessIdentity& id, int sig);
// Waits until that very process has exited: true once it is gone, false if it still runs at
// `deadline`. An event wait, not a poll (the pidfd, opened before the identity is checked, is
// the recorded process's whenever the check holds): a reused pid is never waited on.
bool exits_by(const ProcessIdentity& id, std::chrono::steady_clock::time_point deadline);

// A pidfd of `pid` (invalid on error). It pins the process, not the pid's later owners.
UniqueFd open_pidfd(pid_t pid);
// Sleeps until the pidfd's process exits (it turns readable) or `deadline`; 2 ms without one.
void await_exit(const UniqueFd& pidfd, std::chrono::steady_clock::time_point deadline);

// "pid start_time uid" and back (parse: nullopt on anything malformed).
std::string format_identity(const ProcessIdentity& id);
std::optional<ProcessIdentity> parse_identity(const std::string& text);

}  // namespace xpart::process
