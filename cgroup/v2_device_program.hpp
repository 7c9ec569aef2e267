// cgroup v2: our device program on one cgroup. Programs are recognised as ours by their name
// (kProgramName); programs others attached are never replaced or detached.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "cgroup/device_rule.hpp"
#include "cgroup/unique_fd.hpp"
#include "libxpart/result.hpp"

namespace xpart::cgroup {

class V2DeviceProgram {
public:
    static constexpr const char* kProgramName = "xpart_dev";
    static constexpr std::size_t kMaxInstructions = 32767;

    // Generates and loads (verifies) the program; nothing is attached yet. Error carries the
    // first verifier line.
    static Result<V2DeviceProgram> load(const DeviceRuleSet& set);

    // Attaches to the cgroup directory with BPF_F_ALLOW_MULTI. When one of our programs is
    // already attached it is swapped atomically (BPF_F_REPLACE): the kernel runs either the
    // old or the new rule set, never neither. Further stale copies of ours are then detached.
    // On failure the previous program stays attached.
    Status attach(const std::string& cgroup_dir) const;

    int fd() const { return fd_.get(); }

    // Detaches every program of ours from the cgroup (others stay).
    static Status detach_own(const std::string& cgroup_dir);
    // The rule set our attached program enforces, decoded from the kernel's copy of its
    // instructions; nullopt when none of ours is attached.
    static Result<std::optional<DeviceRuleSet>> attached_rules(const std::string& cgroup_dir);

private:
    explicit V2DeviceProgram(UniqueFd fd) : fd_(std::move(fd)) {}
    UniqueFd fd_;
};

}  // namespace xpart::cgroup
