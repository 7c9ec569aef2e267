#include "launcher/task_confine.hpp"

#include <unistd.h>

#include <regex>

#include "cgroup/device_cgroup.hpp"
#include "cgroup/layout.hpp"
#include "cgroup/rank_leftover.hpp"
#include "cgroup/v1_device_controller.hpp"
#include "launcher/rank_cgroup.hpp"
#include "libxpart/text.hpp"

namespace xpart::launch {
namespace {

// Slurm's task cgroup ("…/step_0/task_3").
bool is_task_cgroup(const std::string& dir) {
    static const std::regex task(R"(.*/step_[0-9]+/task_[0-9]+$)");
    return std::regex_match(dir, task);
}

}  // namespace

Result<std::string> confine_task(const Node& node, const Partition& mine, pid_t task, unsigned local_id) {
    const std::string who = "--xpart-confine: task " + std::to_string(local_id) + ": ";
    RootFs live("/");
    auto mountinfo = live.read("/proc/self/mountinfo");
    auto cgroups = live.read("/proc/" + std::to_string(task) + "/cgroup");
    if (!mountinfo) return Error{who + mountinfo.error().message};
    if (!cgroups) return Error{who + cgroups.error().message};
    auto layout = cgroup::parse_cgroup_layout(*mountinfo, *cgroups, "/proc/self/mountinfo",
                                              "/proc/" + std::to_string(task) + "/cgroup");
    if (!layout) return Error{who + layout.error().message};
    const cgroup::Hierarchy h = layout->preferred();
    // Slurm's own v1 task cgroup: narrowed in place (Slurm removes it with the step), which
    // costs no cgroup of ours to make, enter and remove per task.
    if (h == cgroup::Hierarchy::V1 && is_task_cgroup(layout->own(h))) {
        if (auto s = cgroup::narrow_in_place(layout->own(h), rank_rule_set(node, mine)); !s)
            return Error{who + s.error().message};
        return std::string();
    }
    auto cg = cgroup::DeviceCgroup::create(h, layout->own(h),
                                           cgroup::rank_cgroup_name(local_id, getpid()));
    if (!cg) return Error{who + cg.error().message};
    Status s = cg->apply(rank_rule_set(node, mine));
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

}  // namespace xpart::launch
