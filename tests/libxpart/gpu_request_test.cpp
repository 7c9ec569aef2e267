// A job's GPU request as xpart geometry reads it: --gres values, and `scontrol show job -o`
// lines of Slurm 22.05 ("gres:gpu:...") and 24.11 ("gres/gpu:...").
#include <gtest/gtest.h>

#include "libxpart/slurm_text/gpu_request.hpp"

namespace xpart {
namespace {

// A parse's result against a case: the value, or exactly the error line when one is expected.
template <class T>
void expect_parsed(const Result<T>& r, const T& want, const char* error) {
    if (*error) {
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().message, error);
        return;
    }
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(*r, want);
}

struct JobCase {
    const char* line;
    GpuRequest want;
    const char* error;  // "" when it parses
};

class JobRequest : public ::testing::TestWithParam<JobCase> {};

TEST_P(JobRequest, ReadsWhatSlurmPrints) {
    expect_parsed(job_gpu_request(GetParam().line), GetParam().want, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Slurm, JobRequest,
    ::testing::Values(
        JobCase{"JobId=12 JobName=wrap UserId=u(1001) JobState=PENDING NumNodes=1 NumCPUs=1 "
                "NumTasks=1 TresPerNode=gres:gpu:3g.40gb:1 Command=(null)",
                {{"3g.40gb", 1}}, ""},
        JobCase{"JobId=13 NumNodes=1 NumTasks=1 TresPerNode=gres/gpu:3g.40gb:1,gres/gpu:1g.10gb:2",
                {{"3g.40gb", 1}, {"1g.10gb", 2}}, ""},
        JobCase{"JobId=14 NumNodes=1 TresPerNode=gres/nic:1,gres/gpu:1g.10gb", {{"1g.10gb", 1}}, ""},
        JobCase{"JobId=15 NumNodes=2 NumTasks=4 TresPerTask=gres/gpu:1g.10gb:1", {{"1g.10gb", 2}}, ""},
        JobCase{"JobId=16 NumNodes=1-2 NumTasks=3 TresPerTask=gres:gpu:1", {{"", 3}}, ""},
        JobCase{"JobId=17 NumNodes=1 TresPerJob=gres/gpu:2", {{"", 2}}, ""},
        JobCase{"JobId=18 NumNodes=1 TresPerNode=(null) TresPerJob=gres/gpu=2", {{"", 2}}, ""},
        JobCase{"JobId=19 NumNodes=1 TresPerNode=gres/nic:1", {},
                "job 19 asks for no GPU (no gpu in TresPerNode, TresPerTask or TresPerJob)"},
        JobCase{"JobId=20 TresPerNode=gres/gpu:3g.40gb:x", {},
                "job 20: TresPerNode=gres/gpu:3g.40gb:x: 'gres/gpu:3g.40gb:x': count 'x' is not 1..1024"}));

TEST(GresRequest, TypedUntypedAndBad) {
    EXPECT_EQ(*parse_gpu_gres("gpu:3g.40gb:2,gpu:1g.10gb"), (GpuRequest{{"3g.40gb", 2}, {"1g.10gb", 1}}));
    EXPECT_EQ(*parse_gpu_gres("gpu:4"), (GpuRequest{{"", 4}}));
    EXPECT_EQ(*parse_gpu_gres("gpu:1g.10gb:1,gpu:1g.10gb:2"), (GpuRequest{{"1g.10gb", 3}}));
    for (const char* bad : {"tpu:1", "gpu:a:b:c", "gpu:1g.10gb:0", ""}) EXPECT_FALSE(parse_gpu_gres(bad)) << bad;
}

struct NodeCase {
    const char* line;
    unsigned gpus;
    std::vector<std::string> want;
    const char* error;  // "" when it parses
};

class NodeGeometry : public ::testing::TestWithParam<NodeCase> {};

// What each GPU becomes for a reshape flow sibling to register with its configured Gres.
TEST_P(NodeGeometry, SharesTheGresAmongTheGpus) {
    expect_parsed(node_gpu_geometry(GetParam().line, GetParam().gpus), GetParam().want, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Slurm, NodeGeometry,
    ::testing::Values(
        NodeCase{"NodeName=gpu1-3g Arch=x86_64 CoresPerSocket=1 Gres=gpu:3g.40gb:2(S:0) NodeHostName=gpu1", 1,
                 {"3g.40gb", "3g.40gb"}, ""},
        NodeCase{"NodeName=g Gres=gpu:3g.40gb:2,gpu:1g.10gb:4(S:0-1) State=IDLE+CLOUD", 2,
                 {"1g.10gb", "1g.10gb", "3g.40gb"}, ""},
        NodeCase{"NodeName=g Gres=gpu:1g.10gb:7(S:0),nic:mlx5:1 State=IDLE", 1,
                 {"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}, ""},
        NodeCase{"NodeName=g Gres=gpu:1g.10gb:3 State=IDLE", 2, {},
                 "node g: Gres=gpu:1g.10gb:3: 3 x 1g.10gb does not divide among 2 GPUs"},
        NodeCase{"NodeName=g Gres=gpu:2 State=IDLE", 1, {},
                 "node g: Gres=gpu:2: an untyped gpu count names no geometry"},
        NodeCase{"NodeName=g Gres=(null) State=IDLE", 1, {}, "node g has no gpu in its Gres (none)"},
        NodeCase{"NodeName=g Gres=gpu:1g.10gb:1", 0, {}, "node g: this host has no MIG GPU to take Gres=gpu:1g.10gb:1"}));

}  // namespace
}  // namespace xpart
