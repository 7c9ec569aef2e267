#include "cgroup/cgroup_kill.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <thread>

#include "cgroup/cgroup_dirs.hpp"
#include "libxpart/unique_fd.hpp"
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

std::string_view controller_of(Hierarchy h) { return h == Hierarchy::V1 ? "devices" : ""; }

// The pidfd pins the process: if it exits between the membership check and the signal, the
// signal fails with ESRCH instead of reaching whoever reuses the pid.
bool kill_if_member(pid_t pid, std::string_view controller, const std::string& relative) {
    UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!fd.valid()) return false;
    auto text = RootFs("/").read("/proc/" + std::to_string(pid) + "/cgroup");
    if (!text || !member_of(*text, controller, relative)) return false;
    return ::syscall(SYS_pidfd_send_signal, fd.get(), SIGKILL, nullptr, 0) == 0;
}

// Far more than any Slurm or systemd tree holds; a bound on what a user can make a walk do.
constexpr std::size_t kMaxCgroups = 65536;

}  // namespace

bool is_empty(const std::string& dir) {
    auto pids = members(dir);
    return !pids || pids->empty();
}

bool member_of(std::string_view proc_cgroup, Hierarchy h, std::string_view relative) {
    return member_of(proc_cgroup, controller_of(h), relative);
}

bool member_of(std::string_view proc_cgroup, std::string_view controller, std::string_view relative) {
    for (const auto& line : split(std::string(proc_cgroup), '\n')) {
        // "<id>:<controllers>:<path>"; the path may itself hold ':'.
        const auto a = line.find(':');
        const auto b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos) continue;
        const std::string id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1);
        const bool ours = controller.empty()
                              ? id == "0" && controllers.empty()
                              : id != "0" && (',' + controllers + ',').find(',' + std::string(controller) + ',') !=
                                                 std::string::npos;
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
                if (kill_if_member(pid, controller_of(h), relative)) signalled.insert(pid);
        }
        kill_file = false;  // once: the kernel kills what is forked meanwhile too
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

Result<std::vector<std::string>> cgroups_below(const std::string& top) {
    // Iterative, and bounded in count rather than depth: a user who made cgroups on v1 chose
    // how deep they go.
    std::vector<std::string> pending{top}, out;
    while (!pending.empty()) {
        const std::string dir = std::move(pending.back());
        pending.pop_back();
        if (dir != top) out.push_back(dir);
        if (out.size() > kMaxCgroups)
            return Error{"cgroup " + top + ": more than " + std::to_string(kMaxCgroups) + " cgroups below it"};
        auto names = child_dirs(dir);
        if (!names) continue;  // gone meanwhile: nothing below it to kill
        for (const auto& n : *names) pending.push_back(dir + "/" + n);
    }
    // Parents were added before their children: reversed, every child comes first.
    std::reverse(out.begin(), out.end());
    return out;
}

Status remove_cgroup_tree(const std::string& top) {
    auto below = cgroups_below(top);
    if (!below) return below.error();
    below->push_back(top);
    for (const auto& d : *below)
        if (::rmdir(d.c_str()) != 0 && errno != ENOENT)
            return Error{"cannot remove cgroup " + d + ": " + std::strerror(errno)};
    return ok_status();
}

Result<SubtreeKill> kill_subtree(const MountedHierarchy& where, const std::string& top,
                                 std::chrono::milliseconds wait) {
    const std::string& mount = where.mount;
    if (top.size() <= mount.size() || top.compare(0, mount.size(), mount) != 0 || top[mount.size()] != '/')
        return Error{"cgroup " + top + " is not below " + mount};
    if (!is_cgroup_dir(top)) return SubtreeKill{};
    const auto deadline = Clock::now() + wait;
    std::set<pid_t> signalled;
    bool kill_file = where.controller.empty();
    for (;;) {
        auto below = cgroups_below(top);
        if (!below) return below.error();
        std::vector<std::string> dirs = std::move(*below);
        dirs.push_back(top);
        std::vector<Survivor> listed;
        for (const auto& d : dirs)
            if (auto pids = members(d))
                for (pid_t pid : *pids) listed.push_back({pid, d});
        if (listed.empty() || Clock::now() >= deadline) {
            SubtreeKill r;
            r.signalled = signalled.size();
            r.survivors = std::move(listed);
            return r;
        }
        if (kill_file && write_cgroup_kill(top)) {  // the whole subtree, forks meanwhile too
            for (const auto& s : listed) signalled.insert(s.pid);
        } else {
            for (const auto& s : listed)
                if (kill_if_member(s.pid, where.controller, s.cgroup.substr(mount.size()))) signalled.insert(s.pid);
        }
        kill_file = false;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

}  // namespace xpart::cgroup
