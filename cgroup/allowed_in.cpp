#include "cgroup/allowed_in.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cgroup/unique_fd.hpp"
#include "libxpart/device_probe.hpp"

namespace xpart::cgroup {
namespace {

// The child of a multithreaded parent (slurmstepd): only async-signal-safe calls, on memory
// prepared before fork. It waits for the parent's go (sent once it is in the cgroup); EOF
// instead means the move failed, and it probes nothing.
[[noreturn]] void probe_child(int go, int answer, const std::vector<std::string>& paths, char* out) {
    char c = 0;
    ssize_t n;
    while ((n = ::read(go, &c, 1)) < 0 && errno == EINTR) {}
    if (n != 1) _exit(1);
    for (std::size_t i = 0; i < paths.size(); ++i) out[i] = !device_denied(paths[i]) ? '1' : '0';
    for (std::size_t done = 0; done < paths.size();) {
        ssize_t w = ::write(answer, out + done, paths.size() - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) _exit(1);
        done += static_cast<std::size_t>(w);
    }
    _exit(0);
}

// Reads `want` bytes by `deadline`; false on EOF, error or time out.
bool read_all(int fd, std::string& out, std::size_t want, std::chrono::steady_clock::time_point deadline) {
    char buf[256];
    while (out.size() < want) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        pollfd p{fd, POLLIN, 0};
        int r = ::poll(&p, 1, static_cast<int>(left.count()));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return true;
}

}  // namespace

Result<std::vector<bool>> allowed_in(const DeviceCgroup& cgroup, const std::vector<std::string>& paths,
                                      std::chrono::milliseconds limit) {
    if (paths.empty()) return std::vector<bool>{};
    int go[2], answer[2];
    if (::pipe2(go, O_CLOEXEC) != 0) return Error{std::string("probe in cgroup: pipe: ") + std::strerror(errno)};
    UniqueFd go_read(go[0]), go_write(go[1]);
    if (::pipe2(answer, O_CLOEXEC) != 0) return Error{std::string("probe in cgroup: pipe: ") + std::strerror(errno)};
    UniqueFd answer_read(answer[0]), answer_write(answer[1]);
    std::string out(paths.size(), '0');
    const pid_t pid = ::fork();
    if (pid < 0) return Error{std::string("probe in cgroup: fork: ") + std::strerror(errno)};
    if (pid == 0) probe_child(go_read.get(), answer_write.get(), paths, out.data());
    go_read.reset();
    answer_write.reset();

    Status moved = cgroup.move(pid);
    if (moved) {
        const char c = 'g';
        if (::write(go_write.get(), &c, 1) != 1) moved = Error{std::string("probe in cgroup: pipe: ") + std::strerror(errno)};
    }
    go_write.reset();  // EOF: a child not moved in exits without probing
    std::string got;
    const bool answered =
        moved && read_all(answer_read.get(), got, paths.size(), std::chrono::steady_clock::now() + limit);
    if (!answered) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!moved) return Error{"probe in cgroup " + cgroup.path() + ": " + moved.error().message};
    if (!answered)
        return Error{"probe in cgroup " + cgroup.path() + ": no answer within " + std::to_string(limit.count()) +
                     " ms (is the cgroup frozen?)"};
    std::vector<bool> result(paths.size());
    for (std::size_t i = 0; i < paths.size(); ++i) result[i] = got[i] == '1';
    return result;
}

}  // namespace xpart::cgroup
