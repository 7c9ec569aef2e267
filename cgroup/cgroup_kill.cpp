#include "cgroup/cgroup_kill.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <thread>

#include "cgroup/unique_fd.hpp"
#include "libxpart/root_fs.hpp"
#include "libxpart/text.hpp"

namespace xpart::cgroup {
namespace {

using Clock = std::chrono::steady_clock;

Result<std::vector<pid_t>> members(const std::string& dir) {
    auto text = RootFs("/").read(dir + "/cgroup.procs");
    if (!text) return text.error();
    std::vector<pid_t> pids;
    for (const auto& line : split(*text, '\n'))
        if (auto pid = parse_u64(trim(line)); pid && *pid > 0 && *pid < (1u << 30))
            pids.push_back(static_cast<pid_t>(*pid));
    return pids;
}

// v2's cgroup.kill: the kernel kills every member, and every process forked meanwhile.
bool write_cgroup_kill(const std::string& dir) {
    UniqueFd fd(::open((dir + "/cgroup.kill").c_str(), O_WRONLY | O_CLOEXEC));
    return fd.valid() && ::write(fd.get(), "1", 1) == 1;
}

// The pidfd pins the process: if it exits between the membership check and the signal, the
// signal fails with ESRCH instead of reaching whoever reuses the pid.
bool kill_if_member(pid_t pid, Hierarchy h, const std::string& relative) {
    UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!fd.valid()) return false;
    auto text = RootFs("/").read("/proc/" + std::to_string(pid) + "/cgroup");
    if (!text || !member_of(*text, h, relative)) return false;
    return ::syscall(SYS_pidfd_send_signal, fd.get(), SIGKILL, nullptr, 0) == 0;
}

}  // namespace

bool is_empty(const std::string& dir) {
    auto pids = members(dir);
    return !pids || pids->empty();
}

bool member_of(std::string_view proc_cgroup, Hierarchy h, std::string_view relative) {
    for (const auto& line : split(std::string(proc_cgroup), '\n')) {
        // "<id>:<controllers>:<path>"; the path may itself hold ':'.
        const auto a = line.find(':');
        const auto b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos) continue;
        const std::string id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1);
        const bool ours = h == Hierarchy::V2
                              ? id == "0" && controllers.empty()
                              : (',' + controllers + ',').find(",devices,") != std::string::npos;
        if (ours) return line.substr(b + 1) == relative;
    }
    return false;
}

Result<KillReport> kill_members(Hierarchy h, const std::string& mount, const std::string& dir,
                                std::chrono::milliseconds wait) {
    if (dir.size() <= mount.size() || dir.compare(0, mount.size(), mount) != 0 || dir[mount.size()] != '/')
        return Error{"cgroup " + dir + " is not below " + mount};
    const std::string relative = dir.substr(mount.size());
    const auto deadline = Clock::now() + wait;
    KillReport report;
    std::set<pid_t> signalled;
    bool kill_file = h == Hierarchy::V2;
    for (;;) {
        auto pids = members(dir);
        if (!pids) return pids.error();
        report.left = pids->size();
        if (pids->empty() || Clock::now() >= deadline) {
            report.signalled = signalled.size();
            return report;
        }
        if (kill_file && write_cgroup_kill(dir)) {
            signalled.insert(pids->begin(), pids->end());
        } else {
            for (pid_t pid : *pids)
                if (kill_if_member(pid, h, relative)) signalled.insert(pid);
        }
        kill_file = false;  // once: the kernel kills what is forked meanwhile too
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

}  // namespace xpart::cgroup
