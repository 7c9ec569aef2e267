#include <gtest/gtest.h>

#include <algorithm>

#include "cgroup/slurm_job_cgroups.hpp"
#include "tests/cgroup/fake_cgroup_tree.hpp"

namespace xpart::cgroup {
namespace {

using testing::FakeCgroupTree;
using Outcome = SweepEntry::Outcome;

struct QueryCase {
    const char* job;
    const char* node;
    bool ok;
};
class Query : public ::testing::TestWithParam<QueryCase> {};
TEST_P(Query, RejectsWhatCouldLeaveTheNodesTree) {
    const auto& c = GetParam();
    auto s = check_query({c.job, c.node, ""});
    EXPECT_EQ(s.ok(), c.ok) << c.job << " " << c.node;
    if (!s.ok()) {
        const std::string value = std::string(c.job).find_first_not_of("0123456789") != std::string::npos ||
                                          std::string(c.job).empty() || std::string(c.job).size() > 10
                                      ? std::string("--job '") + c.job + "'"
                                      : std::string("--node '") + c.node + "'";
        EXPECT_EQ(s.error().message.rfind(value, 0), 0u) << s.error().message;
    }
}
INSTANTIATE_TEST_SUITE_P(Cases, Query,
                         ::testing::Values(QueryCase{"7", "n1", true}, QueryCase{"4294967294", "", true},
                                           QueryCase{"", "n1", false}, QueryCase{"7a", "n1", false},
                                           QueryCase{"-7", "n1", false}, QueryCase{"../7", "n1", false},
                                           QueryCase{"12345678901", "n1", false},
                                           QueryCase{"7", "a/b", false}, QueryCase{"7", "..", false}));

// A SLUID names a directory root creates and removes in: only print_sluid's exact form.
struct SluidCase {
    const char* sluid;
    bool ok;
};
class SluidQuery : public ::testing::TestWithParam<SluidCase> {};
TEST_P(SluidQuery, AcceptsOnlySlurmsPrintedForm) {
    const auto& c = GetParam();
    auto s = check_query({"7", "n1", c.sluid});
    EXPECT_EQ(s.ok(), c.ok) << c.sluid;
    if (!s.ok()) {
        EXPECT_EQ(s.error().message.rfind(std::string("--sluid '") + c.sluid + "'", 0), 0u) << s.error().message;
    }
}
INSTANTIATE_TEST_SUITE_P(Cases, SluidQuery,
                         ::testing::Values(SluidCase{"", true}, SluidCase{"s0123456789ABC", true},
                                           SluidCase{"sZZZZZZZZZZZZZ", true},
                                           SluidCase{"s0123456789AB", false},     // 12 digits
                                           SluidCase{"s0123456789ABCD", false},   // 14 digits
                                           SluidCase{"S0123456789ABC", false},
                                           SluidCase{"s0123456789abc", false},    // lower case
                                           SluidCase{"s0123456789ABI", false},    // I: not Crockford
                                           SluidCase{"s0123/../9ABCD", false},
                                           SluidCase{"job_7", false}));

TEST(SlurmNodeCgroups, LayoutOfSlurm2205) {
    EXPECT_EQ(slurm_node_cgroups(Hierarchy::V1, "/m", "n1").base, "/m/slurm_n1");
    EXPECT_EQ(slurm_node_cgroups(Hierarchy::V1, "/m", "n1").lock_dir, "/m");
    EXPECT_EQ(slurm_node_cgroups(Hierarchy::V1, "/m", "").base, "/m/slurm");
    EXPECT_EQ(slurm_node_cgroups(Hierarchy::V2, "/m", "n1").base, "/m/system.slice/n1_slurmstepd.scope");
    EXPECT_EQ(slurm_node_cgroups(Hierarchy::V2, "/m", "n1").lock_dir, "/m/system.slice/n1_slurmstepd.scope");
    EXPECT_EQ(slurm_node_cgroups(Hierarchy::V2, "/m", "").base, "/m/system.slice/slurmstepd.scope");
}

// Each case: a tree (paths below the fake mount, with pids), the job swept, and which
// directories must exist afterwards and which must be gone.
struct JobCase {
    const char* name;
    Hierarchy h;
    std::vector<std::pair<std::string, std::vector<int>>> tree;
    std::vector<int> live_xpart;  // pids that are running xpart processes
    std::string job;
    std::vector<std::string> gone;
    std::vector<std::string> kept;
    std::string sluid = "";
};
class JobSweep : public ::testing::TestWithParam<JobCase> {};
TEST_P(JobSweep, RemovesOnlyThatJobsEmptyCgroups) {
    const auto& c = GetParam();
    FakeCgroupTree t;
    for (const auto& [dir, pids] : c.tree) t.cgroup(dir, pids);
    for (int pid : c.live_xpart) t.process(pid, "xpart");
    auto entries = sweep_slurm_job(c.h, t.path(""), {c.job, "n1", c.sluid}, t.host());
    ASSERT_TRUE(entries.ok()) << entries.error().message;
    std::string report;
    for (const auto& e : *entries) report += format_entry(e) + "\n";
    for (const auto& e : *entries) EXPECT_NE(e.outcome, Outcome::Failed) << report;
    for (const auto& d : c.gone) EXPECT_FALSE(t.exists(d)) << d << " left\n" << report;
    for (const auto& d : c.kept) EXPECT_TRUE(t.exists(d)) << d << " removed\n" << report;
}
const std::string kV1 = "slurm_n1/uid_0/";
const std::string kV2 = "system.slice/n1_slurmstepd.scope/";
INSTANTIATE_TEST_SUITE_P(
    Cases, JobSweep,
    ::testing::Values(
        JobCase{"leftover_frees_whole_job",
                Hierarchy::V1,
                {{kV1 + "job_7/step_0/task_0/xpart_rank0_100", {}}, {kV1 + "job_7/step_0/task_1", {}}},
                {},
                "7",
                {kV1 + "job_7", "slurm_n1/uid_0"},
                {"slurm_n1"}},
        JobCase{"other_job_untouched_uid_kept",
                Hierarchy::V1,
                {{kV1 + "job_7/step_0/task_0/xpart_rank0_100", {}},
                 {kV1 + "job_8/step_0/task_0/xpart_rank0_200", {}}},
                {},
                "7",
                {kV1 + "job_7"},
                {kV1 + "job_8/step_0/task_0/xpart_rank0_200"}},
        JobCase{"busy_task_keeps_its_parents",
                Hierarchy::V1,
                {{kV1 + "job_7/step_0/task_0/xpart_rank0_100", {}},
                 {kV1 + "job_7/step_0/task_1", {4242}},
                 {kV1 + "job_7/step_batch", {}}},
                {},
                "7",
                {kV1 + "job_7/step_0/task_0", kV1 + "job_7/step_batch"},
                {kV1 + "job_7/step_0/task_1", kV1 + "job_7/step_0", kV1 + "job_7"}},
        JobCase{"busy_leftover_kept",
                Hierarchy::V1,
                {{kV1 + "job_7/step_0/task_0/xpart_rank0_100", {4242}}},
                {},
                "7",
                {},
                {kV1 + "job_7/step_0/task_0/xpart_rank0_100", kV1 + "job_7"}},
        JobCase{"live_launcher_keeps_leftover",
                Hierarchy::V1,
                {{kV1 + "job_7/step_0/task_0/xpart_rank0_100", {}}},
                {100},
                "7",
                {},
                {kV1 + "job_7/step_0/task_0/xpart_rank0_100"}},
        JobCase{"foreign_directory_kept",
                Hierarchy::V1,
                {{kV1 + "job_7/step_0/task_0/xpart_rank0_100", {}}, {kV1 + "job_7/step_0/site_tool", {}}},
                {},
                "7",
                {kV1 + "job_7/step_0/task_0"},
                {kV1 + "job_7/step_0/site_tool", kV1 + "job_7"}},
        JobCase{"other_node_untouched",
                Hierarchy::V1,
                {{"slurm_n2/uid_0/job_7/step_0/task_0/xpart_rank0_100", {}}, {"slurm/uid_0/job_7/step_0", {}}},
                {},
                "7",
                {},
                {"slurm_n2/uid_0/job_7/step_0/task_0/xpart_rank0_100", "slurm/uid_0/job_7/step_0"}},
        JobCase{"job_id_is_exact",
                Hierarchy::V1,
                {{kV1 + "job_70/step_0", {}}, {kV1 + "job_7/step_0", {}}},
                {},
                "7",
                {kV1 + "job_7"},
                {kV1 + "job_70/step_0"}},
        JobCase{"every_uid_searched",
                Hierarchy::V1,
                {{"slurm_n1/uid_1000/job_7/step_0/task_0/xpart_rank0_100", {}}, {kV1 + "job_9", {}}},
                {},
                "7",
                {"slurm_n1/uid_1000"},
                {kV1 + "job_9"}},
        JobCase{"v2_layout",
                Hierarchy::V2,
                {{kV2 + "job_7/step_0/user/task_0/xpart_rank0_100", {}},
                 {kV2 + "job_7/step_0/slurm", {}},
                 {kV2 + "job_8/step_0/user/task_0", {31}}},
                {},
                "7",
                {kV2 + "job_7"},
                {kV2 + "job_8/step_0/user/task_0"}},
        // Slurm 26.05: the job's v2 cgroup is named by its SLUID (job_<id> with CgroupJobIdPaths).
        JobCase{"v2_sluid_layout",
                Hierarchy::V2,
                {{kV2 + "s0ABCDEFGHJKMN/step_0/user/task_0/xpart_rank0_100", {}},
                 {kV2 + "s0ABCDEFGHJKMN/step_extern/slurm", {}},
                 {kV2 + "s0ABCDEFGHJKMP/step_0/user/task_0", {31}},
                 {kV2 + "s0ABCDEFGHJKMQ/step_0/user/task_0", {}}},
                {},
                "7",
                {kV2 + "s0ABCDEFGHJKMN"},
                {kV2 + "s0ABCDEFGHJKMP/step_0/user/task_0", kV2 + "s0ABCDEFGHJKMQ/step_0/user/task_0"},
                "s0ABCDEFGHJKMN"},
        JobCase{"v2_sluid_unknown_untouched",
                Hierarchy::V2,
                {{kV2 + "s0ABCDEFGHJKMN/step_0/user/task_0/xpart_rank0_100", {}}},
                {},
                "7",
                {},
                {kV2 + "s0ABCDEFGHJKMN/step_0/user/task_0/xpart_rank0_100"}},
        JobCase{"v2_job_id_paths_beside_sluid",
                Hierarchy::V2,
                {{kV2 + "job_7/step_0/user/task_0/xpart_rank0_100", {}}},
                {},
                "7",
                {kV2 + "job_7"},
                {},
                "s0ABCDEFGHJKMN"},
        JobCase{"v1_names_jobs_by_id",
                Hierarchy::V1,
                {{kV1 + "job_7/step_0/task_0/xpart_rank0_100", {}}, {kV1 + "s0ABCDEFGHJKMN/step_0", {}}},
                {},
                "7",
                {kV1 + "job_7"},
                {kV1 + "s0ABCDEFGHJKMN/step_0"},
                "s0ABCDEFGHJKMN"},
        JobCase{"no_tree_nothing_done", Hierarchy::V1, {{"other", {}}}, {}, "7", {}, {"other"}}),
    [](const ::testing::TestParamInfo<JobCase>& i) { return std::string(i.param.name); });

TEST(JobSweep, BadJobIdIsAnErrorAndRemovesNothing) {
    FakeCgroupTree t;
    t.cgroup(kV1 + "job_7/step_0");
    auto entries = sweep_slurm_job(Hierarchy::V1, t.path(""), {"7/..", "n1", ""}, t.host());
    ASSERT_FALSE(entries.ok());
    EXPECT_EQ(entries.error().message, "--job '7/..': expected a decimal Slurm job id");
    EXPECT_TRUE(t.removed.empty());
}

TEST(JobSweep, DryRunRemovesNothing) {
    FakeCgroupTree t;
    t.cgroup(kV1 + "job_7/step_0/task_0/xpart_rank0_100");
    auto entries = sweep_slurm_job(Hierarchy::V1, t.path(""), {"7", "n1", ""}, t.host(true));
    ASSERT_TRUE(entries.ok());
    ASSERT_FALSE(entries->empty());
    EXPECT_EQ(entries->front().outcome, Outcome::WouldRemove);
    EXPECT_TRUE(t.removed.empty());
    EXPECT_TRUE(t.exists(kV1 + "job_7/step_0/task_0/xpart_rank0_100"));
}

}  // namespace
}  // namespace xpart::cgroup
