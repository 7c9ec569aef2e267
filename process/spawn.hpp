// Runs a helper program (nvidia-cuda-mps-control) with a given environment, feeds it stdin,
// collects its output, and never waits longer than a deadline: a wedged daemon must turn into
// an error, not a hung rank.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "process/credentials.hpp"
#include "libxpart/env_map.hpp"
#include "process/process_identity.hpp"
#include "libxpart/result.hpp"

namespace xpart::process {

struct SpawnResult {
    int exit_status = -1;  // exit code, or 128+signal
    std::string output;    // stdout and stderr together
};

// Starts argv[0] (searched in PATH) without waiting; stdin/stdout/stderr go to /dev/null.
Result<pid_t> spawn_detached(const std::vector<std::string>& argv, const EnvMap& env);
// Waits for a child started by spawn_detached; kills it at the deadline.
Result<int> wait_child(pid_t pid, std::chrono::steady_clock::time_point deadline,
                       const std::string& what);

// Where a child runs and as whom: it joins the cgroup first (writes "0" to `cgroup_procs`,
// while still root), then becomes `as`. Empty/null: stays where the caller is, as the caller.
struct ChildPlace {
    const Credentials* as = nullptr;
    std::string cgroup_procs;
};

// Runs argv with `input` on stdin; Error when it cannot start or runs past `timeout` (then it
// is killed).
Result<SpawnResult> run_with_input(const std::vector<std::string>& argv, const EnvMap& env,
                                   const std::string& input, std::chrono::milliseconds timeout,
                                   const ChildPlace& place = {});

struct DaemonSpec {
    std::vector<std::string> argv;  // argv[0] searched in PATH
    EnvMap env;                     // the whole environment: nothing of the caller's leaks in
    Credentials as;                 // the daemon runs as this user (and in its own session)
    std::string output;             // stdout+stderr appended here, opened as `as` (no symlink)
    std::string cwd;                // opened as `as` too
    std::string cgroup_procs;       // joined before becoming `as` (root's cgroup); "" : none
};
// Starts a daemon that outlives the caller (double fork, new session). Its identity is taken
// while it waits, before exec, for the caller's go-ahead: the pid cannot be a reused one.
// Error when it could not become the user, open its output or exec.
Result<ProcessIdentity> spawn_daemon(const DaemonSpec& spec);

}  // namespace xpart::process
