#include "spank_plugin/task_confine.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <regex>

#include "cgroup/device_cgroup.hpp"
#include "cgroup/layout.hpp"
#include "cgroup/allowed_in.hpp"
#include "cgroup/rank_leftover.hpp"
#include "cgroup/slurm_step_reclaim.hpp"
#include "cgroup/v1_device_controller.hpp"
#include "binding/rank_cgroup.hpp"
#include "libxpart/text.hpp"

namespace xpart::spank {
namespace {

// Slurm's task cgroup: "…/step_0/task_3" (cgroup/v1), "…/step_0/user/task_3" (cgroup/v2).
bool is_task_cgroup(cgroup::Hierarchy h, const std::string& dir) {
    static const std::regex v1(R"(.*/step_[0-9]+/task_[0-9]+$)");
    static const std::regex v2(R"(.*/step_[0-9]+/user/task_[0-9]+$)");
    return std::regex_match(dir, h == cgroup::Hierarchy::V1 ? v1 : v2);
}

}  // namespace

Result<TaskCgroup> task_cgroup(pid_t task) {
    RootFs live("/");
    return task_cgroup(task, [&live](const std::string& path) { return live.read(path); });
}

Result<TaskCgroup> task_cgroup(pid_t task, const ProcRead& read) {
    const std::string cgroup_file = "/proc/" + std::to_string(task) + "/cgroup";
    auto locate = [&]() -> Result<TaskCgroup> {
        auto mountinfo = read("/proc/self/mountinfo");
        auto cgroups = read(cgroup_file);
        if (!mountinfo) return mountinfo.error();
        if (!cgroups) return cgroups.error();
        auto layout = cgroup::parse_cgroup_layout(*mountinfo, *cgroups, "/proc/self/mountinfo", cgroup_file);
        if (!layout) return layout.error();
        TaskCgroup t;
        t.hierarchy = layout->preferred();
        t.dir = layout->own(t.hierarchy);
        t.slurms = is_task_cgroup(t.hierarchy, t.dir);
        return t;
    };
    auto where = locate();
    if (!where || !where->slurms) return where;
    // Slurm makes the step's and the task's directories the job user's (v1; v2 the task's):
    // every step's v1 ones are taken back in slurm_spank_task_post_fork
    // (cgroup/slurm_step_reclaim.hpp); a confined task's are taken back here on both.
    for (const auto& dir : {where->dir.substr(0, where->dir.rfind('/')), where->dir})
        if (auto s = cgroup::take_back(dir); !s) return s.error();
    // Renamed by the user before it was taken back: the names no longer lead to the task.
    auto again = locate();
    if (!again) return again;
    if (again->dir != where->dir)
        return Error{"its cgroup moved from " + where->dir + " to " + again->dir + " while it was confined"};
    return where;
}

Result<binding::DeviceOpenable> task_openable(const TaskCgroup& where, const RootFs& root,
                                     const std::vector<DeviceFile>& files) {
    std::vector<std::string> paths;
    for (const auto& f : files) paths.push_back(root.host_path(f.path));
    auto cg = cgroup::DeviceCgroup::open(where.hierarchy, where.dir);
    if (!cg) return Error{cg.error().message};
    auto answers = cgroup::allowed_in(*cg, paths);
    if (!answers) return Error{answers.error().message};
    std::map<std::string, bool> by_path;
    for (std::size_t i = 0; i < files.size(); ++i) by_path[files[i].path] = (*answers)[i];
    return binding::DeviceOpenable([by_path = std::move(by_path)](const DeviceFile& f) {
        auto it = by_path.find(f.path);
        return it == by_path.end() || it->second;
    });
}

Result<std::string> confine_task(const TaskCgroup& where, const Node& node, const Partition& mine,
                                 pid_t task, unsigned local_id) {
    const std::string who = "--xpart-confine: ";
    const cgroup::Hierarchy h = where.hierarchy;
    const auto rules = binding::rank_rule_set(node, mine);
    // Slurm's own task cgroup: narrowed in place (Slurm removes it with the step), which costs
    // no cgroup of ours to make, enter and remove per task. On v2 it is also the only place:
    // Slurm's task program (attached with no flag) lets the kernel attach nothing below it;
    // ours replaces it there and runs its code, so what Slurm denied stays denied.
    if (where.slurms) {
        Status s = h == cgroup::Hierarchy::V1 ? cgroup::narrow_in_place(where.dir, rules) : [&]() -> Status {
            auto cg = cgroup::DeviceCgroup::open(h, where.dir);
            return cg ? cg->apply(rules) : Status(cg.error());
        }();
        if (!s) return Error{who + s.error().message};
        return std::string();
    }
    auto cg = cgroup::DeviceCgroup::create(h, where.dir, cgroup::rank_cgroup_name(local_id, getpid()));
    if (!cg) return Error{who + cg.error().message};
    Status s = cg->apply(rules);
    if (s) s = cg->move(task);
    if (!s) {
        (void)cg->remove();
        return Error{who + s.error().message};
    }
    return cg->path();
}

Status release_task(const std::string& dir) {
    auto layout = cgroup::detect_cgroup_layout(RootFs("/"));
    if (!layout) return layout.error();
    const cgroup::Hierarchy h =
        !layout->v1_devices_mount.empty() && dir.rfind(layout->v1_devices_mount, 0) == 0
            ? cgroup::Hierarchy::V1 : cgroup::Hierarchy::V2;
    auto cg = cgroup::DeviceCgroup::open(h, dir);
    if (!cg) return cg.error();
    // A process the task left behind (a daemon it forked) goes back to the step's cgroup: it
    // dies with the step, and the step's cgroup must be empty of children for Slurm.
    if (auto procs = RootFs("/").read(dir + "/cgroup.procs");
        procs && !procs->empty()) {
        auto parent = cgroup::DeviceCgroup::open(h, dir.substr(0, dir.rfind('/')));
        if (!parent) return parent.error();
        for (const auto& line : split(*procs, '\n'))
            if (auto pid = parse_u64(trim(line)))
                (void)parent->move(static_cast<pid_t>(*pid));  // it may have exited meanwhile
    }
    return cg->remove();
}

}  // namespace xpart::spank
