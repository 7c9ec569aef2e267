// cgroup v2: our device program on one cgroup. Programs are recognised as ours by their name
// (kProgramName). Nothing another program denies is ever allowed: where the kernel lets ours
// run beside others, it is added; where ours must replace one (Slurm's task program, attached
// without BPF_F_ALLOW_MULTI, or an override program above), ours carries that program's code
// and runs it for what ours allows (bpf_device_filter.hpp, deferred form).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "cgroup/device_rule.hpp"
#include "libxpart/result.hpp"

namespace xpart::cgroup {

class V2DeviceProgram {
public:
    static constexpr const char* kProgramName = "xpart_dev";
    static constexpr std::size_t kMaxInstructions = 32767;

    // Generates the program and checks its size; the kernel loads (verifies) it in attach(),
    // once it is known what it must carry. The verifier's first line is in attach's error.
    static Result<V2DeviceProgram> load(const DeviceRuleSet& set);

    // Attaches to the cgroup directory (see the .cpp for where and with which flags). One of
    // ours already there is swapped atomically (BPF_F_REPLACE, or the kernel's replacement of
    // a single program): the kernel runs either the old or the new rule set, never neither.
    // Further stale copies of ours are then detached. On failure the previous program stays.
    Status attach(const std::string& cgroup_dir) const;

    // Detaches every program of ours from the cgroup (others stay); where ours replaced
    // someone's program, that program's code is attached again in its place.
    static Status detach_own(const std::string& cgroup_dir);
    // The rule set our attached program enforces, decoded from the kernel's copy of its
    // instructions; nullopt when none of ours is attached.
    static Result<std::optional<DeviceRuleSet>> attached_rules(const std::string& cgroup_dir);

private:
    explicit V2DeviceProgram(DeviceRuleSet set) : set_(std::move(set)) {}
    DeviceRuleSet set_;
};

}  // namespace xpart::cgroup
