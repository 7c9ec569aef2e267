#include "cgroup/bpf_device_filter.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

namespace xpart::cgroup {

namespace {

// Registers of the layout (see the header).
constexpr __u8 kCtx = 1, kRaw = 2, kType = 3, kAccess = 4, kMajor = 5, kMinor = 6, kScratch = 7;
constexpr std::size_t kPrologueLength = 7;

bpf_insn insn(__u8 code, __u8 dst, __u8 src, __s16 off, __s32 imm) {
    bpf_insn i{};
    i.code = code;
    i.dst_reg = dst & 0xf;
    i.src_reg = src & 0xf;
    i.off = off;
    i.imm = imm;
    return i;
}
bpf_insn load_ctx_u32(__u8 dst, __s16 off) { return insn(BPF_LDX | BPF_MEM | BPF_W, dst, kCtx, off, 0); }
bpf_insn mov_reg(__u8 dst, __u8 src) { return insn(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0); }
bpf_insn mov_imm(__u8 dst, __s32 imm) { return insn(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm); }
bpf_insn and_imm(__u8 dst, __s32 imm) { return insn(BPF_ALU64 | BPF_AND | BPF_K, dst, 0, 0, imm); }
bpf_insn rsh_imm(__u8 dst, __s32 imm) { return insn(BPF_ALU64 | BPF_RSH | BPF_K, dst, 0, 0, imm); }
bpf_insn jmp32_imm(__u8 op, __u8 dst, __s32 imm) { return insn(BPF_JMP32 | op | BPF_K, dst, 0, 0, imm); }
bpf_insn jump_always(__s16 off = 0) { return insn(BPF_JMP | BPF_JA, 0, 0, off, 0); }
bpf_insn exit_insn() { return insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0); }

// Rule access bits (r=1, w=2, m=4) and the kernel's BPF_DEVCG_ACC_* bits.
constexpr std::pair<unsigned, __s32> kAccessBits[] = {
    {kAccessRead, BPF_DEVCG_ACC_READ}, {kAccessWrite, BPF_DEVCG_ACC_WRITE}, {kAccessMknod, BPF_DEVCG_ACC_MKNOD}};
__s32 to_devcg_access(unsigned access) {
    __s32 a = 0;
    for (const auto& [ours, kernel] : kAccessBits)
        if (access & ours) a |= kernel;
    return a;
}
unsigned from_devcg_access(__s32 a) {
    unsigned access = 0;
    for (const auto& [ours, kernel] : kAccessBits)
        if (a & kernel) access |= ours;
    return access;
}
constexpr __s32 kAllDevcgAccess = BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD;

std::vector<bpf_insn> prologue() {
    return {
        load_ctx_u32(kRaw, offsetof(bpf_cgroup_dev_ctx, access_type)),
        mov_reg(kType, kRaw), and_imm(kType, 0xffff),
        mov_reg(kAccess, kRaw), rsh_imm(kAccess, 16),
        load_ctx_u32(kMajor, offsetof(bpf_cgroup_dev_ctx, major)),
        load_ctx_u32(kMinor, offsetof(bpf_cgroup_dev_ctx, minor)),
    };
}

// Rules sharing verdict, type, access and major; `minors` empty means any minor.
struct RuleGroup {
    bool allow;
    DeviceType type;
    unsigned access;
    std::optional<unsigned> major;
    bool any_minor = false;
    std::set<unsigned> minors;
};

std::vector<RuleGroup> group_rules(const std::vector<DeviceRule>& rules, bool allow) {
    using Key = std::tuple<char, unsigned, bool, unsigned>;
    std::map<Key, RuleGroup> groups;
    for (const auto& r : rules) {
        const Key key{static_cast<char>(r.type), r.access, r.major.has_value(), r.major.value_or(0)};
        auto [it, fresh] = groups.emplace(key, RuleGroup{allow, r.type, r.access, r.major, false, {}});
        (void)fresh;
        if (r.minor) it->second.minors.insert(*r.minor);
        else it->second.any_minor = true;
    }
    std::vector<RuleGroup> out;
    for (auto& [k, g] : groups) {
        if (g.any_minor) g.minors.clear();  // the wildcard covers every exact minor
        out.push_back(std::move(g));
    }
    return out;
}

// `to_defer` collects the jumps to the inherited program (deferred form), patched at the end.
void append_group(std::vector<bpf_insn>& out, const RuleGroup& g, std::vector<std::size_t>* to_defer) {
    std::vector<std::size_t> to_next, to_verdict;
    if (g.type != DeviceType::All) {
        to_next.push_back(out.size());
        out.push_back(jmp32_imm(BPF_JNE, kType,
                                g.type == DeviceType::Char ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK));
    }
    const __s32 access = to_devcg_access(g.access);
    if (g.allow && access != kAllDevcgAccess) {
        // Allowed only if no requested bit lies outside the rule's bits.
        out.push_back(mov_reg(kScratch, kAccess));
        out.push_back(and_imm(kScratch, ~access & kAllDevcgAccess));
        to_next.push_back(out.size());
        out.push_back(jmp32_imm(BPF_JNE, kScratch, 0));
    } else if (!g.allow) {
        // Denied if any requested bit is one of the rule's.
        out.push_back(mov_reg(kScratch, kAccess));
        out.push_back(and_imm(kScratch, access));
        to_next.push_back(out.size());
        out.push_back(jmp32_imm(BPF_JEQ, kScratch, 0));
    }
    if (g.major) {
        to_next.push_back(out.size());
        out.push_back(jmp32_imm(BPF_JNE, kMajor, static_cast<__s32>(*g.major)));
    }
    if (!g.any_minor) {
        for (unsigned minor : g.minors) {
            to_verdict.push_back(out.size());
            out.push_back(jmp32_imm(BPF_JEQ, kMinor, static_cast<__s32>(minor)));
        }
        to_next.push_back(out.size());
        out.push_back(jump_always());
    }
    const std::size_t verdict = out.size();
    out.push_back(mov_imm(0, g.allow ? 1 : 0));
    if (g.allow && to_defer) {
        to_defer->push_back(out.size());
        out.push_back(jump_always());
    } else {
        out.push_back(exit_insn());
    }
    const std::size_t next = out.size();
    for (std::size_t i : to_next) out[i].off = static_cast<__s16>(next - i - 1);
    for (std::size_t i : to_verdict) out[i].off = static_cast<__s16>(verdict - i - 1);
}

bool is(const bpf_insn& a, const bpf_insn& b) {
    return a.code == b.code && a.dst_reg == b.dst_reg && a.src_reg == b.src_reg && a.off == b.off &&
           a.imm == b.imm;
}

}  // namespace

