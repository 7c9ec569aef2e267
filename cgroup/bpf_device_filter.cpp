#include "cgroup/bpf_device_filter.hpp"

#include <cstddef>

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
bpf_insn exit_insn() { return insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0); }

// Rule access bits (r=1, w=2, m=4) as the kernel's BPF_DEVCG_ACC_* bits, and back.
__s32 to_devcg_access(unsigned access) {
    __s32 a = 0;
    if (access & kAccessRead) a |= BPF_DEVCG_ACC_READ;
    if (access & kAccessWrite) a |= BPF_DEVCG_ACC_WRITE;
    if (access & kAccessMknod) a |= BPF_DEVCG_ACC_MKNOD;
    return a;
}
unsigned from_devcg_access(__s32 a) {
    unsigned access = 0;
    if (a & BPF_DEVCG_ACC_READ) access |= kAccessRead;
    if (a & BPF_DEVCG_ACC_WRITE) access |= kAccessWrite;
    if (a & BPF_DEVCG_ACC_MKNOD) access |= kAccessMknod;
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

// One rule block; the jump offsets are patched once the block's length is known.
void append_block(std::vector<bpf_insn>& out, const DeviceRule& rule, bool allow) {
    const std::size_t start = out.size();
    if (rule.type != DeviceType::All)
        out.push_back(jmp32_imm(BPF_JNE, kType,
                                rule.type == DeviceType::Char ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK));
    const __s32 access = to_devcg_access(rule.access);
    if (allow && access != kAllDevcgAccess) {
        // Allowed only if no requested bit lies outside the rule's bits.
        out.push_back(mov_reg(kScratch, kAccess));
        out.push_back(and_imm(kScratch, ~access & kAllDevcgAccess));
        out.push_back(jmp32_imm(BPF_JNE, kScratch, 0));
    } else if (!allow) {
        // Denied if any requested bit is one of the rule's.
        out.push_back(mov_reg(kScratch, kAccess));
        out.push_back(and_imm(kScratch, access));
        out.push_back(jmp32_imm(BPF_JEQ, kScratch, 0));
    }
    if (rule.major) out.push_back(jmp32_imm(BPF_JNE, kMajor, static_cast<__s32>(*rule.major)));
    if (rule.minor) out.push_back(jmp32_imm(BPF_JNE, kMinor, static_cast<__s32>(*rule.minor)));
    out.push_back(mov_imm(0, allow ? 1 : 0));
    out.push_back(exit_insn());
    const std::size_t next = out.size();
    for (std::size_t i = start; i < next; ++i)
        if (BPF_CLASS(out[i].code) == BPF_JMP32)
            out[i].off = static_cast<__s16>(next - i - 1);
}

bool is(const bpf_insn& a, const bpf_insn& b) {
    return a.code == b.code && a.dst_reg == b.dst_reg && a.src_reg == b.src_reg && a.off == b.off &&
           a.imm == b.imm;
}

}  // namespace

std::vector<bpf_insn> generate_device_filter(const DeviceRuleSet& set) {
    std::vector<bpf_insn> out = prologue();
    for (const auto& r : set.allow) append_block(out, r, true);
    if (set.policy == DevicePolicy::DenyManaged)
        for (const auto& r : set.managed) append_block(out, r, false);
    out.push_back(mov_imm(0, set.policy == DevicePolicy::DenyManaged ? 1 : 0));
    out.push_back(exit_insn());
    return out;
}

