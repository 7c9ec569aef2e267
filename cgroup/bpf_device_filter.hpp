// The cgroup v2 device filter: a BPF_PROG_TYPE_CGROUP_DEVICE program generated from a rule
// set, and the inverse (rule set from the program's instructions), so `show` reports what the
// kernel runs rather than what we meant to load. Pure: no syscalls here.
#pragma once

#include <linux/bpf.h>

#include <vector>

#include "cgroup/device_rule.hpp"
#include "libxpart/result.hpp"

namespace xpart::cgroup {

// Program layout (registers after the prologue: r3 device type, r4 access bits, r5 major,
// r6 minor; r7 scratch). One block per rule, each ending in "r0 = verdict; exit"; a failed
// test jumps to the next block. Allow rules come first (verdict 1): an access is allowed when
// its bits are a subset of the rule's. DenyManaged then adds one block per managed rule
// (verdict 0) that matches when the access shares a bit with the rule. Last, the default:
// 0 for DenyAll, 1 for DenyManaged. Comparisons use 32-bit jumps: majors are u32.
std::vector<bpf_insn> generate_device_filter(const DeviceRuleSet& set);

// Decodes a program generate_device_filter() produced (also as the kernel reports it back in
// xlated form). Error when the instructions do not follow that layout.
Result<DeviceRuleSet> decode_device_filter(const std::vector<bpf_insn>& insns);

}  // namespace xpart::cgroup
