#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>
#include <algorithm>
#include <string>

#include "cgroup/device_rule.hpp"

namespace xpart::cgroup {
namespace {

struct RuleCase {
    const char* text;
    const char* formatted;  // nullptr: parse error expected
    const char* error;      // substring of the error
};

class DeviceRuleParse : public ::testing::TestWithParam<RuleCase> {};

TEST_P(DeviceRuleParse, ParsesOrNamesTheBadField) {
    const RuleCase& c = GetParam();
    auto r = parse_device_rule(c.text);
    if (c.formatted) {
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_EQ(format_device_rule(*r), c.formatted);
        // The formatted form parses back to the same rule.
        auto again = parse_device_rule(format_device_rule(*r));
        ASSERT_TRUE(again.ok());
        EXPECT_EQ(*again, *r);
    } else {
        ASSERT_FALSE(r.ok()) << c.text << " parsed as " << format_device_rule(*r);
        EXPECT_NE(r.error().message.find(c.error), std::string::npos) << r.error().message;
        EXPECT_NE(r.error().message.find(std::string("'") + c.text + "'"), std::string::npos)
            << r.error().message;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Table, DeviceRuleParse,
    ::testing::Values(
        RuleCase{"c 195:0 rw", "c 195:0 rw", nullptr}, RuleCase{"c 195:* rw", "c 195:* rw", nullptr},
        RuleCase{"b 8:0 r", "b 8:0 r", nullptr}, RuleCase{"  c   1:3   mwr ", "c 1:3 rwm", nullptr},
        RuleCase{"a", "a *:* rwm", nullptr}, RuleCase{"a *:* rwm", "a *:* rwm", nullptr},
        RuleCase{"c *:* m", "c *:* m", nullptr}, RuleCase{"c 4294967295:0 r", "c 4294967295:0 r", nullptr},
        RuleCase{"", nullptr, "empty"}, RuleCase{"x 1:3 rw", nullptr, "bad type 'x'"},
        RuleCase{"c 1:3", nullptr, "2 fields"}, RuleCase{"c 1-3 rw", nullptr, "bad device '1-3'"},
        RuleCase{"c x:3 rw", nullptr, "bad major 'x'"}, RuleCase{"c 1: rw", nullptr, "bad minor ''"},
        RuleCase{"c 4294967296:0 r", nullptr, "bad major '4294967296'"},
        RuleCase{"c 1:3 rx", nullptr, "bad access 'rx'"}, RuleCase{"c 1:3 rr", nullptr, "bad access 'rr'"},
        RuleCase{"a 1:3 rw", nullptr, "type 'a' only"}, RuleCase{"c 1:3 rw extra", nullptr, "4 fields"}));

TEST(DeviceRuleSet, AddMergesAccessOfTheSameDevice) {
    DeviceRuleSet set;
    set.add_allow(*parse_device_rule("c 195:0 r"));
    set.add_allow(*parse_device_rule("c 195:0 w"));
    set.add_allow(*parse_device_rule("c 195:* r"));
    ASSERT_EQ(set.allow.size(), 2u);
    EXPECT_EQ(format_device_rule(set.allow[0]), "c 195:0 rw");
}

TEST(DeviceRuleSet, FormatParseRoundTrip) {
    DeviceRuleSet set;
    set.policy = DevicePolicy::DenyManaged;
    set.allow = {*parse_device_rule("c 195:0 rw"), *parse_device_rule("c 226:* r")};
    set.managed = {*parse_device_rule("c 195:1 rwm")};
    const std::string text = format_rule_set(set);
    EXPECT_EQ(text, "policy deny-managed\nallow c 195:0 rw\nallow c 226:* r\ndeny c 195:1 rwm\n");
    auto back = parse_rule_set(text, "state");
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(*back, set);
}

TEST(DeviceRuleSet, ParseErrorsNameFileAndLine) {
    auto r = parse_rule_set("policy deny-all\nallow c 1:3 rw\npermit c 1:5 rw\n", "/run/x.rules");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "/run/x.rules:3: expected 'allow <rule>' or 'deny <rule>', got 'permit c 1:5 rw'");
    auto bad = parse_rule_set("policy deny-all\nallow c 1:z rw\n", "f");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().message.rfind("f:2: device rule 'c 1:z rw': bad minor 'z'", 0), 0u) << bad.error().message;
    EXPECT_FALSE(parse_rule_set("allow c 1:3 rw\n", "f").ok());
    // Not written under deny-all, so not read either (fuzzing: the round trip dropped it).
    auto deny = parse_rule_set("policy deny-all\ndeny b 95:* rw\n", "f");
    ASSERT_FALSE(deny.ok());
    EXPECT_EQ(deny.error().message, "f:2: 'deny <rule>' needs 'policy deny-managed', got 'deny b 95:* rw'");
}

TEST(DeviceRuleSet, NormalizedSortsAndDropsManagedUnderDenyAll) {
    DeviceRuleSet set;
    set.allow = {*parse_device_rule("c 226:128 rw"), *parse_device_rule("c 195:* rw"),
                 *parse_device_rule("c 195:3 rw"), *parse_device_rule("b 8:0 r")};
    set.managed = {*parse_device_rule("c 1:1 r")};
    auto n = set.normalized();
    ASSERT_EQ(n.allow.size(), 4u);
    EXPECT_EQ(format_device_rule(n.allow[0]), "b 8:0 r");
    EXPECT_EQ(format_device_rule(n.allow[1]), "c 195:3 rw");
    EXPECT_EQ(format_device_rule(n.allow[2]), "c 195:* rw");
    EXPECT_EQ(format_device_rule(n.allow[3]), "c 226:128 rw");
    EXPECT_TRUE(n.managed.empty());
}

Node two_gpu_node() {
    Node node;
    Gpu mig;
    mig.uuid = "GPU-aaaa";
    const DeviceFile ctl{"/dev/nvidiactl", 195, 255, true};
    for (int i = 0; i < 2; ++i) {
        Partition p;
        p.uuid = "MIG-" + std::to_string(i);
        p.device_files = {{"/dev/nvidia0", 195, 0, false},
                          {"/dev/nvidia-caps/nvidia-cap" + std::to_string(21 + i), 508,
                           static_cast<unsigned>(21 + i), false},
                          ctl};
        mig.partitions.push_back(p);
    }
    Gpu amd;
    amd.vendor = Vendor::Amd;
    amd.uuid = "GPU-bbbb";
    for (int i = 0; i < 3; ++i) {
        Partition p;
        p.uuid = "GPU-bbbb";
        p.index = i;
        p.device_files = {{"/dev/dri/renderD" + std::to_string(128 + i), 226,
                           static_cast<unsigned>(128 + i), false},
                          {"/dev/kfd", 510, 0, true}};
        amd.partitions.push_back(p);
    }
    node.gpus = {mig, amd};
    return node;
}

TEST(SelectPartitions, ByMigUuidAndByAmdIndex) {
    Node node = two_gpu_node();
    auto sel = select_partitions(node, {"MIG-1", "GPU-bbbb:2", "MIG-1"});
    ASSERT_TRUE(sel.ok()) << sel.error().message;
    ASSERT_EQ(sel->size(), 2u);
    auto rules = partition_rules(*sel);
    std::vector<std::string> text;
    for (auto& r : rules) text.push_back(format_device_rule(r));
    EXPECT_EQ(text, (std::vector<std::string>{"c 195:0 rw", "c 508:22 rw", "c 195:255 rw", "c 226:130 rw",
                                              "c 510:0 rw"}));
}

TEST(SelectPartitions, ErrorsNameTheSelector) {
    Node node = two_gpu_node();
    struct Case {
        const char* sel;
        const char* error;
    } cases[] = {{"MIG-9", "partition 'MIG-9': no such partition on this node"},
                 {"GPU-bbbb", "partition 'GPU-bbbb': 3 partitions share this UUID; select one as <uuid>:<index>"},
                 {"GPU-bbbb:x", "partition 'GPU-bbbb:x': bad index after ':'"},
                 {"GPU-bbbb:7", "partition 'GPU-bbbb:7': no such partition on this node"}};
    for (const auto& c : cases) {
        auto sel = select_partitions(node, {c.sel});
        ASSERT_FALSE(sel.ok()) << c.sel;
        EXPECT_EQ(sel.error().message, c.error);
    }
}

TEST(NodeManagedRules, EveryPartitionFileWithAllAccess) {
    auto rules = node_managed_rules(two_gpu_node());
    EXPECT_EQ(rules.size(), 8u);  // 195:0, 508:21, 508:22, 195:255, 226:128..130, 510:0
    for (const auto& r : rules) EXPECT_EQ(r.access, kAccessAll);
}

// A withheld file (the MIG monitor cap when no partition is given it) is managed, so a
// deny-managed set denies it; two GPUs withholding the same cap give one rule.
TEST(NodeManagedRules, WithheldFilesAreManagedOnce) {
    Node node = two_gpu_node();
    const DeviceFile monitor{"/dev/nvidia-caps/nvidia-cap2", 508, 2, true};
    node.gpus[0].withheld_files = {monitor};
    node.gpus.push_back(node.gpus[0]);
    auto rules = node_managed_rules(node);
    EXPECT_EQ(rules.size(), 9u);  // the 8 above and 508:2
    EXPECT_EQ(std::count_if(rules.begin(), rules.end(),
                            [](const DeviceRule& r) { return format_device_rule(r) == "c 508:2 rwm"; }),
              1);
}

TEST(BaselineRules, AddsNvidiaControlNodesOnlyWhenPresent) {
    char tmpl[] = "/tmp/xpart-baseline-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string root = tmpl;
    auto without = baseline_rules(RootFs(root));
    ASSERT_TRUE(without.ok()) << without.error().message;
    EXPECT_EQ(without->size(), 15u);  // 7 basics + pts majors 136..143
    ASSERT_EQ(::mkdir((root + "/dev").c_str(), 0755), 0);
    // A symlink to /dev/null stands in for a character device node without needing mknod.
    ASSERT_EQ(::symlink("/dev/null", (root + "/dev/nvidiactl").c_str()), 0);
    auto with = baseline_rules(RootFs(root));
    ASSERT_TRUE(with.ok()) << with.error().message;
    ASSERT_EQ(with->size(), 16u);
    EXPECT_EQ(format_device_rule(with->back()), "c 1:3 rw");
    // A regular file where a device should be is an error naming it.
    ASSERT_EQ(::close(::creat((root + "/dev/nvidia-uvm").c_str(), 0644)), 0);
    auto bad = baseline_rules(RootFs(root));
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().message, root + "/dev/nvidia-uvm: not a character device");
    for (const char* f : {"/dev/nvidia-uvm", "/dev/nvidiactl"}) ::unlink((root + f).c_str());
    ::rmdir((root + "/dev").c_str());
    ::rmdir(root.c_str());
}

}  // namespace
}  // namespace xpart::cgroup
