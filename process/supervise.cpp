#include "process/supervise.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>

#include "process/exit_status.hpp"

namespace xpart::process {
namespace {

constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

}  // namespace

ExecFailure exec_program(const std::vector<std::string>& argv, const EnvMap& env) {
    if (argv.empty()) return {2, "no program given (put it after --)"};
    std::vector<std::string> envs = env_to_strings(env);
    std::vector<char*> cargv, cenvp;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (auto& e : envs) cenvp.push_back(e.data());
    cenvp.push_back(nullptr);
    // execvpe searches the PATH of the calling process: the program's PATH is the same one.
    execvpe(cargv[0], cargv.data(), cenvp.data());
    const int err = errno;
    return {err == ENOENT ? 127 : 126, argv[0] + ": " + std::strerror(err)};
}

int run_supervised(const std::vector<std::string>& argv, const EnvMap& env,
                   const HealthCheck& health, const std::string& who,
                   const BeforeExec& before_exec) {
    sigset_t watched, old;
    sigemptyset(&watched);
    sigaddset(&watched, SIGCHLD);
    for (int s : kForwarded) sigaddset(&watched, s);
    sigprocmask(SIG_BLOCK, &watched, &old);

    pid_t child = fork();
    if (child < 0) {
        std::cerr << who << ": fork: " << std::strerror(errno) << "\n";
        sigprocmask(SIG_SETMASK, &old, nullptr);
        return 1;
    }
    if (child == 0) {
        sigprocmask(SIG_SETMASK, &old, nullptr);
        if (before_exec)
            if (auto s = before_exec(); !s) {
                std::cerr << who << ": " << s.error().message << "\n";
                _exit(1);
            }
        const ExecFailure failed = exec_program(argv, env);
        std::cerr << who << ": " << failed.message << "\n";
        _exit(failed.exit_status);
    }

    using Clock = std::chrono::steady_clock;
    std::optional<Clock::time_point> kill_at;  // set once the program was told to stop
    int result = -1;
    for (;;) {
        timespec tick{0, 200 * 1000 * 1000};
        siginfo_t info;
        int sig = sigtimedwait(&watched, &info, &tick);
        int status = 0;
        pid_t r = waitpid(child, &status, WNOHANG);
        if (r == child) {
            if (result < 0) result = exit_status(status);
            break;
        }
        if (sig > 0 && sig != SIGCHLD) kill(child, sig);
        if (!kill_at) {
            if (auto problem = health ? health() : std::nullopt) {
                std::cerr << who << ": " << *problem << "; stopping the program\n";
                kill(child, SIGTERM);
                kill_at = Clock::now() + std::chrono::seconds(2);
                result = 1;
            }
        } else if (Clock::now() >= *kill_at) {
            kill(child, SIGKILL);
        }
    }
    sigprocmask(SIG_SETMASK, &old, nullptr);
    return result;
}

}  // namespace xpart::process