std::vector<bpf_insn> generate_device_filter(const DeviceRuleSet& set, const std::vector<bpf_insn>& inherited) {
    std::vector<bpf_insn> out = prologue();
    std::vector<std::size_t> to_defer;
    std::vector<std::size_t>* defer = inherited.empty() ? nullptr : &to_defer;
    for (const auto& g : group_rules(set.allow, true)) append_group(out, g, defer);
    if (set.policy == DevicePolicy::DenyManaged)
        for (const auto& g : group_rules(set.managed, false)) append_group(out, g, defer);
    const bool managed = set.policy == DevicePolicy::DenyManaged;
    if (defer && (managed || !to_defer.empty())) {
        // DenyManaged falls through to the inherited program; DenyAll ends in a deny. The
        // verifier refuses unreachable code, so a set that allows nothing carries no copy.
        if (!managed) {
            out.push_back(mov_imm(0, 0));
            out.push_back(exit_insn());
        }
        const std::size_t mark = out.size();
        for (std::size_t i : to_defer) out[i].off = static_cast<__s16>(mark - i - 1);
        out.push_back(mov_imm(0, kDeferMark));
        // One at a time: GCC 14 warns (stringop-overflow, a false positive) on a range insert.
        out.reserve(out.size() + inherited.size());
        for (const bpf_insn& i : inherited) out.push_back(i);
        return out;
    }
    out.push_back(mov_imm(0, managed ? 1 : 0));
    out.push_back(exit_insn());
    return out;
}

