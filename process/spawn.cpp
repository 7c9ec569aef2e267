#include "process/spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "process/exit_status.hpp"

extern char** environ;

namespace xpart::process {
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

// Two close-on-exec pipes, or neither.
Status two_pipes(int a[2], int b[2]) {
    if (pipe2(a, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
    if (pipe2(b, O_CLOEXEC) != 0) {
        int err = errno;
        close(a[0]);
        close(a[1]);
        return Error{std::string("pipe: ") + std::strerror(err)};
    }
    return ok_status();
}

// The child's side of a fork that execs as another user: default signals, empty mask.
void reset_signals() {
    sigset_t none;
    sigemptyset(&none);
    for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, nullptr);
}

// execvpe searches the caller's PATH, which posix_spawnp does too.
[[noreturn]] void exec_or_die(Argv& a, int report_fd) {
    execvpe(a.argv[0], a.argv.data(), a.envp.data());
    int err = errno;
    if (report_fd >= 0) {
        ssize_t w = write(report_fd, &err, sizeof err);
        (void)w;
    }
    _exit(127);
}

// In a child that is still root: moves itself into the cgroup (its errno, or 0).
int join_cgroup(const std::string& procs) {
    if (procs.empty()) return 0;
    int fd = open(procs.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return errno;
    int err = write(fd, "0", 1) == 1 ? 0 : errno;
    close(fd);
    return err;
}

// fork+exec for a child that must join a cgroup or become another user first (posix_spawn
// can do neither).
Result<pid_t> spawn_placed(Argv& a, int in_fd, int out_fd, const ChildPlace& place) {
    int status_pipe[2];
    if (pipe2(status_pipe, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
    pid_t pid = fork();
    if (pid < 0) {
        close(status_pipe[0]);
        close(status_pipe[1]);
        return Error{std::string("fork: ") + std::strerror(errno)};
    }
    if (pid == 0) {
        reset_signals();
        int devnull = open("/dev/null", O_RDWR);
        dup2(in_fd >= 0 ? in_fd : devnull, 0);
        dup2(out_fd >= 0 ? out_fd : devnull, 1);
        dup2(out_fd >= 0 ? out_fd : devnull, 2);
        int err = join_cgroup(place.cgroup_procs);
        if (err == 0 && place.as && !become(*place.as)) err = EPERM;
        if (err != 0) {
            ssize_t w = write(status_pipe[1], &err, sizeof err);
            (void)w;
            _exit(126);
        }
        exec_or_die(a, status_pipe[1]);
    }
    close(status_pipe[1]);
    int err = 0;
    ssize_t n;
    while ((n = read(status_pipe[0], &err, sizeof err)) < 0 && errno == EINTR) {
    }
    close(status_pipe[0]);
    if (n == static_cast<ssize_t>(sizeof err)) {
        waitpid(pid, nullptr, 0);
        return Error{a.args[0] + ": cannot run" +
                     (place.as ? " as uid " + std::to_string(place.as->uid) : std::string()) +
                     (place.cgroup_procs.empty() ? "" : " in " + place.cgroup_procs) + ": " +
                     std::strerror(err)};
    }
    return pid;
}

Result<pid_t> spawn(const std::vector<std::string>& argv, const EnvMap& env, int in_fd,
                    int out_fd, const ChildPlace& place = {}) {
    if (argv.empty()) return Error{"spawn: empty command"};
    Argv a(argv, env);
    if (place.as || !place.cgroup_procs.empty()) return spawn_placed(a, in_fd, out_fd, place);
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
    // Woken by the child's exit, not a timer (its output's EOF comes just before it is waitable).
    const auto fd = open_pidfd(pid);
    for (;;) {
        int status = 0;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return exit_status(status);
        if (r < 0 && errno != EINTR) return Error{what + ": waitpid: " + std::strerror(errno)};
        if (std::chrono::steady_clock::now() >= deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return Error{what + ": timed out"};
        }
        await_exit(fd, deadline);
    }
}

Result<SpawnResult> run_with_input(const std::vector<std::string>& argv, const EnvMap& env,
                                   const std::string& input, std::chrono::milliseconds timeout,
                                   const ChildPlace& place) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int in[2], out[2];
    if (auto s = two_pipes(in, out); !s) return s.error();
    auto pid = spawn(argv, env, in[0], out[1], place);
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

Result<ProcessIdentity> spawn_daemon(const DaemonSpec& spec) {
    if (spec.argv.empty()) return Error{"spawn: empty command"};
    // A relative program path ("./bin/x") means relative to the caller's directory: resolve it
    // here, the daemon changes to spec.cwd before it execs.
    std::vector<std::string> argv = spec.argv;
    if (!spec.cwd.empty() && argv[0].find('/') != std::string::npos && argv[0][0] != '/') {
        std::error_code ec;
        auto absolute = std::filesystem::absolute(argv[0], ec);
        if (!ec) argv[0] = absolute.string();
    }
    Argv a(argv, spec.env);
    const std::string what = spec.argv[0];
    // report: the middle child sends the daemon's pid, the daemon an errno if it cannot exec
    // (its end closes on exec). go: the caller lets the daemon exec once it has its identity.
    int report[2], go[2];
    if (auto s = two_pipes(report, go); !s) return s.error();
    pid_t middle = fork();
    if (middle < 0) {
        for (int fd : {report[0], report[1], go[0], go[1]}) close(fd);
        return Error{std::string("fork: ") + std::strerror(errno)};
    }
    if (middle == 0) {
        close(report[0]);
        close(go[1]);
        setsid();
        // Root's cgroup first, while still root: the daemon is forked inside it.
        pid_t daemon = join_cgroup(spec.cgroup_procs) == 0 ? -1 : -2;
        if (daemon == -1 && become(spec.as)) daemon = fork();
        if (daemon == 0) {
            char ok = 0;
            if (read(go[0], &ok, 1) != 1 || ok != 'g') _exit(1);
            reset_signals();
            int err = 0;
            int out = open(spec.output.c_str(),
                           O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
            int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
            if (out < 0 || devnull < 0)
                err = errno;
            else if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0)
                err = errno;
            if (err == 0 && dup2(devnull, 0) >= 0 && dup2(out, 1) >= 0 && dup2(out, 2) >= 0)
                exec_or_die(a, report[1]);
            ssize_t w = write(report[1], &err, sizeof err);
            (void)w;
            _exit(126);
        }
        ssize_t w = write(report[1], &daemon, sizeof daemon);
        (void)w;
        _exit(daemon > 0 ? 0 : 1);
    }
    close(report[1]);
    close(go[0]);
    waitpid(middle, nullptr, 0);
    auto fail = [&](const std::string& why) -> Result<ProcessIdentity> {
        close(report[0]);
        close(go[1]);
        return Error{what + ": cannot start as uid " + std::to_string(spec.as.uid) + ": " + why};
    };
    pid_t daemon = -1;
    if (read(report[0], &daemon, sizeof daemon) != static_cast<ssize_t>(sizeof daemon) || daemon <= 0)
        return fail(daemon == -2 ? "could not join " + spec.cgroup_procs
                                 : std::string("could not become that user or fork"));
    auto id = identify(daemon);  // it waits on `go`: alive, and ours
    if (!id) {
        kill(daemon, SIGKILL);
        return fail("it vanished before exec");
    }
    ssize_t w = write(go[1], "g", 1);
    (void)w;
    close(go[1]);
    int err = 0;
    ssize_t n;
    while ((n = read(report[0], &err, sizeof err)) < 0 && errno == EINTR) {
    }
    close(report[0]);
    if (n == static_cast<ssize_t>(sizeof err))
        return Error{what + ": cannot start as uid " + std::to_string(spec.as.uid) + " (output " +
                     spec.output + ", directory " + spec.cwd + "): " + std::strerror(err)};
    return *id;
}

}  // namespace xpart::process
