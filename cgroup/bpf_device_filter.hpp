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
// r6 minor; r7 scratch). Rules are grouped by (verdict, type, access, major); each group is
//     [type test] [access test] [major test]      each jumps to the next group on mismatch
//     if minor == m1 goto V; if minor == m2 goto V; ...; goto next group   (exact minors)
//     V: r0 = verdict; exit
// (a wildcard minor drops the minor tests). Allow groups come first (verdict 1): an access
// is allowed when its bits are a subset of the rule's. DenyManaged then adds the managed
// groups (verdict 0), which match when the access shares a bit with the rule. Last, the
// default: 0 for DenyAll, 1 for DenyManaged. One compare per exact minor keeps a 64-partition
// program near 200 instructions, which the verifier checks in well under a millisecond.
// Comparisons use 32-bit jumps: majors and minors are u32.
//
// Deferred form (`inherited` not empty): another device program's instructions are appended
// after a mark ("r0 = kDeferMark"), and every access the set allows (and, under DenyManaged,
// every one it leaves alone) runs them instead of returning 1: both programs must allow. This
// is how a program of ours replaces one the kernel will not let us add to (Slurm's, attached
// without BPF_F_ALLOW_MULTI) without widening anything it denied. The inherited code starts
// with r1 = the context, as at a program's entry; it must pass check_inheritable().
constexpr __s32 kDeferMark = 0x78706172;  // "xpar"
std::vector<bpf_insn> generate_device_filter(const DeviceRuleSet& set,
                                             const std::vector<bpf_insn>& inherited = {});

// Self-contained code only (no helper or tail calls, maps or packet loads): what can run
// inside another program unchanged. Slurm's device programs are.
Status check_inheritable(const std::vector<bpf_insn>& insns);

// Decodes a program generate_device_filter() produced (also as the kernel reports it back in
// xlated form), one rule per exact minor, in program order (compare normalized() sets).
// Error when the instructions do not follow that layout.
Result<DeviceRuleSet> decode_device_filter(const std::vector<bpf_insn>& insns);

// The same, keeping the inherited instructions of the deferred form (empty otherwise).
struct DeviceFilterParts {
    DeviceRuleSet set;
    std::vector<bpf_insn> inherited;
};
Result<DeviceFilterParts> split_device_filter(const std::vector<bpf_insn>& insns);

}  // namespace xpart::cgroup
