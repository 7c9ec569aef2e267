// Runs the program. Without MPS or --confine=rank the launcher simply becomes it (execvpe).
// Otherwise it must outlive the program to leave the MPS session or remove the rank's cgroup,
// so it forks, forwards signals, and watches the rank's MPS daemon: if the daemon dies the
// program is stopped and the rank fails with one clear line instead of hanging in a CUDA call.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "libxpart/env_map.hpp"
#include "libxpart/result.hpp"

namespace xpart::process {

// Why exec_program returned: the exit status to use and the line that says why.
struct ExecFailure {
    int exit_status = 126;  // 127: not found; 126: found but not run; 2: no program given
    std::string message;
};

// Replaces this process with argv[0] (PATH search in `env`'s PATH). Returns only on failure.
ExecFailure exec_program(const std::vector<std::string>& argv, const EnvMap& env);

// Returns the message when the watched resource is gone, else nullopt. Polled every 200 ms.
using HealthCheck = std::function<std::optional<std::string>()>;

// Runs in the forked child just before exec (e.g. entering the rank's cgroup); an error there
// is printed prefixed by `who` and the child exits 1 without running the program.
using BeforeExec = std::function<Status()>;

// Forks and execs argv, forwards SIGTERM/SIGINT/SIGHUP/SIGQUIT/SIGUSR1/SIGUSR2 to it, and
// returns its exit status (128+signal when killed). If `health` reports a problem, prints it
// on stderr prefixed by `who`, sends SIGTERM (SIGKILL 2 s later) and returns 1.
int run_supervised(const std::vector<std::string>& argv, const EnvMap& env,
                   const HealthCheck& health, const std::string& who,
                   const BeforeExec& before_exec = nullptr);

}  // namespace xpart::process
