#include "cgroup/slurm_step_reclaim.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>

#include "cgroup/cgroup_kill.hpp"
#include "cgroup/cgroup_dirs.hpp"
#include "libxpart/unique_fd.hpp"
#include "libxpart/root_fs.hpp"
#include "libxpart/text.hpp"

namespace xpart::cgroup {
namespace {

bool is_job_level(std::string_view name) {
    if (name.size() <= 4 || name.substr(0, 4) != "job_") return false;
    for (char c : name.substr(4))
        if (c < '0' || c > '9') return false;
    return true;
}

// Every process of the user's cgroup `dir` killed, then it and what the user made below it
// removed, deepest first.
Result<std::size_t> end_user_cgroup(const MountedHierarchy& h, const std::string& dir,
                                    std::chrono::milliseconds wait) {
    auto killed = kill_subtree(h, dir, wait);
    if (!killed) return killed.error();
    if (!killed->survivors.empty())
        return Error{"cgroup " + dir + " (the job's user made it): pid " + std::to_string(killed->survivors[0].pid) +
                     " outlived SIGKILL"};
    if (auto s = remove_cgroup_tree(dir); !s) return Error{s.error().message + " (the job's user made " + dir + ")"};
    return killed->signalled;
}

}  // namespace

std::optional<std::string> slurm_step_path(std::string_view proc_cgroup) {
    for (const auto& line : split(std::string(proc_cgroup), '\n')) {
        const auto a = line.find(':');
        const auto b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos || line.substr(0, a) == "0") continue;  // v2's line
        const auto parts = split(line.substr(b + 1), '/');
        // "", ..., "job_<id>", "step_<s>" [, one level below the step]
        for (std::size_t i = parts.size() < 4 ? 2 : parts.size() - 2; i < parts.size(); ++i) {
            if (!is_job_level(parts[i - 1]) || parts[i].size() <= 5 || parts[i].rfind("step_", 0) != 0) continue;
            std::string path;
            for (std::size_t k = 1; k <= i; ++k) path += "/" + parts[k];
            return path;
        }
    }
    return std::nullopt;
}

Result<bool> take_back(const std::string& dir) {
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) return Error{"cgroup " + dir + ": " + std::strerror(errno)};
    struct stat st {};
    int rc = ::fstat(fd.get(), &st);
    const bool theirs = rc == 0 && (st.st_uid != 0 || st.st_gid != 0);
    if (theirs) rc = ::fchown(fd.get(), 0, 0);
    if (rc != 0) return Error{"cgroup " + dir + ": cannot make it root's: " + std::strerror(errno)};
    return theirs;
}

bool made_by_user(const std::string& dir) {
    struct stat st {};
    return ::lstat((dir + "/cgroup.procs").c_str(), &st) == 0 && st.st_uid != 0;
}

SlurmStepReclaimer::SlurmStepReclaimer(std::vector<MountedHierarchy> v1, std::string step)
    : v1_(std::move(v1)), step_(std::move(step)) {}

Result<SlurmStepReclaimer> SlurmStepReclaimer::for_this_process() {
    RootFs live("/");
    auto mountinfo = live.read("/proc/self/mountinfo");
    if (!mountinfo) return mountinfo.error();
    auto self = live.read("/proc/self/cgroup");
    if (!self) return self.error();
    const auto step = slurm_step_path(*self);
    if (!step) return SlurmStepReclaimer({}, "");
    auto layout = parse_cgroup_layout(*mountinfo, *self);
    if (!layout) return layout.error();
    return SlurmStepReclaimer(layout->v1_hierarchies, *step);
}

Status SlurmStepReclaimer::reclaim(const MountedHierarchy& h, const std::string& dir, bool step,
                                   std::chrono::milliseconds wait, StepReclaim& out) {
    if (!done_.count(dir)) {
        auto theirs = take_back(dir);
        if (!theirs) return theirs.error();
        out.taken += *theirs ? 1 : 0;
    }
    auto names = child_dirs(dir);
    if (!names) return names.error();
    for (const auto& n : *names) {
        const std::string path = dir + "/" + n;
        if (done_.count(path)) continue;
        if (made_by_user(path)) {
            auto killed = end_user_cgroup(h, path, wait);
            if (!killed) return killed.error();
            out.removed.push_back(path + " (" + std::to_string(*killed) + " killed)");
        } else if (step) {  // Slurm's task directory; below it only root's cgroups are left
            if (auto s = reclaim(h, path, false, wait, out); !s) return s;
        }
    }
    done_.insert(dir);
    return ok_status();
}

Result<StepReclaim> SlurmStepReclaimer::run(std::chrono::milliseconds wait) {
    StepReclaim out;
    for (const auto& h : v1_) {
        const std::string dir = h.mount + step_;
        if (!done_.count(dir) && !is_cgroup_dir(dir)) continue;  // a controller Slurm does not use
        // The step's children are read on every call: Slurm adds a task's before its post_fork.
        if (auto s = reclaim(h, dir, true, wait, out); !s) return s.error();
    }
    return out;
}

Result<StepReclaim> reclaim_slurm_step(const std::vector<MountedHierarchy>& v1, const std::string& step,
                                       std::chrono::milliseconds wait) {
    return SlurmStepReclaimer(v1, step).run(wait);
}

}  // namespace xpart::cgroup
