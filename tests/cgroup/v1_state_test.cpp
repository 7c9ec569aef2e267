#include <gtest/gtest.h>

#include "tests/cgroup/rule_builders.hpp"
#include "cgroup/v1_device_controller.hpp"

namespace xpart::cgroup {
namespace {

std::string text(const V1DeviceState& s) {
    std::string out = s.default_allow ? "allow-default" : "deny-default";
    for (const auto& r : s.exceptions) out += "; " + format_device_rule(r);
    return out;
}


TEST(V1StateFor, MapsPoliciesToKernelDefaultsAndExceptions) {
    EXPECT_EQ(text(v1_state_for(test::rule_set(DevicePolicy::DenyAll, {"c 195:0 r", "c 1:3 rwm", "c 195:0 w"}))),
              "deny-default; c 1:3 rwm; c 195:0 rw");
    EXPECT_EQ(text(v1_state_for(test::rule_set(DevicePolicy::DenyAll, {"c 1:3 r", "a"}))), "allow-default");
    EXPECT_EQ(text(v1_state_for(test::rule_set(DevicePolicy::DenyManaged, {"c 195:0 rw", "c 508:* r"},
                                      {"c 195:0 rwm", "c 195:1 rwm", "c 508:21 rw"}))),
              "allow-default; c 195:0 m; c 195:1 rwm; c 508:21 w");
}

TEST(ParseDevicesList, DenyDefaultListsExceptionsAllowDefaultHidesThem) {
    auto deny = parse_devices_list("c 1:3 rwm\nc 195:* rw\n", "devices.list");
    ASSERT_TRUE(deny.ok());
    EXPECT_EQ(text(*deny), "deny-default; c 1:3 rwm; c 195:* rw");
    auto allow = parse_devices_list("a *:* rwm\n", "devices.list");
    ASSERT_TRUE(allow.ok());
    EXPECT_EQ(text(*allow), "allow-default");
    auto empty = parse_devices_list("", "devices.list");
    ASSERT_TRUE(empty.ok());
    EXPECT_EQ(text(*empty), "deny-default");
    auto bad = parse_devices_list("c 1:3 rwm\nq\n", "/cg/devices.list");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().message, "/cg/devices.list:2: device rule 'q': bad type 'q' (expected c, b or a)");
}

}  // namespace
}  // namespace xpart::cgroup