Status check_inheritable(const std::vector<bpf_insn>& insns) {
    if (insns.empty()) return Error{"the device program to keep has no instructions"};
    for (std::size_t i = 0; i < insns.size(); ++i) {
        const bpf_insn& x = insns[i];
        const __u8 cls = BPF_CLASS(x.code);
        const bool call = (cls == BPF_JMP || cls == BPF_JMP32) &&
                          (BPF_OP(x.code) == BPF_CALL || BPF_OP(x.code) == 0xf0 /* tail call */);
        const bool packet = cls == BPF_LD && (BPF_MODE(x.code) == BPF_ABS || BPF_MODE(x.code) == BPF_IND);
        const bool map_ref = x.code == (BPF_LD | BPF_DW | BPF_IMM) && x.src_reg != 0;
        if (call || packet || map_ref)
            return Error{"the device program to keep uses helper calls or maps (instruction " +
                         std::to_string(i) + "); xpart can only keep self-contained programs like Slurm's"};
    }
    return ok_status();
}

Result<DeviceFilterParts> split_device_filter(const std::vector<bpf_insn>& insns) {
    auto fail = [](std::size_t at, const char* what) {
        return Error{"device program instruction " + std::to_string(at) + ": " + what +
                     " (not a program xpart generated)"};
    };
    const auto pro = prologue();
    if (insns.size() < pro.size() + 1) return fail(insns.size(), "program too short");
    for (std::size_t i = 0; i < pro.size(); ++i)
        if (!is(insns[i], pro[i])) return fail(i, "unexpected prologue");
    // Our part ends at the mark (deferred form) or with the program; our own code never loads
    // the mark's value, so its first occurrence is the mark.
    std::size_t end = kPrologueLength;
    while (end < insns.size() && !is(insns[end], mov_imm(0, kDeferMark))) ++end;
    const bool deferred = end < insns.size();
    DeviceFilterParts parts;
    if (deferred) parts.inherited.assign(insns.begin() + static_cast<std::ptrdiff_t>(end) + 1, insns.end());
    DeviceRuleSet& set = parts.set;
    const auto jne = BPF_JMP32 | BPF_JNE | BPF_K;
    const auto jeq = BPF_JMP32 | BPF_JEQ | BPF_K;
    auto target = [&](std::size_t at) -> std::size_t {
        return insns[at].off < 0 ? 0 : at + 1 + static_cast<std::size_t>(insns[at].off);
    };
    bool in_deny = false;
    std::size_t i = kPrologueLength;
    if (deferred && i == end) {  // DenyManaged with no rules: everything goes to the inherited program
        set.policy = DevicePolicy::DenyManaged;
        return parts;
    }
    while (i < end) {
        const std::size_t start = i;
        DeviceRule rule{DeviceType::All, std::nullopt, std::nullopt, kAccessAll};
        int mode = 0;  // 0: no access test, 1: subset test (allow), 2: overlap test (deny)
        std::vector<std::size_t> to_next;
        if (insns[i].code == jne && insns[i].dst_reg == kType) {
            if (insns[i].imm == BPF_DEVCG_DEV_CHAR) rule.type = DeviceType::Char;
            else if (insns[i].imm == BPF_DEVCG_DEV_BLOCK) rule.type = DeviceType::Block;
            else return fail(i, "unknown device type");
            to_next.push_back(i++);
        }
        if (i + 2 < end && is(insns[i], mov_reg(kScratch, kAccess)) &&
            insns[i + 1].code == (BPF_ALU64 | BPF_AND | BPF_K) && insns[i + 1].dst_reg == kScratch &&
            insns[i + 2].dst_reg == kScratch && insns[i + 2].imm == 0) {
            const __s32 bits = insns[i + 1].imm;
            if (insns[i + 2].code == jne) {
                mode = 1;
                rule.access = from_devcg_access(~bits & kAllDevcgAccess);
            } else if (insns[i + 2].code == jeq) {
                mode = 2;
                rule.access = from_devcg_access(bits);
            } else {
                return fail(i + 2, "unexpected access test");
            }
            to_next.push_back(i + 2);
            i += 3;
        }
        if (i < end && insns[i].code == jne && insns[i].dst_reg == kMajor) {
            rule.major = static_cast<unsigned>(insns[i].imm);
            to_next.push_back(i++);
        }
        std::vector<unsigned> minors;
        std::size_t verdict_at = 0;
        while (i < end && insns[i].code == jeq && insns[i].dst_reg == kMinor) {
            if (verdict_at == 0) verdict_at = target(i);
            if (target(i) != verdict_at) return fail(i, "minor tests jump to different verdicts");
            minors.push_back(static_cast<unsigned>(insns[i].imm));
            ++i;
        }
        if (!minors.empty()) {
            if (i >= end || !is(insns[i], jump_always(insns[i].off))) return fail(i, "expected 'goto next'");
            to_next.push_back(i++);
            if (verdict_at != i) return fail(i, "minor tests do not reach the verdict");
        }
        // The verdict: "r0 = v; exit", or in the deferred form an allow "r0 = 1; goto mark"
        // (the verifier drops that jump where the mark follows at once).
        if (i >= end || insns[i].code != (BPF_ALU64 | BPF_MOV | BPF_K) || insns[i].dst_reg != 0)
            return fail(i, "expected 'r0 = verdict; exit'");
        const __s32 verdict = insns[i].imm;
        bool exits = false;
        if (i + 1 < end && is(insns[i + 1], exit_insn())) {
            exits = true;
            i += 2;
        } else if (deferred && verdict == 1 && i + 1 < end && is(insns[i + 1], jump_always(insns[i + 1].off)) &&
                   target(i + 1) == end) {
            i += 2;
        } else if (deferred && verdict == 1 && i + 1 == end) {
            i += 1;
        } else {
            return fail(i, "expected 'r0 = verdict; exit'");
        }
        for (std::size_t j : to_next)
            if (target(j) != i) return fail(j, "jump does not reach the next rule group");
        const bool no_tests = start + 2 == i && exits;
        if (i == insns.size() || (deferred && i == end && no_tests && verdict == 0)) {
            // The default verdict ends our part. After deny groups only the DenyManaged default
            // (1) fits the layout; the deferred form's DenyManaged default is the mark itself.
            if (no_tests && verdict == 0 && !in_deny) {
                set.policy = DevicePolicy::DenyAll;
                return parts;
            }
            if (no_tests && verdict == 1 && !deferred) {
                set.policy = DevicePolicy::DenyManaged;
                return parts;
            }
            return fail(start, "missing default verdict");
        }
        std::vector<DeviceRule>* into = nullptr;
        if (verdict == 1 && !in_deny && mode != 2) {
            into = &set.allow;
        } else if (verdict == 0 && mode == 2) {
            in_deny = true;
            into = &set.managed;
        } else {
            return fail(start, "rule group out of order");
        }
        if (minors.empty()) into->push_back(rule);
        for (unsigned m : minors) {
            rule.minor = m;
            into->push_back(rule);
        }
        if (i == end) {  // deferred: what no rule decided goes to the inherited program
            set.policy = DevicePolicy::DenyManaged;
            return parts;
        }
    }
    return fail(i, "missing default verdict");
}

Result<DeviceRuleSet> decode_device_filter(const std::vector<bpf_insn>& insns) {
    auto parts = split_device_filter(insns);
    if (!parts) return parts.error();
    return std::move(parts->set);
}

}  // namespace xpart::cgroup
