// Rule sets written as text in tests.
#pragma once

#include <string>
#include <vector>

#include "cgroup/device_rule.hpp"

namespace xpart::cgroup::test {

// Aborts the test program on a malformed rule: the tables are code, not input.
inline DeviceRuleSet rule_set(DevicePolicy policy, const std::vector<std::string>& allow,
                              const std::vector<std::string>& managed = {}) {
    DeviceRuleSet set;
    set.policy = policy;
    for (const auto& a : allow) set.allow.push_back(parse_device_rule(a).value());
    for (const auto& m : managed) set.managed.push_back(parse_device_rule(m).value());
    return set;
}

}  // namespace xpart::cgroup::test
