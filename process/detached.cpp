#include "process/detached.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "process/spawn.hpp"

namespace xpart::process {
namespace {

bool write_all(int fd, const char* p, std::size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

// The helper: none of the caller's descriptors (slurmstepd's sockets among them) held while
// it works; the answer is its length (8 bytes) and its bytes, so a helper killed halfway is
// told apart from one that answered.
[[noreturn]] void run_helper(int out, const std::function<std::string()>& work) {
    reset_child_signals();
    signal(SIGPIPE, SIG_IGN);  // a caller gone before the answer: the write fails, no more
    if (out > 3) close_range(3, static_cast<unsigned>(out) - 1, 0);
    close_range(static_cast<unsigned>(out < 3 ? 3 : out + 1), ~0U, 0);
    std::string answer;
    try {
        answer = work();
    } catch (...) {
        _exit(1);
    }
    const std::uint64_t n = answer.size();
    const bool sent = write_all(out, reinterpret_cast<const char*>(&n), sizeof n) &&
                      write_all(out, answer.data(), answer.size());
    _exit(sent ? 0 : 1);
}

}  // namespace

Result<DetachedWork> DetachedWork::start(const std::function<std::string()>& work) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return errno_error("pipe", errno);
    pid_t middle = fork();
    if (middle < 0) {
        int err = errno;
        close(p[0]);
        close(p[1]);
        return errno_error("fork", err);
    }
    if (middle == 0) {
        close(p[0]);
        pid_t helper = fork();
        if (helper == 0) run_helper(p[1], work);
        _exit(helper > 0 ? 0 : 1);
    }
    close(p[1]);
    int status = 0;
    pid_t r;
    while ((r = waitpid(middle, &status, 0)) < 0 && errno == EINTR) {
    }
    // ECHILD: someone reaped it first (slurmstepd); the answer, or its absence, tells.
    if (r == middle && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        close(p[0]);
        return Error{"fork: the helper did not start"};
    }
    return DetachedWork(UniqueFd(p[0]));
}

bool DetachedWork::done() const {
    pollfd p{fd_.get(), POLLIN, 0};
    return fd_.valid() && poll(&p, 1, 0) == 1;
}

Result<std::string> DetachedWork::result(std::chrono::steady_clock::time_point deadline) {
    if (!fd_.valid()) return Error{"the helper's answer was already taken"};
    UniqueFd fd = std::move(fd_);
    std::string got;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return Error{"the helper did not answer in time"};
        pollfd p{fd.get(), POLLIN, 0};
        int rc = poll(&p, 1, static_cast<int>(left.count()));
        if (rc < 0 && errno != EINTR) return errno_error("poll", errno);
        if (rc <= 0) continue;
        char buf[4096];
        ssize_t n = read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno_error("read", errno);
        if (n == 0) break;
        got.append(buf, static_cast<std::size_t>(n));
    }
    std::uint64_t len = 0;
    if (got.size() < sizeof len) return Error{"the helper ended without an answer"};
    std::memcpy(&len, got.data(), sizeof len);
    if (got.size() - sizeof len != len) return Error{"the helper ended halfway through its answer"};
    return got.substr(sizeof len);
}

}  // namespace xpart::process