Result<DeviceRuleSet> decode_device_filter(const std::vector<bpf_insn>& insns) {
    auto fail = [](std::size_t at, const char* what) {
        return Error{"device program instruction " + std::to_string(at) + ": " + what +
                     " (not a program xpart generated)"};
    };
    const auto pro = prologue();
    if (insns.size() < pro.size() + 2) return fail(insns.size(), "program too short");
    for (std::size_t i = 0; i < pro.size(); ++i)
        if (!is(insns[i], pro[i])) return fail(i, "unexpected prologue");
    DeviceRuleSet set;
    bool in_deny = false;
    std::size_t i = kPrologueLength;
    while (i < insns.size()) {
        const std::size_t start = i;
        DeviceRule rule{DeviceType::All, std::nullopt, std::nullopt, kAccessAll};
        int mode = 0;  // 0: no access test, 1: subset test (allow), 2: overlap test (deny)
        std::size_t next = 0;
        auto jump_target = [&](std::size_t at) { return at + 1 + static_cast<std::size_t>(insns[at].off); };
        auto check_target = [&](std::size_t at) {
            if (insns[at].off < 0) return false;
            if (next == 0) next = jump_target(at);
            return jump_target(at) == next;
        };
        const auto jne = BPF_JMP32 | BPF_JNE | BPF_K;
        if (insns[i].code == jne && insns[i].dst_reg == kType) {
            if (!check_target(i)) return fail(i, "inconsistent jump");
            if (insns[i].imm == BPF_DEVCG_DEV_CHAR) rule.type = DeviceType::Char;
            else if (insns[i].imm == BPF_DEVCG_DEV_BLOCK) rule.type = DeviceType::Block;
            else return fail(i, "unknown device type");
            ++i;
        }
        if (i + 2 < insns.size() && is(insns[i], mov_reg(kScratch, kAccess)) &&
            insns[i + 1].code == (BPF_ALU64 | BPF_AND | BPF_K) && insns[i + 1].dst_reg == kScratch &&
            BPF_CLASS(insns[i + 2].code) == BPF_JMP32 && insns[i + 2].dst_reg == kScratch &&
            insns[i + 2].imm == 0) {
            if (!check_target(i + 2)) return fail(i + 2, "inconsistent jump");
            const __s32 bits = insns[i + 1].imm;
            if (insns[i + 2].code == jne) {
                mode = 1;
                rule.access = from_devcg_access(~bits & kAllDevcgAccess);
            } else if (insns[i + 2].code == (BPF_JMP32 | BPF_JEQ | BPF_K)) {
                mode = 2;
                rule.access = from_devcg_access(bits);
            } else {
                return fail(i + 2, "unexpected access test");
            }
            i += 3;
        }
        if (i < insns.size() && insns[i].code == jne && insns[i].dst_reg == kMajor) {
            if (!check_target(i)) return fail(i, "inconsistent jump");
            rule.major = static_cast<unsigned>(insns[i].imm);
            ++i;
        }
        if (i < insns.size() && insns[i].code == jne && insns[i].dst_reg == kMinor) {
            if (!check_target(i)) return fail(i, "inconsistent jump");
            rule.minor = static_cast<unsigned>(insns[i].imm);
            ++i;
        }
        if (i + 1 >= insns.size() || insns[i].code != (BPF_ALU64 | BPF_MOV | BPF_K) ||
            insns[i].dst_reg != 0 || !is(insns[i + 1], exit_insn()))
            return fail(i, "expected 'r0 = verdict; exit'");
        const __s32 verdict = insns[i].imm;
        i += 2;
        if (next != 0 && next != i) return fail(start, "jump does not reach the next rule");
        if (i == insns.size()) {  // the default verdict ends the program
            // After deny blocks only the DenyManaged default (1) fits the layout.
            if (start == i - 2 && (verdict == 1 || (verdict == 0 && !in_deny))) {
                set.policy = verdict == 1 ? DevicePolicy::DenyManaged : DevicePolicy::DenyAll;
                return set;
            }
            return fail(start, "missing default verdict");
        }
        if (rule.type != DeviceType::Char && rule.type != DeviceType::Block && (rule.major || rule.minor))
            return fail(start, "rule of type 'a' with a major or minor");
        if (verdict == 1 && !in_deny && mode != 2) {
            set.allow.push_back(rule);
        } else if (verdict == 0 && mode == 2) {
            in_deny = true;
            set.managed.push_back(rule);
        } else {
            return fail(start, "rule block out of order");
        }
    }
    return fail(i, "missing default verdict");
}

}  // namespace xpart::cgroup
