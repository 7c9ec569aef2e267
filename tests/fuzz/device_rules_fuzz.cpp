// Device cgroup text: a v1 devices.list, the rule-set state files, one rule, a rank cgroup's
// directory name (the leftover sweep reads them from the cgroup tree).
#include "cgroup/device_rule.hpp"
#include "cgroup/rank_leftover.hpp"
#include "cgroup/v1_device_controller.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(device_rules) {
    namespace cg = xpart::cgroup;
    const std::string text = xpart::fuzz::text_of(data, size);
    (void)cg::parse_devices_list(text, "devices.list");
    (void)cg::parse_rank_cgroup_name(text);
    if (auto rule = cg::parse_device_rule(text)) {
        auto again = cg::parse_device_rule(cg::format_device_rule(*rule));
        XPART_FUZZ_CHECK(again && *again == *rule);
    }
    if (auto set = cg::parse_rule_set(text, "rules")) {
        auto again = cg::parse_rule_set(cg::format_rule_set(*set), "rules");
        XPART_FUZZ_CHECK(again && *again == *set);
    }
}
