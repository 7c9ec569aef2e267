#include "cgroup/allowed_in.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "libxpart/unique_fd.hpp"
#include "libxpart/device_probe.hpp"
#include "libxpart/root_fs.hpp"
#include "libxpart/text.hpp"

namespace xpart::cgroup {
namespace {

// The vfork child: the parent's memory and thread, the parent suspended until it exits. It
// moves itself in (pid 0: the writer), answers into `out`, and exits; nothing it calls
// allocates or takes a lock, and every signal is blocked.
[[noreturn]] __attribute__((noinline)) void probe_from_inside(int procs, const std::vector<std::string>& paths,
                                                               char* out, int* move_errno) {
    if (::write(procs, "0", 1) != 1) {
        *move_errno = errno;
        _exit(1);
    }
    for (std::size_t i = 0; i < paths.size(); ++i) out[i] = device_denied(paths[i]) ? '0' : '1';
    _exit(0);
}

// A v2 cgroup frozen (cgroup.freeze, or a frozen ancestor): a process moved in would stop
// there, and with it the vfork parent.
bool frozen(const DeviceCgroup& cgroup) {
    if (cgroup.hierarchy() != Hierarchy::V2) return false;
    const RootFs live("/");
    auto freeze = live.read(cgroup.path() + "/cgroup.freeze");
    if (freeze && trim(*freeze) == "1") return true;
    auto events = live.read(cgroup.path() + "/cgroup.events");
    return events && events->find("frozen 1") != std::string::npos;
}

}  // namespace

Result<std::vector<bool>> allowed_in(const DeviceCgroup& cgroup, const std::vector<std::string>& paths) {
    if (paths.empty()) return std::vector<bool>{};
    const std::string where = "probe in cgroup " + cgroup.path() + ": ";
    const std::string procs = cgroup.path() + "/cgroup.procs";
    UniqueFd into(::open(procs.c_str(), O_WRONLY | O_CLOEXEC));
    if (!into.valid()) return Error{where + "cannot open " + procs + ": " + std::strerror(errno)};
    if (frozen(cgroup)) return Error{where + "it is frozen (cgroup.freeze): not probed"};
    std::string out(paths.size(), '?');
    int move_errno = 0;
    // No handler of the parent's may run in the child: it would run on the parent's memory.
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    const pid_t pid = ::vfork();
    if (pid == 0) probe_from_inside(into.get(), paths, out.data(), &move_errno);
    const int vfork_errno = errno;
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    if (pid < 0) return Error{where + "vfork: " + std::strerror(vfork_errno)};
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (move_errno != 0) return Error{where + "cannot move into it: " + std::strerror(move_errno)};
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || out.find('?') != std::string::npos)
        return Error{where + "the probe ended without an answer (status " + std::to_string(status) + ")"};
    std::vector<bool> result(paths.size());
    for (std::size_t i = 0; i < paths.size(); ++i) result[i] = out[i] == '1';
    return result;
}

}  // namespace xpart::cgroup
