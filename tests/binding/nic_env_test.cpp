// The NIC variables a rank gets (--xpart-nic / plugstack nic= / xpart launch --nic): which
// variables are set or kept (their spellings: tests/spank/step_nic_options_test.cpp).
#include <gtest/gtest.h>


#include "binding/nic_env.hpp"
#include "tests/case_name.hpp"

namespace xpart::binding {
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

}  // namespace
}  // namespace xpart::binding
