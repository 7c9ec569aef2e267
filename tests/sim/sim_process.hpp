// Test helper: the build tree's xpart-sim ($XPART_BUILDDIR/xpart-sim) as a child process, with
// its stdout on a pipe (to wait for "ready") and its stderr in a file, and bounded waits.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace xpart::testing {

// Polls `done` every 10 ms for up to `timeout_ms`: events are waited for, never slept on.
inline bool eventually(const std::function<bool()>& done, int timeout_ms = 5000) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!done()) {
        if (std::chrono::steady_clock::now() > end) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

class SimProcess {
public:
    // Starts `xpart-sim args...`; stderr is appended to `stderr_path`.
    SimProcess(const std::vector<std::string>& args, const std::string& stderr_path) {
        const char* b = std::getenv("XPART_BUILDDIR");
        const std::string exe = std::string(b && *b ? b : ".") + "/xpart-sim";
        int out[2];
        if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            const int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
            ::dup2(out[1], 1);
            ::dup2(err, 2);
            std::vector<char*> argv{const_cast<char*>(exe.c_str())};
            for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
            argv.push_back(nullptr);
            ::execv(exe.c_str(), argv.data());
            ::_exit(127);
        }
        ::close(out[1]);
        stdout_ = out[0];
    }
    ~SimProcess() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        ::close(stdout_);
    }
    SimProcess(const SimProcess&) = delete;
    SimProcess& operator=(const SimProcess&) = delete;
    pid_t pid() const { return pid_; }

    // True once a line "ready" came on stdout within `timeout_ms`.
    bool wait_ready(int timeout_ms = 5000) {
        std::string seen;
        const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        while (seen.find("ready\n") == std::string::npos) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                end - std::chrono::steady_clock::now()).count();
            pollfd p{stdout_, POLLIN, 0};
            if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
            char buf[256];
            const ssize_t n = ::read(stdout_, buf, sizeof buf);
            if (n <= 0) return false;
            seen.append(buf, static_cast<std::size_t>(n));
        }
        return true;
    }
    // Sends `sig` (0: none) and reaps the process: its exit status, 128 + signal when killed,
    // -1 when it did not end within `timeout_ms`.
    int finish(int sig = SIGTERM, int timeout_ms = 5000) {
        if (sig) ::kill(pid_, sig);
        int status = 0;
        if (!eventually([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, timeout_ms)) return -1;
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

private:
    pid_t pid_ = -1;
    int stdout_ = -1;
};

}  // namespace xpart::testing
