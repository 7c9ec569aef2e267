#include "launcher/spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace xpart::launch {
namespace {

struct Argv {
    std::vector<std::string> args, envs;
    std::vector<char*> argv, envp;
    Argv(const std::vector<std::string>& a, const EnvMap& env) : args(a), envs(env_to_strings(env)) {
        for (auto& s : args) argv.push_back(s.data());
        argv.push_back(nullptr);
        for (auto& s : envs) envp.push_back(s.data());
        envp.push_back(nullptr);
    }
};

int decode(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

Result<pid_t> spawn(const std::vector<std::string>& argv, const EnvMap& env, int in_fd,
                    int out_fd) {
    if (argv.empty()) return Error{"spawn: empty command"};
    Argv a(argv, env);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (in_fd >= 0)
        posix_spawn_file_actions_adddup2(&actions, in_fd, 0);
    else
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (out_fd >= 0) {
        posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
        posix_spawn_file_actions_adddup2(&actions, out_fd, 2);
    } else {
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    }
    // The child starts with default signal handling and an empty mask, whatever the caller
    // blocked for its own supervision loop.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, a.argv[0], &actions, &attr, a.argv.data(), a.envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) return Error{argv[0] + ": cannot run: " + std::strerror(rc)};
    return pid;
}

}  // namespace

Result<pid_t> spawn_detached(const std::vector<std::string>& argv, const EnvMap& env) {
    return spawn(argv, env, -1, -1);
}

Result<int> wait_child(pid_t pid, std::chrono::steady_clock::time_point deadline,
                       const std::string& what) {
    for (;;) {
        int status = 0;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return decode(status);
        if (r < 0 && errno != EINTR) return Error{what + ": waitpid: " + std::strerror(errno)};
        if (std::chrono::steady_clock::now() >= deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return Error{what + ": timed out"};
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

Result<SpawnResult> run_with_input(const std::vector<std::string>& argv, const EnvMap& env,
                                   const std::string& input, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        return Error{std::string("pipe: ") + std::strerror(errno)};
    }
    auto pid = spawn(argv, env, in[0], out[1]);
    close(in[0]);
    close(out[1]);
    if (!pid) {
        close(in[1]);
        close(out[0]);
        return pid.error();
    }
    // Commands are a few bytes: they fit the pipe buffer, so this write cannot block.
    signal(SIGPIPE, SIG_IGN);
    ssize_t w = write(in[1], input.data(), input.size());
    (void)w;
    close(in[1]);

    SpawnResult result;
    bool timed_out = false;
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd p{out[0], POLLIN, 0};
        int rc = poll(&p, 1, static_cast<int>(left.count()));
        if (rc < 0 && errno == EINTR) continue;
        if (rc <= 0) {
            timed_out = rc == 0;
            break;
        }
        char buf[4096];
        ssize_t n = read(out[0], buf, sizeof buf);
        if (n <= 0) break;
        result.output.append(buf, static_cast<std::size_t>(n));
    }
    close(out[0]);
    if (timed_out) {
        kill(*pid, SIGKILL);
        waitpid(*pid, nullptr, 0);
        return Error{argv[0] + ": no answer within " + std::to_string(timeout.count()) + " ms"};
    }
    auto status = wait_child(*pid, deadline, argv[0]);
    if (!status) return status.error();
    result.exit_status = *status;
    return result;
}

}  // namespace xpart::launch
