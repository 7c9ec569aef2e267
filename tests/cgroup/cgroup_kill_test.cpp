// Which /proc/<pid>/cgroup lines make a process a member of root's cgroup: the check that
// stands between a pid read from cgroup.procs and the SIGKILL sent to it.
#include <gtest/gtest.h>

#include "cgroup/cgroup_kill.hpp"

namespace xpart::cgroup {
namespace {

struct MemberCase {
    const char* name;
    const char* proc_cgroup;
    Hierarchy hierarchy;
    bool member;
};

constexpr const char* kRel = "/xpart/job_7/job.gpu0-gi7";

const MemberCase kMemberCases[] = {
    {"v1_devices", "5:devices:/xpart/job_7/job.gpu0-gi7\n4:freezer:/\n0::/\n", Hierarchy::V1, true},
    {"v1_joint_controllers", "3:devices,memory:/xpart/job_7/job.gpu0-gi7\n", Hierarchy::V1, true},
    {"v1_elsewhere", "5:devices:/slurm_n1/uid_0/job_7/step_0\n", Hierarchy::V1, false},
    {"v1_a_prefix_only", "5:devices:/xpart/job_7/job.gpu0-gi70\n", Hierarchy::V1, false},
    {"v1_a_child", "5:devices:/xpart/job_7/job.gpu0-gi7/x\n", Hierarchy::V1, false},
    {"v1_only_other_controllers", "4:freezer:/xpart/job_7/job.gpu0-gi7\n", Hierarchy::V1, false},
    {"v1_named_hierarchy", "1:name=devices:/xpart/job_7/job.gpu0-gi7\n", Hierarchy::V1, false},
    {"v2", "0::/xpart/job_7/job.gpu0-gi7\n", Hierarchy::V2, true},
    {"v2_on_hybrid_with_v1_line_first", "5:devices:/\n0::/xpart/job_7/job.gpu0-gi7\n", Hierarchy::V2, true},
    {"v2_elsewhere", "0::/system.slice/slurmd.service\n", Hierarchy::V2, false},
    {"v2_asked_of_a_v1_line", "5:devices:/xpart/job_7/job.gpu0-gi7\n", Hierarchy::V2, false},
    {"a_path_with_colons", "0::/xpart/job_7/job.gpu0-gi7:x\n", Hierarchy::V2, false},
    {"empty", "", Hierarchy::V1, false},
    {"garbage", "not a cgroup file", Hierarchy::V2, false},
};

class MemberOfTest : public ::testing::TestWithParam<MemberCase> {};

TEST_P(MemberOfTest, OnlyTheExactCgroupOnTheRightHierarchy) {
    const auto& c = GetParam();
    EXPECT_EQ(member_of(c.proc_cgroup, c.hierarchy, kRel), c.member) << c.proc_cgroup;
}

INSTANTIATE_TEST_SUITE_P(Lines, MemberOfTest, ::testing::ValuesIn(kMemberCases),
                         [](const auto& info) { return std::string(info.param.name); });

// The same check on any hierarchy, by the token MountedHierarchy carries.
struct TokenCase {
    const char* name;
    const char* proc_cgroup;
    const char* controller;
    bool member;
};

const TokenCase kTokenCases[] = {
    {"freezer", "6:freezer:/xpart/job_7/job.gpu0-gi7\n5:devices:/\n", "freezer", true},
    {"freezer_asked_devices_line_elsewhere", "6:freezer:/\n5:devices:/xpart/job_7/job.gpu0-gi7\n", "freezer", false},
    {"comounted_cpu_cpuacct", "2:cpu,cpuacct:/xpart/job_7/job.gpu0-gi7\n", "cpuacct", true},
    {"a_controller_name_prefix_only", "2:cpuacct:/xpart/job_7/job.gpu0-gi7\n", "cpu", false},
    {"named_hierarchy", "9:name=systemd:/xpart/job_7/job.gpu0-gi7\n", "name=systemd", true},
    {"v2_token_is_never_a_v1_line", "5::/xpart/job_7/job.gpu0-gi7\n", "", false},
    {"v2", "0::/xpart/job_7/job.gpu0-gi7\n", "", true},
    {"v1_token_never_the_v2_line", "0::/xpart/job_7/job.gpu0-gi7\n", "devices", false},
};

class MemberOfTokenTest : public ::testing::TestWithParam<TokenCase> {};

TEST_P(MemberOfTokenTest, OnlyTheExactCgroupOfThatHierarchy) {
    const auto& c = GetParam();
    EXPECT_EQ(member_of(c.proc_cgroup, std::string_view(c.controller), kRel), c.member) << c.proc_cgroup;
}

INSTANTIATE_TEST_SUITE_P(Lines, MemberOfTokenTest, ::testing::ValuesIn(kTokenCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(KillSubtreeTest, RefusesACgroupOutsideItsMount) {
    auto r = kill_subtree({"/sys/fs/cgroup/freezer", "freezer"}, "/sys/fs/cgroup/freezerX/a", std::chrono::milliseconds(1));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("is not below /sys/fs/cgroup/freezer"), std::string::npos);
}

TEST(KillMembersTest, RefusesACgroupOutsideItsMount) {
    auto r = kill_members(Hierarchy::V1, "/sys/fs/cgroup/devices", "/sys/fs/cgroup/devicesX/a",
                          std::chrono::milliseconds(1));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("is not below /sys/fs/cgroup/devices"), std::string::npos);
}

}  // namespace
}  // namespace xpart::cgroup
