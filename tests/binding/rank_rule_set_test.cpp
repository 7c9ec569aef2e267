// --confine=rank rule sets: a rank may open its own partition's files; every other partition's
// files and the files the node withholds (the MIG monitor cap unless MigMonitorCapability=yes)
// are managed, hence denied.
#include <gtest/gtest.h>

#include <algorithm>

#include "binding/rank_cgroup.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart::binding {
namespace {

using cgroup::DeviceRule;

bool has_rule(const std::vector<DeviceRule>& rules, const std::string& text) {
    return std::any_of(rules.begin(), rules.end(),
                       [&](const DeviceRule& r) { return cgroup::format_device_rule(r) == text; });
}

struct MonitorCase {
    const char* name;
    bool granted;  // discovery ran with MigMonitorCapability=yes
};

class RankRuleSetMonitor : public ::testing::TestWithParam<MonitorCase> {};

TEST_P(RankRuleSetMonitor, MonitorCapAllowedOnlyWhenGranted) {
    Node node = fixtures::a100_80gb_mig_node();
    const DeviceFile monitor = fixtures::mig_monitor_cap_file();
    const std::string rule = "c " + std::to_string(monitor.major) + ":2 rw";
    if (GetParam().granted)
        for (Gpu& g : node.gpus)
            if (g.mode == PartitionMode::Mig) {
                for (Partition& p : g.partitions) p.device_files.push_back(monitor);
                g.withheld_files.clear();
            }
    const cgroup::DeviceRuleSet set = rank_rule_set(node, node.gpus[0].partitions[0]);
    EXPECT_EQ(set.policy, cgroup::DevicePolicy::DenyManaged);
    EXPECT_EQ(has_rule(set.allow, rule), GetParam().granted);
    EXPECT_TRUE(has_rule(set.managed, rule + "m")) << "granted or not, the cap is xpart's to deny";
    EXPECT_TRUE(has_rule(set.allow, "c 195:255 rw"));  // nvidiactl stays allowed
}

INSTANTIATE_TEST_SUITE_P(Setting, RankRuleSetMonitor,
                         ::testing::Values(MonitorCase{"default_withheld", false},
                                           MonitorCase{"granted", true}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace xpart::binding
