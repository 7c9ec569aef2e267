#include "process/detached.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "process/process_identity.hpp"
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
// it works. Its answer: a status byte (0: the work's answer follows; 1: why there was no
// work), a length (8 bytes) and the bytes, so a helper killed halfway is told apart from one
// that answered. Then it waits for the caller to close the pipe.
[[noreturn]] void run_helper(int out, const std::function<std::string()>& work, const std::string& cgroup_procs) {
    reset_child_signals();
    signal(SIGPIPE, SIG_IGN);  // a caller gone before the answer: the write fails, no more
    if (out > 3) close_range(3, static_cast<unsigned>(out) - 1, 0);
    close_range(static_cast<unsigned>(out < 3 ? 3 : out + 1), ~0U, 0);
    char status = 0;
    std::string answer;
    if (int err = join_cgroup(cgroup_procs); err != 0) {
        status = 1;
        answer = "cannot join " + cgroup_procs + ": " + std::strerror(err);
    } else {
        try {
            answer = work();
        } catch (...) {
            _exit(1);
        }
    }
    const std::uint64_t n = answer.size();
    const bool sent = write_all(out, &status, 1) &&
                      write_all(out, reinterpret_cast<const char*>(&n), sizeof n) &&
                      write_all(out, answer.data(), answer.size());
    pollfd p{out, 0, 0};  // POLLERR once the reader is gone
    while (sent && poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
    _exit(sent ? 0 : 1);
}

enum class Read { Whole, Late, Ended, Failed };

// Reads exactly `n` bytes by `deadline`.
Read read_exactly(int fd, char* to, std::size_t n, std::chrono::steady_clock::time_point deadline) {
    while (n > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return Read::Late;
        pollfd p{fd, POLLIN, 0};
        int rc = poll(&p, 1, static_cast<int>(left.count()));
        if (rc < 0 && errno != EINTR) return Read::Failed;
        if (rc <= 0) continue;
        ssize_t got = read(fd, to, n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return Read::Failed;
        if (got == 0) return Read::Ended;
        to += got;
        n -= static_cast<std::size_t>(got);
    }
    return Read::Whole;
}

const char* why_not(Read r, bool halfway) {
    switch (r) {
        case Read::Late: return "the helper did not answer in time";
        case Read::Ended: return halfway ? "the helper ended halfway through its answer" : "the helper ended without an answer";
        default: return "reading the helper's answer failed";
    }
}

}  // namespace

Result<DetachedWork> DetachedWork::start(const std::function<std::string()>& work,
                                         const std::string& cgroup_procs) {
    int answer[2], who[2];  // who: the middle child tells the helper's pid
    if (pipe2(answer, O_CLOEXEC) != 0) return errno_error("pipe", errno);
    if (pipe2(who, O_CLOEXEC) != 0) {
        int err = errno;
        close(answer[0]);
        close(answer[1]);
        return errno_error("pipe", err);
    }
    pid_t middle = fork();
    if (middle < 0) {
        int err = errno;
        for (int fd : {answer[0], answer[1], who[0], who[1]}) close(fd);
        return errno_error("fork", err);
    }
    if (middle == 0) {
        close(answer[0]);
        close(who[0]);
        pid_t helper = fork();
        if (helper == 0) {
            close(who[1]);
            run_helper(answer[1], work, cgroup_procs);
        }
        const bool told = helper > 0 && write(who[1], &helper, sizeof helper) == static_cast<ssize_t>(sizeof helper);
        _exit(told ? 0 : 1);
    }
    close(answer[1]);
    close(who[1]);
    UniqueFd reply(answer[0]), told(who[0]);
    int status = 0;
    while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
    }
    // The middle has exited (or slurmstepd reaped it first): what it wrote is there.
    pid_t helper = -1;
    if (read(told.get(), &helper, sizeof helper) != static_cast<ssize_t>(sizeof helper) || helper <= 0)
        return Error{"fork: the helper did not start"};
    // Alive until `reply` closes, so this pidfd is the helper's.
    UniqueFd pidfd = open_pidfd(helper);
    if (!pidfd.valid()) return errno_error("pidfd_open of the helper", errno);
    return DetachedWork(std::move(reply), std::move(pidfd));
}

bool DetachedWork::done() const {
    pollfd p{answer_.get(), POLLIN, 0};
    return answer_.valid() && poll(&p, 1, 0) == 1;
}

Result<std::string> DetachedWork::result(std::chrono::steady_clock::time_point deadline) {
    if (!answer_.valid()) return Error{"the helper's answer was already taken"};
    UniqueFd reply = std::move(answer_), helper = std::move(helper_);
    char status = 0;
    std::uint64_t len = 0;
    Read r = read_exactly(reply.get(), &status, 1, deadline);
    if (r == Read::Whole) r = read_exactly(reply.get(), reinterpret_cast<char*>(&len), sizeof len, deadline);
    if (r != Read::Whole) return Error{why_not(r, false)};
    if (len > (1u << 24)) return Error{"the helper's answer is too long"};
    std::string text(len, '\0');
    r = read_exactly(reply.get(), text.data(), text.size(), deadline);
    if (r != Read::Whole) return Error{why_not(r, true)};
    reply.reset();  // the helper may go now
    await_exit(helper, deadline);
    if (status != 0) return Error{"the helper " + text};
    return text;
}

}  // namespace xpart::process
