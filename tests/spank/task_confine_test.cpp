// task_cgroup: Slurm's task cgroup is found from the task's /proc/<pid>/cgroup, taken back
// from the job's user, and looked up again; a user who renamed it in between fails the task
// in one line instead of having another directory confined. Real cgroup directories on this
// machine's cgroup2 mount; the two reads of the task's cgroup file are the test's answers.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "cgroup/layout.hpp"
#include "spank_plugin/task_confine.hpp"

namespace xpart::spank {
namespace {

constexpr uid_t kJobUser = 65534;  // the owner Slurm's v1 plugin gives a task's dir and its parent

class TaskCgroupLookup : public ::testing::Test {
protected:
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "needs root (cgroups)";
        auto layout = cgroup::detect_cgroup_layout(RootFs("/"));
        ASSERT_TRUE(layout.ok()) << layout.error().message;
        if (!layout->has(cgroup::Hierarchy::V2)) GTEST_SKIP() << "no cgroup2 mount";
        mount_ = layout->v2_mount;
        rel_ = "/xpart-task-cgroup-test-" + std::to_string(getpid());
        for (const char* d : kDirs) {
            ASSERT_EQ(mkdir(path(d).c_str(), 0755), 0) << path(d) << ": " << std::strerror(errno);
            made_.push_back(path(d));
        }
        for (const char* d : {"/step_0/user", "/step_0/user/task_0"})
            ASSERT_EQ(chown(path(d).c_str(), kJobUser, kJobUser), 0) << path(d);
    }
    void TearDown() override {
        for (auto it = made_.rbegin(); it != made_.rend(); ++it) rmdir(it->c_str());
    }

    std::string path(const std::string& below) const { return mount_ + rel_ + below; }
    uid_t owner(const std::string& below) const {
        struct stat st {};
        return stat(path(below).c_str(), &st) == 0 ? st.st_uid : static_cast<uid_t>(-1);
    }
    // Only this cgroup2 mount in mountinfo; the task's cgroup file answers `answers` in turn.
    ProcRead reads(std::vector<std::string> answers) {
        const std::string mountinfo = "30 25 0:27 / " + mount_ + " rw,nosuid - cgroup2 cgroup2 rw\n";
        return [this, mountinfo, answers, n = std::size_t{0}](const std::string& file) mutable
               -> Result<std::string> {
            if (file == "/proc/self/mountinfo") return mountinfo;
            EXPECT_EQ(file, "/proc/4242/cgroup");
            ++lookups_;
            return "0::" + rel_ + answers[std::min(n++, answers.size() - 1)] + "\n";
        };
    }

    static constexpr const char* kDirs[] = {"", "/step_0", "/step_0/user", "/step_0/user/task_0",
                                            "/step_0/user/task_9"};
    std::string mount_, rel_;
    std::vector<std::string> made_;
    int lookups_ = 0;
};

TEST_F(TaskCgroupLookup, SlurmsTaskCgroupIsTakenBackFromTheUser) {
    auto where = task_cgroup(4242, reads({"/step_0/user/task_0"}));
    ASSERT_TRUE(where.ok()) << where.error().message;
    EXPECT_TRUE(where->slurms);
    EXPECT_EQ(where->hierarchy, cgroup::Hierarchy::V2);
    EXPECT_EQ(where->dir, path("/step_0/user/task_0"));
    EXPECT_EQ(lookups_, 2);  // looked up again after taking it back
    EXPECT_EQ(owner("/step_0/user"), 0u);  // its parent too: no sibling cgroup can be made there
    EXPECT_EQ(owner("/step_0/user/task_0"), 0u);
}

TEST_F(TaskCgroupLookup, RenamedBeforeItWasTakenBackFailsInOneLine) {
    auto where = task_cgroup(4242, reads({"/step_0/user/task_0", "/step_0/user/task_9"}));
    ASSERT_FALSE(where.ok());
    EXPECT_EQ(where.error().message, "its cgroup moved from " + path("/step_0/user/task_0") + " to " +
                                         path("/step_0/user/task_9") + " while it was confined");
}

TEST_F(TaskCgroupLookup, ACgroupNotSlurmsIsLeftAsItIs) {
    auto where = task_cgroup(4242, reads({"/step_0/user"}));
    ASSERT_TRUE(where.ok()) << where.error().message;
    EXPECT_FALSE(where->slurms);
    EXPECT_EQ(where->dir, path("/step_0/user"));
    EXPECT_EQ(lookups_, 1);
    EXPECT_EQ(owner("/step_0/user"), kJobUser);
}

}  // namespace
}  // namespace xpart::spank
