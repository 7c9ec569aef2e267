// The generated device program is checked by running it: a small interpreter for exactly the
// instructions the generator may emit (anything else fails the test), fed the context the
// kernel builds for each access.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/cgroup/rule_builders.hpp"
#include "cgroup/bpf_device_filter.hpp"

namespace xpart::cgroup {
namespace {

struct Access {
    char type;  // 'c' or 'b'
    unsigned major, minor;
    const char* access;  // subset of "rwm"
};

// Returns the program's verdict (0/1) or -1 when it uses an instruction outside the subset.
int run(const std::vector<bpf_insn>& prog, const Access& a) {
    std::uint32_t acc = 0;
    for (const char* p = a.access; *p; ++p)
        acc |= *p == 'r' ? BPF_DEVCG_ACC_READ : *p == 'w' ? BPF_DEVCG_ACC_WRITE : BPF_DEVCG_ACC_MKNOD;
    const bpf_cgroup_dev_ctx ctx{(acc << 16) | (a.type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK),
                                 a.major, a.minor};
    std::uint64_t r[11] = {};
    std::size_t pc = 0;
    for (int steps = 0; steps < 100000 && pc < prog.size(); ++steps) {
        const bpf_insn& i = prog[pc++];
        switch (i.code) {
            case BPF_LDX | BPF_MEM | BPF_W: {
                if (i.src_reg != 1 || i.off < 0 || i.off + 4 > static_cast<int>(sizeof ctx) || i.off % 4) return -1;
                std::uint32_t v;
                std::memcpy(&v, reinterpret_cast<const char*>(&ctx) + i.off, 4);
                r[i.dst_reg] = v;
                break;
            }
            case BPF_ALU64 | BPF_MOV | BPF_X: r[i.dst_reg] = r[i.src_reg]; break;
            case BPF_ALU64 | BPF_MOV | BPF_K: r[i.dst_reg] = static_cast<std::uint64_t>(static_cast<std::int64_t>(i.imm)); break;
            case BPF_ALU64 | BPF_AND | BPF_K: r[i.dst_reg] &= static_cast<std::uint64_t>(static_cast<std::int64_t>(i.imm)); break;
            case BPF_ALU64 | BPF_RSH | BPF_K: r[i.dst_reg] >>= i.imm; break;
            case BPF_JMP32 | BPF_JNE | BPF_K:
                if (static_cast<std::uint32_t>(r[i.dst_reg]) != static_cast<std::uint32_t>(i.imm)) pc += i.off;
                break;
            case BPF_JMP32 | BPF_JEQ | BPF_K:
                if (static_cast<std::uint32_t>(r[i.dst_reg]) == static_cast<std::uint32_t>(i.imm)) pc += i.off;
                break;
            case BPF_JMP | BPF_JA: pc += i.off; break;
            case BPF_JMP | BPF_EXIT: return static_cast<int>(r[0]);
            default: return -1;
        }
    }
    return -1;
}


struct FilterCase {
    const char* name;
    DeviceRuleSet set;
    std::vector<std::pair<Access, int>> probes;  // access -> expected verdict
};

class DeviceFilter : public ::testing::TestWithParam<FilterCase> {};

TEST_P(DeviceFilter, VerdictsMatchTheRules) {
    const auto& c = GetParam();
    const auto prog = generate_device_filter(c.set);
    for (const auto& [a, want] : c.probes)
        EXPECT_EQ(run(prog, a), want) << a.type << " " << a.major << ":" << a.minor << " " << a.access;
}

TEST_P(DeviceFilter, DecodesBackToTheRuleSet) {
    const auto& c = GetParam();
    auto back = decode_device_filter(generate_device_filter(c.set));
    ASSERT_TRUE(back.ok()) << back.error().message;
    DeviceRuleSet want = c.set;
    if (want.policy == DevicePolicy::DenyAll) want.managed.clear();
    EXPECT_EQ(format_rule_set(back->normalized()), format_rule_set(want.normalized()));
}

const FilterCase kCases[] = {
    {"empty_deny_all", test::rule_set(DevicePolicy::DenyAll, {}),
     {{{'c', 1, 3, "r"}, 0}, {{'b', 8, 0, "rw"}, 0}}},
    {"exact", test::rule_set(DevicePolicy::DenyAll, {"c 195:0 rw", "c 508:21 rw"}),
     {{{'c', 195, 0, "rw"}, 1}, {{'c', 195, 0, "r"}, 1}, {{'c', 195, 0, "m"}, 0}, {{'c', 195, 1, "r"}, 0},
      {{'b', 195, 0, "r"}, 0}, {{'c', 508, 21, "w"}, 1}, {{'c', 508, 22, "w"}, 0}, {{'c', 21, 508, "r"}, 0}}},
    {"wildcards", test::rule_set(DevicePolicy::DenyAll, {"c 195:* rw", "b *:* r", "c *:7 m"}),
     {{{'c', 195, 9, "rw"}, 1}, {{'c', 196, 9, "r"}, 0}, {{'b', 8, 1, "r"}, 1}, {{'b', 8, 1, "w"}, 0},
      {{'c', 3, 7, "m"}, 1}, {{'c', 3, 7, "r"}, 0}}},
    {"read_only", test::rule_set(DevicePolicy::DenyAll, {"c 226:128 r"}),
     {{{'c', 226, 128, "r"}, 1}, {{'c', 226, 128, "w"}, 0}, {{'c', 226, 128, "rw"}, 0}}},
    {"all", test::rule_set(DevicePolicy::DenyAll, {"a"}), {{{'c', 1, 1, "rwm"}, 1}, {{'b', 7, 7, "m"}, 1}}},
    {"large_numbers", test::rule_set(DevicePolicy::DenyAll, {"c 4294967295:2147483648 r"}),
     {{{'c', 4294967295u, 2147483648u, "r"}, 1}, {{'c', 4294967295u, 0, "r"}, 0}}},
    {"deny_managed", test::rule_set(DevicePolicy::DenyManaged, {"c 195:0 rw"}, {"c 195:0 rwm", "c 195:1 rwm", "c 508:* rw"}),
     {{{'c', 195, 0, "rw"}, 1}, {{'c', 195, 0, "m"}, 0}, {{'c', 195, 1, "r"}, 0}, {{'c', 508, 3, "w"}, 0},
      {{'c', 508, 3, "m"}, 1}, {{'c', 1, 3, "rw"}, 1}, {{'b', 195, 1, "r"}, 1}}},
};

INSTANTIATE_TEST_SUITE_P(Table, DeviceFilter, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(DeviceFilter, OneComparePerExactMinor) {
    DeviceRuleSet set;
    for (unsigned i = 0; i < 128; ++i) set.add_allow(DeviceRule{DeviceType::Char, 508u, i, kAccessRead | kAccessWrite});
    // prologue 7 + type 1 + access 3 + major 1 + 128 minors + goto 1 + verdict 2 + default 2
    EXPECT_EQ(generate_device_filter(set).size(), 145u);
}

TEST(DeviceFilter, SixtyFourPartitionsStayExact) {
    DeviceRuleSet set;
    for (unsigned i = 0; i < 64; ++i) set.add_allow(DeviceRule{DeviceType::Char, 508u, 3 + 2 * i, kAccessRead | kAccessWrite});
    const auto prog = generate_device_filter(set);
    for (unsigned minor = 0; minor < 200; ++minor) {
        const int want = minor >= 3 && minor < 131 && minor % 2 == 1;
        EXPECT_EQ(run(prog, {'c', 508, minor, "r"}), want) << minor;
    }
}

TEST(DecodeDeviceFilter, RejectsForeignOrDamagedPrograms) {
    auto prog = generate_device_filter(test::rule_set(DevicePolicy::DenyAll, {"c 195:0 rw"}));
    auto damaged = prog;
    damaged[0].off = 4;  // reads the major where the access type belongs
    EXPECT_FALSE(decode_device_filter(damaged).ok());
    auto bad_jump = prog;
    bad_jump[7].off += 1;  // the rule's jump no longer lands on the next block
    auto r = decode_device_filter(bad_jump);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("not a program xpart generated"), std::string::npos);
    auto truncated = prog;
    truncated.pop_back();
    EXPECT_FALSE(decode_device_filter(truncated).ok());
    // A deny block followed by a default deny is not a layout the generator emits.
    auto managed = generate_device_filter(test::rule_set(DevicePolicy::DenyManaged, {}, {"c 1:1 r"}));
    managed[managed.size() - 2].imm = 0;
    EXPECT_FALSE(decode_device_filter(managed).ok());
}


// --- deferred form: ours, then the inherited program for what ours lets through -----------
struct DeferCase {
    const char* name;
    DeviceRuleSet ours, theirs;
};

class DeferredFilter : public ::testing::TestWithParam<DeferCase> {};

const Access kProbes[] = {{'c', 195, 0, "rw"}, {'c', 195, 1, "r"}, {'c', 508, 3, "rw"}, {'c', 508, 4, "w"},
                          {'c', 508, 4, "m"},  {'c', 231, 1, "r"}, {'c', 1, 3, "rw"},   {'b', 8, 0, "r"}};

TEST_P(DeferredFilter, BothProgramsMustAllow) {
    const auto& c = GetParam();
    const auto theirs = generate_device_filter(c.theirs);
    const auto prog = generate_device_filter(c.ours, theirs);
    for (const auto& a : kProbes) {
        const int want = run(generate_device_filter(c.ours), a) && run(theirs, a);
        EXPECT_EQ(run(prog, a), want) << a.type << " " << a.major << ":" << a.minor << " " << a.access;
    }
}

TEST_P(DeferredFilter, SplitsBackIntoTheSetAndTheInheritedCode) {
    const auto& c = GetParam();
    const auto theirs = generate_device_filter(c.theirs);
    auto parts = split_device_filter(generate_device_filter(c.ours, theirs));
    ASSERT_TRUE(parts.ok()) << parts.error().message;
    DeviceRuleSet want = c.ours;
    if (want.policy == DevicePolicy::DenyAll) want.managed.clear();
    EXPECT_EQ(format_rule_set(parts->set.normalized()), format_rule_set(want.normalized()));
    const bool allows_nothing = c.ours.policy == DevicePolicy::DenyAll && c.ours.allow.empty();
    EXPECT_EQ(parts->inherited.size(), allows_nothing ? 0u : theirs.size());  // deny-all needs none
}

const DeferCase kDeferCases[] = {
    {"rank_in_slurm_task", test::rule_set(DevicePolicy::DenyManaged, {"c 508:3 rw"}, {"c 508:3 rwm", "c 508:4 rwm"}),
     test::rule_set(DevicePolicy::DenyManaged, {}, {"c 231:1 rwm", "c 195:1 rwm"})},
    {"deny_all_in_slurm_task", test::rule_set(DevicePolicy::DenyAll, {"c 195:* rw", "c 508:4 rw"}),
     test::rule_set(DevicePolicy::DenyManaged, {}, {"c 195:1 rwm"})},
    {"allows_nothing", test::rule_set(DevicePolicy::DenyAll, {}), test::rule_set(DevicePolicy::DenyAll, {"a"})},
    {"no_rules", test::rule_set(DevicePolicy::DenyManaged, {}), test::rule_set(DevicePolicy::DenyAll, {"c 1:3 rw"})},
    {"only_denials", test::rule_set(DevicePolicy::DenyManaged, {}, {"c 508:* rwm"}),
     test::rule_set(DevicePolicy::DenyAll, {"c 508:3 rw", "c 1:3 rw", "b 8:0 r"})},
};

INSTANTIATE_TEST_SUITE_P(Table, DeferredFilter, ::testing::ValuesIn(kDeferCases),
                         [](const auto& info) { return std::string(info.param.name); });

// The verifier drops a "goto +0" (an allow verdict right before the mark): still decodes.
TEST(DeferredFilter, DecodesWithTheVerifiersNopRemoved) {
    const auto ours = test::rule_set(DevicePolicy::DenyManaged, {"c 508:3 rw"});
    auto prog = generate_device_filter(ours, generate_device_filter(test::rule_set(DevicePolicy::DenyAll, {"a"})));
    auto nop = std::find_if(prog.begin(), prog.end(), [](const bpf_insn& i) {
        return i.code == (BPF_JMP | BPF_JA) && i.off == 0;
    });
    ASSERT_NE(nop, prog.end());
    const auto at = static_cast<std::size_t>(nop - prog.begin());
    for (std::size_t k = 0; k < at; ++k)  // jumps over it get one shorter
        if (BPF_CLASS(prog[k].code) != BPF_ALU64 && prog[k].code != (BPF_JMP | BPF_EXIT) &&
            BPF_CLASS(prog[k].code) != BPF_LDX && k + 1 + static_cast<std::size_t>(prog[k].off) > at)
            --prog[k].off;
    prog.erase(nop);
    auto parts = split_device_filter(prog);
    ASSERT_TRUE(parts.ok()) << parts.error().message;
    EXPECT_EQ(format_rule_set(parts->set.normalized()), format_rule_set(ours.normalized()));
    EXPECT_EQ(run(prog, {'c', 508, 3, "r"}), 1);
}

TEST(DeferredFilter, OnlySelfContainedCodeIsInherited) {
    EXPECT_TRUE(check_inheritable(generate_device_filter(test::rule_set(DevicePolicy::DenyAll, {"c 1:3 r"}))).ok());
    std::vector<bpf_insn> with_call = generate_device_filter(test::rule_set(DevicePolicy::DenyAll, {}));
    bpf_insn call{};
    call.code = BPF_JMP | BPF_CALL;
    call.imm = BPF_FUNC_tail_call;
    with_call.insert(with_call.begin() + 7, call);
    auto st = check_inheritable(with_call);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("instruction 7"), std::string::npos) << st.error().message;
    EXPECT_FALSE(check_inheritable({}).ok());
}

}  // namespace
}  // namespace xpart::cgroup
