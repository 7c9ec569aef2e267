// Where the cgroup hierarchies are: parsed from /proc/self/mountinfo and /proc/self/cgroup
// (read through the root prefix, so recorded layouts replay in tests).
#pragma once

#include <optional>
#include <string>

#include "libxpart/result.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart::cgroup {

enum class Hierarchy { V1, V2 };
const char* to_string(Hierarchy h);

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

    bool has(Hierarchy h) const {
        return h == Hierarchy::V1 ? !v1_devices_mount.empty() : !v2_mount.empty();
    }
    // The hierarchy `auto` picks: v1 devices where mounted (what Slurm 22.05 uses on a hybrid
    // node, and v1 still enforces there), else v2.
    Hierarchy preferred() const { return has(Hierarchy::V1) ? Hierarchy::V1 : Hierarchy::V2; }
    const std::string& mount(Hierarchy h) const { return h == Hierarchy::V1 ? v1_devices_mount : v2_mount; }
    const std::string& own(Hierarchy h) const { return h == Hierarchy::V1 ? v1_devices_own : v2_own; }
};

// Pure parsers (file names only appear in messages). Error when neither a v1 devices
// controller nor a cgroup2 tree is mounted: nothing could enforce device rules.
Result<CgroupLayout> parse_cgroup_layout(const std::string& mountinfo, const std::string& self_cgroup,
                                         const std::string& mountinfo_file = "/proc/self/mountinfo",
                                         const std::string& cgroup_file = "/proc/self/cgroup");
Result<CgroupLayout> detect_cgroup_layout(const RootFs& root);

}  // namespace xpart::cgroup
