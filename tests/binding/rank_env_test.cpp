// Rank detection from each launcher's environment, and the precedence between them.
#include <gtest/gtest.h>

#include "binding/rank_env.hpp"

namespace xpart::binding {
namespace {

struct RankCase {
    const char* name;
    EnvMap env;
    const char* source;  // nullptr: an error containing `error`
    int rank, size, local_rank, local_size;
    const char* error;
};

class RankEnvTest : public ::testing::TestWithParam<RankCase> {};

TEST_P(RankEnvTest, Detects) {
    const RankCase& c = GetParam();
    auto r = detect_rank(c.env);
    if (!c.source) {
        ASSERT_FALSE(r.ok()) << "expected an error for " << c.name;
        EXPECT_NE(r.error().message.find(c.error), std::string::npos) << r.error().message;
        return;
    }
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->source, c.source);
    EXPECT_EQ(r->rank, c.rank);
    EXPECT_EQ(r->size, c.size);
    EXPECT_EQ(r->local_rank, c.local_rank);
    EXPECT_EQ(r->local_size, c.local_size);
}

const RankCase kCases[] = {
    {"lone", {}, "none", 0, 1, 0, 1, ""},
    {"slurm_step",
     {{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"},
      {"SLURM_NODEID", "1"}, {"SLURM_STEP_TASKS_PER_NODE", "4(x2)"}},
     "slurm", 5, 8, 1, 4, ""},
    {"slurm_uneven_nodes",
     {{"SLURM_PROCID", "8"}, {"SLURM_NTASKS", "9"}, {"SLURM_LOCALID", "0"},
      {"SLURM_NODEID", "2"}, {"SLURM_STEP_TASKS_PER_NODE", "4(x2),1"}},
     "slurm", 8, 9, 0, 1, ""},
    {"slurm_job_tasks_fallback",
     {{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "3"}, {"SLURM_LOCALID", "2"},
      {"SLURM_TASKS_PER_NODE", "3"}},
     "slurm", 2, 3, 2, 3, ""},
    {"ompi",
     {{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"},
      {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}},
     "ompi", 3, 4, 1, 2, ""},
    {"ompi_beats_stale_batch_slurm",
     {{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"},
      {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
      {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"SLURM_LOCALID", "0"},
      {"SLURM_TASKS_PER_NODE", "1"}},
     "ompi", 3, 4, 3, 4, ""},
    {"mpich_hydra",
     {{"PMI_RANK", "6"}, {"PMI_SIZE", "7"}, {"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "1"}},
     "mpich", 6, 7, 0, 1, ""},
    {"pmix_under_srun_takes_local_from_slurm",
     {{"PMIX_RANK", "7"}, {"PMIX_SIZE", "8"}, {"SLURM_PROCID", "7"}, {"SLURM_NTASKS", "8"},
      {"SLURM_LOCALID", "3"}, {"SLURM_NODEID", "1"}, {"SLURM_STEP_TASKS_PER_NODE", "4(x2)"}},
     "pmix", 7, 8, 3, 4, ""},
    {"pmix_without_local", {{"PMIX_RANK", "1"}, {"PMIX_SIZE", "2"}}, nullptr, 0, 0, 0, 0,
     "no local rank"},
    {"not_a_number", {{"SLURM_PROCID", "x1"}, {"SLURM_NTASKS", "2"}}, nullptr, 0, 0, 0, 0,
     "SLURM_PROCID='x1'"},
    {"negative", {{"OMPI_COMM_WORLD_RANK", "-1"}}, nullptr, 0, 0, 0, 0,
     "OMPI_COMM_WORLD_RANK='-1'"},
    {"rank_past_size",
     {{"PMI_RANK", "7"}, {"PMI_SIZE", "7"}, {"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "1"}},
     nullptr, 0, 0, 0, 0, "PMI_RANK=7 is not below PMI_SIZE=7"},
    {"local_past_local_size",
     {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "4"},
      {"OMPI_COMM_WORLD_LOCAL_RANK", "2"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}},
     nullptr, 0, 0, 0, 0, "local rank 2 is not below local size 2"},
    {"size_missing", {{"SLURM_PROCID", "0"}, {"SLURM_LOCALID", "0"}}, nullptr, 0, 0, 0, 0,
     "SLURM_NTASKS is not"},
    {"bad_tasks_per_node",
     {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "0"},
      {"SLURM_STEP_TASKS_PER_NODE", "2(x"}},
     nullptr, 0, 0, 0, 0, "SLURM_STEP_TASKS_PER_NODE='2(x'"},
};

INSTANTIATE_TEST_SUITE_P(Launchers, RankEnvTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

struct TasksCase {
    const char* list;
    int node;
    int expect;  // -1: error
};

class SlurmTasksTest : public ::testing::TestWithParam<TasksCase> {};

TEST_P(SlurmTasksTest, Parses) {
    auto r = slurm_tasks_on_node(GetParam().list, GetParam().node);
    if (GetParam().expect < 0) {
        EXPECT_FALSE(r.ok());
        return;
    }
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(*r, GetParam().expect);
}

INSTANTIATE_TEST_SUITE_P(Lists, SlurmTasksTest,
                         ::testing::Values(TasksCase{"4", 0, 4}, TasksCase{"4(x2)", 1, 4},
                                           TasksCase{"4(x2),3", 2, 3},
                                           TasksCase{"2,1(x3),5", 4, 5},
                                           TasksCase{"4(x2)", 2, -1}, TasksCase{"", 0, -1},
                                           TasksCase{"0", 0, -1}, TasksCase{"3(x0)", 0, -1},
                                           TasksCase{"a", 0, -1}));

}  // namespace
}  // namespace xpart::binding
