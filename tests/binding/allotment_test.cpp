// The partitions a job may use, read from the environment and resolved against the node.
#include <gtest/gtest.h>

#include <set>

#include "binding/allotment.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart::binding {
namespace {

using fixtures::dgx_a100;
using fixtures::nvidia_gpu_uuid;
using fixtures::mig_uuid;

struct Expected {
    std::size_t gpu, partition;
    std::string token;
};

struct AllotCase {
    const char* name;
    Node (*node)();
    EnvMap env;
    std::set<std::string> unopenable;  // render nodes a cgroup denies
    std::string variable;              // empty: expect an error containing `error`
    std::vector<Expected> expect;
    const char* error;
};

Node dgx_mig() { return dgx_a100(8, 2); }
Node dgx_mixed() { return dgx_a100(4, 2); }
Node mi300x_cpx() { return fixtures::mi300x_cpx_node(); }
// ROCR matches a UUID token by prefix.
const std::string kMi300xUuid = fixtures::amd_gpu_uuid(0);
const std::string kMi300xUuidPrefix = kMi300xUuid.substr(0, 8);

class AllotmentTest : public ::testing::TestWithParam<AllotCase> {};

TEST_P(AllotmentTest, Resolves) {
    const AllotCase& c = GetParam();
    Node node = c.node();
    auto openable = [&](const DeviceFile& f) { return c.unopenable.count(f.path) == 0; };
    auto a = resolve_allotment(node, c.env, openable);
    if (c.variable.empty()) {
        ASSERT_FALSE(a.ok()) << c.name;
        EXPECT_NE(a.error().message.find(c.error), std::string::npos) << a.error().message;
        return;
    }
    ASSERT_TRUE(a.ok()) << a.error().message;
    EXPECT_EQ(a->variable, c.variable);
    ASSERT_EQ(a->partitions.size(), c.expect.size());
    for (std::size_t i = 0; i < c.expect.size(); ++i) {
        EXPECT_EQ(a->partitions[i].gpu, c.expect[i].gpu) << i;
        EXPECT_EQ(a->partitions[i].partition, c.expect[i].partition) << i;
        EXPECT_EQ(a->partitions[i].token, c.expect[i].token) << i;
    }
}

const AllotCase kCases[] = {
    {"mig_uuids_in_given_order", dgx_mig,
     {{"CUDA_VISIBLE_DEVICES", mig_uuid(3, 8) + "," + mig_uuid(0, 7)}}, {}, "CUDA_VISIBLE_DEVICES",
     {{3, 1, mig_uuid(3, 8)}, {0, 0, mig_uuid(0, 7)}}, ""},
    {"legacy_mig_form", dgx_mig,
     {{"CUDA_VISIBLE_DEVICES", "MIG-" + nvidia_gpu_uuid(5) + "/8/0"}}, {}, "CUDA_VISIBLE_DEVICES",
     {{5, 1, "MIG-" + nvidia_gpu_uuid(5) + "/8/0"}}, ""},
    {"whole_gpu_by_uuid_and_index", dgx_mixed,
     {{"CUDA_VISIBLE_DEVICES", nvidia_gpu_uuid(6) + ",7"}}, {}, "CUDA_VISIBLE_DEVICES",
     {{6, 0, nvidia_gpu_uuid(6)}, {7, 0, "7"}}, ""},
    {"index_of_mig_gpu_is_refused", dgx_mixed, {{"CUDA_VISIBLE_DEVICES", "1"}}, {}, "", {},
     "token '1' is not the index of a whole (non-MIG) GPU"},
    {"unknown_uuid", dgx_mig, {{"CUDA_VISIBLE_DEVICES", "MIG-deadbeef"}}, {}, "", {},
     "CUDA_VISIBLE_DEVICES='MIG-deadbeef': token 'MIG-deadbeef' matches no partition"},
    {"cuda_wins_over_slurm_gpus", dgx_mig,
     {{"CUDA_VISIBLE_DEVICES", mig_uuid(1, 7)}, {"SLURM_STEP_GPUS", "0,1,2"}}, {},
     "CUDA_VISIBLE_DEVICES", {{1, 0, mig_uuid(1, 7)}}, ""},
    {"slurm_step_gpus_all_partitions", dgx_mig, {{"SLURM_STEP_GPUS", "2,6"}}, {},
     "SLURM_STEP_GPUS", {{2, 0, "2"}, {2, 1, "2"}, {6, 0, "6"}, {6, 1, "6"}}, ""},
    {"slurm_job_gpus_for_prolog", dgx_mig, {{"SLURM_JOB_GPUS", "4"}}, {}, "SLURM_JOB_GPUS",
     {{4, 0, "4"}, {4, 1, "4"}}, ""},
    {"slurm_gpu_missing", dgx_mig, {{"SLURM_STEP_GPUS", "8"}}, {}, "", {},
     "token '8' is not a GPU index on this node"},
    {"nothing_set", dgx_mig, {}, {}, "", {}, "no partitions allotted"},
    {"only_commas", dgx_mig, {{"CUDA_VISIBLE_DEVICES", ","}}, {}, "", {}, "names no partition"},
    {"rocr_indices", mi300x_cpx, {{"ROCR_VISIBLE_DEVICES", "6,1"}}, {}, "ROCR_VISIBLE_DEVICES",
     {{0, 6, "6"}, {0, 1, "1"}}, ""},
    // Under a cgroup that denies renderD128..131, ROCR renumbers the rest from 0.
    {"rocr_indices_renumber_under_cgroup", mi300x_cpx, {{"ROCR_VISIBLE_DEVICES", "0,3"}},
     {"/dev/dri/renderD128", "/dev/dri/renderD129", "/dev/dri/renderD130",
      "/dev/dri/renderD131"},
     "ROCR_VISIBLE_DEVICES", {{0, 4, "0"}, {0, 7, "3"}}, ""},
    {"rocr_index_out_of_range", mi300x_cpx, {{"ROCR_VISIBLE_DEVICES", "8"}}, {}, "", {},
     "token '8' is out of range (8 openable partitions)"},
    {"rocr_shared_uuid_is_ambiguous", mi300x_cpx,
     {{"ROCR_VISIBLE_DEVICES", kMi300xUuid}}, {}, "", {}, "is ambiguous (8 partitions"},
    {"rocr_uuid_unique_after_cgroup", mi300x_cpx, {{"ROCR_VISIBLE_DEVICES", kMi300xUuidPrefix}},
     {"/dev/dri/renderD128", "/dev/dri/renderD129", "/dev/dri/renderD130",
      "/dev/dri/renderD131", "/dev/dri/renderD132", "/dev/dri/renderD133",
      "/dev/dri/renderD134"},
     "ROCR_VISIBLE_DEVICES", {{0, 7, kMi300xUuidPrefix}}, ""},
    {"rocr_duplicate", mi300x_cpx, {{"ROCR_VISIBLE_DEVICES", "2,2"}}, {}, "", {},
     "token '2' repeats a partition"},
    {"rocr_junk", mi300x_cpx, {{"ROCR_VISIBLE_DEVICES", "x"}}, {}, "", {},
     "token 'x' is neither an index nor a GPU- UUID"},
    {"slurm_gpus_on_amd_give_rocr_indices", mi300x_cpx, {{"SLURM_STEP_GPUS", "0"}},
     {"/dev/dri/renderD128"}, "", {}, "partition 0 this process cannot open"},
};

INSTANTIATE_TEST_SUITE_P(Environments, AllotmentTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(AllotmentTest, SlurmGpusOnAmdTokensAreRocrIndices) {
    Node node = mi300x_cpx();
    auto a = resolve_allotment(node, {{"SLURM_STEP_GPUS", "0"}}, [](const DeviceFile&) { return true; });
    ASSERT_TRUE(a.ok()) << a.error().message;
    ASSERT_EQ(a->partitions.size(), 8u);
    for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(a->partitions[i].token, std::to_string(i));
}

}  // namespace
}  // namespace xpart::binding
