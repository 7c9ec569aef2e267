// The NIC variables a rank gets (--xpart-nic / plugstack nic= / xpart launch --nic): parsing,
// what they imply, and which variables are set or kept.
#include <gtest/gtest.h>


#include "launcher/nic_env.hpp"
#include "launcher/step_options.hpp"
#include "tests/case_name.hpp"

namespace xpart::launch {
namespace {

Gpu gpu_with(std::vector<NicRoute> routes) {
    Gpu g;
    g.nics = std::move(routes);
    return g;
}

struct EnvCase {
    const char* name;
    NicBind mode;
    EnvMap before;
    std::vector<NicRoute> routes;
    EnvMap after;
};

class NicEnv : public ::testing::TestWithParam<EnvCase> {};

TEST_P(NicEnv, SetsOrKeeps) {
    const EnvCase& c = GetParam();
    EnvMap env = c.before;
    apply_nic_env(env, gpu_with(c.routes), c.mode);
    EXPECT_EQ(env, c.after) << c.name;
}

const std::vector<NicRoute> kTwo = {{"mlx5_3", 1, PciPath::Switch}, {"mlx5_2", 1, PciPath::Switch}};
const EnvCase kEnvCases[] = {
    {"closest sets all three", NicBind::Closest, {{"PATH", "/bin"}}, kTwo,
     {{"PATH", "/bin"}, {"NCCL_IB_HCA", "=mlx5_3:1"}, {"UCX_NET_DEVICES", "mlx5_3:1"},
      {"XPART_NIC", "mlx5_3:1"}}},
    {"port 2", NicBind::Closest, {}, {{"mlx5_0", 2, PciPath::RootComplex}},
     {{"NCCL_IB_HCA", "=mlx5_0:2"}, {"UCX_NET_DEVICES", "mlx5_0:2"}, {"XPART_NIC", "mlx5_0:2"}}},
    {"closest keeps what the user set", NicBind::Closest,
     {{"NCCL_IB_HCA", "mlx5_9"}, {"UCX_NET_DEVICES", "all"}}, kTwo,
     {{"NCCL_IB_HCA", "mlx5_9"}, {"UCX_NET_DEVICES", "all"}, {"XPART_NIC", "mlx5_3:1"}}},
    {"an empty value is a value set", NicBind::Closest, {{"UCX_NET_DEVICES", ""}}, kTwo,
     {{"NCCL_IB_HCA", "=mlx5_3:1"}, {"UCX_NET_DEVICES", ""}, {"XPART_NIC", "mlx5_3:1"}}},
    {"override replaces them", NicBind::ClosestOverride,
     {{"NCCL_IB_HCA", "mlx5_9"}, {"UCX_NET_DEVICES", "all"}}, kTwo,
     {{"NCCL_IB_HCA", "=mlx5_3:1"}, {"UCX_NET_DEVICES", "mlx5_3:1"}, {"XPART_NIC", "mlx5_3:1"}}},
    {"none touches nothing", NicBind::None, {{"NCCL_IB_HCA", "x"}}, kTwo, {{"NCCL_IB_HCA", "x"}}},
    {"a GPU without NIC: nothing", NicBind::ClosestOverride, {{"NCCL_IB_HCA", "x"}}, {},
     {{"NCCL_IB_HCA", "x"}}},
};

INSTANTIATE_TEST_SUITE_P(Cases, NicEnv, ::testing::ValuesIn(kEnvCases),
                         testing::SentenceCaseName());

TEST(NicOptions, SiteAndUserSpellings) {
    auto site = parse_site_args({"nic=closest"});
    ASSERT_TRUE(site.ok()) << site.error().message;
    EXPECT_EQ(site->nic, NicBind::Closest);
    auto bad = parse_site_args({"nic=nearest"});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().message,
              "plugstack.conf: argument 'nic=nearest': expected closest, closest-override or none");
    StepOptions o = *site;
    ASSERT_TRUE(apply_user_option(o, "xpart-nic", "closest-override").ok());
    EXPECT_EQ(o.nic, NicBind::ClosestOverride);
    ASSERT_TRUE(apply_user_option(o, "xpart-nic", "none").ok());
    EXPECT_EQ(o.nic, NicBind::None);
    Status s = apply_user_option(o, "xpart-nic", "");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message, "--xpart-nic: expected closest, closest-override or none");
}

// A NIC is its task's GPU's: asking for one binds one partition per task (and so confines,
// as every per-task binding does unless --xpart-confine=no).
TEST(NicOptions, NicAloneBindsPerTask) {
    StepOptions o;
    o.nic = NicBind::Closest;
    EXPECT_TRUE(o.active());
    EXPECT_EQ(o.effective_bind(), StepBind::Rank);
    EXPECT_TRUE(o.effective_confine());
    o.confine = false;
    EXPECT_FALSE(o.effective_confine());
    o.bind = StepBind::Closest;
    EXPECT_EQ(o.effective_bind(), StepBind::Closest);
}

}  // namespace
}  // namespace xpart::launch
