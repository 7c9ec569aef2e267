// Where slurmstepd's step is on v1, from its own /proc/self/cgroup: the path every controller's
// step directory has below its mount (cgroup/slurm_step_reclaim.hpp takes them back).
#include <gtest/gtest.h>

#include "cgroup/slurm_step_reclaim.hpp"

namespace xpart::cgroup {
namespace {

struct StepPathCase {
    const char* name;
    const char* proc_cgroup;
    const char* want;  // "" : none
};

const StepPathCase kCases[] = {
    {"slurmstepd_of_a_task_step",
     "7:freezer:/slurm_n1/uid_1000/job_7/step_0\n5:devices:/slurm_n1/uid_1000/job_7/step_0\n1:cpu:/\n0::/\n",
     "/slurm_n1/uid_1000/job_7/step_0"},
    {"the_batch_step", "5:devices:/slurm_n1/uid_1000/job_12/step_batch\n", "/slurm_n1/uid_1000/job_12/step_batch"},
    {"the_extern_step_single_slurmd", "6:freezer:/slurm/uid_5/job_3/step_extern\n", "/slurm/uid_5/job_3/step_extern"},
    {"a_task_below_its_step", "5:devices:/slurm_n1/uid_1000/job_7/step_0/task_3\n",
     "/slurm_n1/uid_1000/job_7/step_0"},
    {"a_het_component_step", "5:devices:/slurm_n1/uid_1000/job_7/step_0+1\n", "/slurm_n1/uid_1000/job_7/step_0+1"},
    {"first_matching_line_wins", "9:name=systemd:/user.slice\n4:memory:/slurm_n1/uid_9/job_8/step_1\n",
     "/slurm_n1/uid_9/job_8/step_1"},
    {"two_levels_below_the_step_is_no_step_cgroup", "5:devices:/slurm_n1/uid_1000/job_7/step_0/task_3/x\n", ""},
    {"v2s_line_is_not_read", "0::/system.slice/n1_slurmstepd.scope/job_7/step_0/slurm\n", ""},
    {"slurmd_itself", "5:devices:/\n6:freezer:/system.slice/slurmd.service\n0::/\n", ""},
    {"a_job_level_that_is_not_a_number", "5:devices:/slurm_n1/uid_1/job_x/step_0\n", ""},
    {"step_alone", "5:devices:/step_0\n", ""},
    {"empty", "", ""},
};

class SlurmStepPath : public ::testing::TestWithParam<StepPathCase> {};

TEST_P(SlurmStepPath, TheStepOfTheFirstV1LineInOne) {
    const auto& c = GetParam();
    const auto got = slurm_step_path(c.proc_cgroup);
    EXPECT_EQ(got.value_or(""), c.want) << c.proc_cgroup;
}

INSTANTIATE_TEST_SUITE_P(Lines, SlurmStepPath, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace xpart::cgroup
