// A job's GPU request as xpart geometry reads it: --gres values, and `scontrol show job -o`
// lines of Slurm 22.05 ("gres:gpu:...") and 24.11 ("gres/gpu:...").
#include <gtest/gtest.h>

#include "libxpart/gpu_request.hpp"

namespace xpart {
namespace {

struct JobCase {
    const char* line;
    GpuRequest want;
    const char* error;  // "" when it parses
};

class JobRequest : public ::testing::TestWithParam<JobCase> {};

TEST_P(JobRequest, ReadsWhatSlurmPrints) {
    auto r = job_gpu_request(GetParam().line);
    if (*GetParam().error) {
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().message, GetParam().error);
        return;
    }
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(*r, GetParam().want);
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

}  // namespace
}  // namespace xpart
