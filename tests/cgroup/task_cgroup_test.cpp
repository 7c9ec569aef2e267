// What root learns from, and leaves in, a task cgroup another manager (Slurm) set up:
// allowed_in answers what the kernel would, and narrow_in_place keeps the owner's denials.
// EPERM = denied by the cgroup; ENXIO = allowed (no driver behind these majors here).
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>

#include "cgroup/allowed_in.hpp"
#include "cgroup/v1_device_controller.hpp"
#include "tests/cgroup/cgroup_fixture.hpp"
#include "tests/cgroup/rule_builders.hpp"

namespace xpart::cgroup::test {
namespace {

std::string procs_of(const DeviceCgroup& cg) {
    std::ifstream in(cg.path() + "/cgroup.procs");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class AllowedIn : public ::testing::TestWithParam<Hierarchy> {
protected:
    void SetUp() override {
        if (test_parent(GetParam()).empty()) FAIL() << "no " << to_string(GetParam()) << " device hierarchy here";
    }
    DeviceNodes nodes;
};

INSTANTIATE_TEST_SUITE_P(Hierarchies, AllowedIn, ::testing::Values(Hierarchy::V1, Hierarchy::V2),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// The helper's answers are the kernel's, as a process of the cgroup sees them, and it leaves.
TEST_P(AllowedIn, AnswersAsAProcessInsideAndLeavesNothing) {
    ScopedCgroup cg(GetParam());
    ASSERT_TRUE(cg->apply(rule_set(DevicePolicy::DenyManaged, {"c 508:3 rw"}, {"c 508:3 rwm", "c 508:4 rwm"})).ok());
    const std::vector<std::string> paths = {nodes.node('c', 508, 3), nodes.node('c', 508, 4),
                                            nodes.node('c', 240, 200), "/nonexistent/xpart-dev"};
    // A missing file says nothing of the rules: allowed (not EPERM).
    auto got = allowed_in(*cg, paths);
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_EQ(*got, (std::vector<bool>{true, false, true, true}));
    {
        ProbeChild child(*cg);
        EXPECT_TRUE(Allowed(child, paths[0], O_RDONLY));
        EXPECT_TRUE(Denied(child, paths[1], O_RDONLY));
        EXPECT_TRUE(Allowed(child, paths[2], O_RDONLY));
    }
    EXPECT_EQ(procs_of(*cg), "");
    // This process itself was never moved: it opens what the cgroup denies.
    int fd = ::open(paths[1].c_str(), O_RDONLY | O_NONBLOCK);
    EXPECT_EQ(fd < 0 ? errno : 0, ENXIO);
    if (fd >= 0) ::close(fd);
}

TEST_P(AllowedIn, CgroupGoneIsOneLineAndNoProbe) {
    // A cgroup whose directory was removed under it (the task's step ended meanwhile).
    ScopedCgroup cg(GetParam());
    const std::string dir = cg->path();
    ASSERT_EQ(::rmdir(dir.c_str()), 0);
    auto got = allowed_in(*cg, {nodes.node('c', 508, 3)});
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.error().message.find("probe in cgroup " + dir + ": cannot open " + dir + "/cgroup.procs: No such file"),
              std::string::npos)
        << got.error().message;
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);  // for ScopedCgroup's removal
}

// A frozen cgroup (v2's cgroup.freeze, which the owner of a delegated cgroup may write; or an
// ancestor's) must not hang slurmstepd: refused at once with one line, nothing moved inside.
TEST(AllowedInV2, FrozenCgroupIsRefusedAndLeavesNothing) {
    DeviceNodes nodes;
    for (const bool ancestor : {false, true}) {
        ScopedCgroup parent(Hierarchy::V2);
        std::optional<ScopedCgroup> child;
        if (ancestor) child.emplace(Hierarchy::V2, parent->path());
        const DeviceCgroup* cg = ancestor ? &**child : &*parent;
        std::ofstream(parent->path() + "/cgroup.freeze") << "1";
        // The kernel reports a cgroup frozen once every process in it stopped: none here, so at once.
        auto got = allowed_in(*cg, {nodes.node('c', 508, 3)});
        ASSERT_FALSE(got.ok()) << (ancestor ? "frozen ancestor" : "frozen");
        EXPECT_EQ(got.error().message, "probe in cgroup " + cg->path() + ": it is frozen (cgroup.freeze): not probed");
        std::ofstream(parent->path() + "/cgroup.freeze") << "0";
        EXPECT_EQ(procs_of(*cg), "");
    }
}

// Slurm's v1 task cgroup denies the partition its per-task choice gave another task; the
// rank's rules (which allow it) narrow in place without lifting that denial.
TEST(NarrowInPlaceV1, KeepsTheOwnersDenials) {
    DeviceNodes nodes;
    ScopedCgroup task(Hierarchy::V1);
    std::ofstream(task->path() + "/devices.deny") << "c 508:3 rwm";  // as Slurm writes it
    ProbeChild child(*task);
    ASSERT_TRUE(Denied(child, nodes.node('c', 508, 3), O_RDONLY));
    ASSERT_TRUE(Allowed(child, nodes.node('c', 508, 4), O_RDONLY));
    const auto rank = rule_set(DevicePolicy::DenyManaged, {"c 508:3 rw"}, {"c 508:3 rwm", "c 508:4 rwm", "c 508:5 rwm"});
    auto st = narrow_in_place(task->path(), rank);
    ASSERT_TRUE(st.ok()) << st.error().message;
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 3), O_RDONLY));  // Slurm's denial stays
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 4), O_RDONLY));  // ours
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 5), O_RDONLY));  // ours
    EXPECT_TRUE(Allowed(child, nodes.node('c', 240, 200), O_RDONLY));  // nobody's
}

}  // namespace
}  // namespace xpart::cgroup::test
