// The NIC options of the SPANK plugin (--xpart-nic, plugstack nic=): spellings and what they
// imply for binding and confinement.
#include <gtest/gtest.h>

#include "spank_plugin/step_options.hpp"

namespace xpart::spank {
namespace {

TEST(NicOptions, SiteAndUserSpellings) {
    auto site = parse_site_args({"nic=closest"});
    ASSERT_TRUE(site.ok()) << site.error().message;
    EXPECT_EQ(site->nic, binding::NicBind::Closest);
    auto bad = parse_site_args({"nic=nearest"});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().message,
              "plugstack.conf: argument 'nic=nearest': expected closest, closest-override or none");
    StepOptions o = *site;
    ASSERT_TRUE(apply_user_option(o, "xpart-nic", "closest-override").ok());
    EXPECT_EQ(o.nic, binding::NicBind::ClosestOverride);
    ASSERT_TRUE(apply_user_option(o, "xpart-nic", "none").ok());
    EXPECT_EQ(o.nic, binding::NicBind::None);
    Status s = apply_user_option(o, "xpart-nic", "");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message, "--xpart-nic: expected closest, closest-override or none");
}

// A NIC is its task's GPU's: asking for one binds one partition per task (and so confines,
// as every per-task binding does unless --xpart-confine=no).
TEST(NicOptions, NicAloneBindsPerTask) {
    StepOptions o;
    o.nic = binding::NicBind::Closest;
    EXPECT_TRUE(o.active());
    EXPECT_EQ(o.effective_bind(), StepBind::Rank);
    EXPECT_TRUE(o.effective_confine());
    o.confine = false;
    EXPECT_FALSE(o.effective_confine());
    o.bind = StepBind::Closest;
    EXPECT_EQ(o.effective_bind(), StepBind::Closest);
}

}  // namespace
}  // namespace xpart::spank
