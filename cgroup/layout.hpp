// Where the cgroup hierarchies are: parsed from /proc/self/mountinfo and /proc/self/cgroup
// (read through the root prefix, so recorded layouts replay in tests).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "libxpart/result.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart::cgroup {

enum class Hierarchy { V1, V2 };
const char* to_string(Hierarchy h);

// One mounted hierarchy, as the kill and take-back walks need it: where it is mounted, and the
// token its line in /proc/<pid>/cgroup carries: a v1 controller ("devices", "freezer",
// "name=systemd"), or "" for cgroup2's "0::" line.
struct MountedHierarchy {
    std::string mount;
    std::string controller;
};

// What the node mounts: only a v1 devices controller, only the unified tree, or both.
enum class LayoutKind { V1, V2, Hybrid };
const char* to_string(LayoutKind k);

struct CgroupLayout {
    LayoutKind kind = LayoutKind::V1;
    // Mount points (empty when not mounted) and this process's own cgroup directory below
    // each (mount point + its /proc/self/cgroup path relative to the mount's root).
    std::string v1_devices_mount;
    std::string v1_devices_own;
    std::string v2_mount;
    std::string v2_own;
    // Every v1 hierarchy mounted with its whole tree (root "/"), one per controller set, the
    // one under /sys/fs/cgroup where it is mounted twice: Slurm makes a job's directories in
    // each controller it uses (freezer, cpuset, memory, devices, ...).
    std::vector<MountedHierarchy> v1_hierarchies;

    bool has(Hierarchy h) const {
        return h == Hierarchy::V1 ? !v1_devices_mount.empty() : !v2_mount.empty();
    }
    // The hierarchy `auto` picks: v1 devices where mounted (what Slurm 22.05 uses on a hybrid
    // node, and v1 still enforces there), else v2.
    Hierarchy preferred() const { return has(Hierarchy::V1) ? Hierarchy::V1 : Hierarchy::V2; }
    const std::string& mount(Hierarchy h) const { return h == Hierarchy::V1 ? v1_devices_mount : v2_mount; }
    const std::string& own(Hierarchy h) const { return h == Hierarchy::V1 ? v1_devices_own : v2_own; }
    MountedHierarchy mounted(Hierarchy h) const { return {mount(h), h == Hierarchy::V1 ? "devices" : ""}; }
    // v1_hierarchies, then the cgroup2 tree where mounted: everywhere a process has a cgroup.
    std::vector<MountedHierarchy> all_hierarchies() const;
};

// Pure parsers (file names only appear in messages). Error when neither a v1 devices
// controller nor a cgroup2 tree is mounted: nothing could enforce device rules.
Result<CgroupLayout> parse_cgroup_layout(const std::string& mountinfo, const std::string& self_cgroup,
                                         const std::string& mountinfo_file = "/proc/self/mountinfo",
                                         const std::string& cgroup_file = "/proc/self/cgroup");
Result<CgroupLayout> detect_cgroup_layout(const RootFs& root);

}  // namespace xpart::cgroup
