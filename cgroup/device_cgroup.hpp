// One cgroup whose device access this library governs, on either hierarchy: the type the
// launcher and `xpart cgroup` use. It acts on the live system (cgroupfs and BPF), whatever
// root prefix discovery read from.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "cgroup/device_rule.hpp"
#include "cgroup/layout.hpp"
#include "libxpart/result.hpp"

namespace xpart::cgroup {

class DeviceCgroup {
public:
    // An existing cgroup directory (e.g. "/sys/fs/cgroup/devices/slurm/uid_0/job_5/step_0").
    static Result<DeviceCgroup> open(Hierarchy hierarchy, const std::string& dir);
    // mkdir <parent>/<name>; an existing name is an error (never adopt someone's cgroup).
    // On v1 the child starts with the parent's rules (the kernel copies them).
    static Result<DeviceCgroup> create(Hierarchy hierarchy, const std::string& parent,
                                       const std::string& name);

    Hierarchy hierarchy() const { return hierarchy_; }
    const std::string& path() const { return dir_; }

    // Writes the pid to cgroup.procs.
    Status move(pid_t pid) const;
    // Replaces our rule set; on failure the previous set stays in force.
    Status apply(const DeviceRuleSet& set) const;
    // The set in force (see V1DeviceController / V2DeviceProgram); nullopt: none of ours.
    Result<std::optional<DeviceRuleSet>> current_rules() const;
    // Drops our rules (v1: back to allow-all; v2: detach our program).
    Status clear() const;
    // rmdir (after moving its processes out); forgets our state. Missing cgroup: error.
    Status remove() const;

private:
    DeviceCgroup(Hierarchy h, std::string dir) : hierarchy_(h), dir_(std::move(dir)) {}
    Hierarchy hierarchy_;
    std::string dir_;
};

}  // namespace xpart::cgroup
