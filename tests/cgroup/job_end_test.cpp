// Nothing of a job outlives it, on real cgroups (root): a step's v1 directories are taken
// back with what the job's user made in them ended (reclaim_slurm_step), and at the job's end
// every process below the job's directories, wherever the user moved it, is killed on every
// hierarchy (end_slurm_job); one that cannot be killed is reported, not forgotten.
// The trees are laid out as Slurm 22.05 lays them out, with the ownership it gives: the step
// and task directories chowned to the job's user, the files inside them root's; a cgroup the
// user made is the user's, files included (the kernel gives them to the creator).
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <set>

#include "cgroup/layout.hpp"
#include "cgroup/rank_leftover.hpp"
#include "cgroup/slurm_job_cgroups.hpp"
#include "cgroup/slurm_step_reclaim.hpp"
#include "tests/cgroup/cgroup_fixture.hpp"

namespace xpart::cgroup::test {
namespace {

constexpr uid_t kUser = 4242;
using std::chrono::milliseconds;

// A child that sleeps until killed; reaped (and its status kept) by waited().
class Sleeper {
public:
    Sleeper() {
        pid_ = ::fork();
        if (pid_ == 0) {
            for (;;) ::pause();
        }
    }
    ~Sleeper() {
        if (pid_ > 0 && !reaped_) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
    }
    Sleeper(const Sleeper&) = delete;
    Sleeper& operator=(const Sleeper&) = delete;
    pid_t pid() const { return pid_; }
    void enter(const std::string& cgroup) const {
        std::ofstream(cgroup + "/cgroup.procs") << pid_ << "\n";
    }
    // Killed by SIGKILL (reaped now), or still running.
    bool killed() {
        if (reaped_) return WIFSIGNALED(status_) && WTERMSIG(status_) == SIGKILL;
        for (int i = 0; i < 200; ++i) {
            if (::waitpid(pid_, &status_, WNOHANG) == pid_) {
                reaped_ = true;
                return WIFSIGNALED(status_) && WTERMSIG(status_) == SIGKILL;
            }
            ::usleep(5000);
        }
        return false;
    }

private:
    pid_t pid_ = -1;
    int status_ = 0;
    bool reaped_ = false;
};

uid_t owner(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 ? st.st_uid : static_cast<uid_t>(-1);
}
bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

void mkdir_slurms(const std::string& dir, bool users) {
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0) << dir << ": " << std::strerror(errno);
    if (users) {
        ASSERT_EQ(::chown(dir.c_str(), kUser, kUser), 0);  // Slurm's chown: the directory only
    }
}
// A cgroup the user made: the kernel gives its creator the directory and every file in it.
void mkdir_users(const std::string& dir) {
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0) << dir << ": " << std::strerror(errno);
    ASSERT_EQ(::chown(dir.c_str(), kUser, kUser), 0);
    for (const char* f : {"cgroup.procs", "tasks", "notify_on_release", "cgroup.clone_children"})
        if (exists(dir + "/" + f)) {
            ASSERT_EQ(::chown((dir + "/" + f).c_str(), kUser, kUser), 0);
        }
}

// The v1 hierarchies a test tree is made in: devices (device rules) and freezer (proctrack).
std::vector<MountedHierarchy> v1_under_test() {
    auto layout = detect_cgroup_layout(RootFs("/"));
    std::vector<MountedHierarchy> out;
    if (!layout) return out;
    for (const auto& h : layout->v1_hierarchies)
        if (h.controller == "devices" || h.controller == "freezer") out.push_back(h);
    return out;
}

// Trees made at each mount's root, removed (members killed) on scope exit.
struct Trees {
    std::vector<std::string> tops;
    ~Trees() {
        for (const auto& t : tops) {
            std::ofstream(t + "/freezer.state") << "THAWED\n";  // a frozen member cannot die
            if (auto below = cgroups_below(t))
                for (const auto& d : *below) std::ofstream(d + "/freezer.state") << "THAWED\n";
            EXPECT_TRUE(remove_cgroup_tree(t)) << t;
        }
    }
};

// A step with one task as Slurm lays it out below each of `v1`'s mounts; its path below them.
std::string slurm_step(Trees& trees, const std::vector<MountedHierarchy>& v1, const std::string& job) {
    const std::string base = "/" + test_prefix() + "_slurm", step = base + "/uid_4242/" + job + "/step_0";
    for (const auto& h : v1) {
        trees.tops.push_back(h.mount + base);
        for (const std::string& level : {base, base + "/uid_4242", base + "/uid_4242/" + job})
            mkdir_slurms(h.mount + level, false);
        mkdir_slurms(h.mount + step, true);
        mkdir_slurms(h.mount + step + "/task_0", true);
    }
    return step;
}

TEST(ReclaimSlurmStep, TakesBackTheStepAndEndsWhatTheUserMade) {
    const auto v1 = v1_under_test();
    ASSERT_EQ(v1.size(), 2u) << "needs the cgroup v1 devices and freezer controllers";
    Trees trees;
    const std::string step = slurm_step(trees, v1, "job_1");
    std::vector<std::unique_ptr<Sleeper>> hidden;
    for (const auto& h : v1) {
        // What a process of the job made before the take-back: beside the task, and below it
        // (two levels), each holding a process that ignores nothing it can be sent.
        mkdir_users(h.mount + step + "/hide");
        mkdir_users(h.mount + step + "/task_0/hide");
        mkdir_users(h.mount + step + "/task_0/hide/deeper");
        hidden.push_back(std::make_unique<Sleeper>());
        hidden.back()->enter(h.mount + step + "/hide");
        hidden.push_back(std::make_unique<Sleeper>());
        hidden.back()->enter(h.mount + step + "/task_0/hide/deeper");
    }
    auto r = reclaim_slurm_step(v1, step, milliseconds(2000));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->taken, 2 * v1.size());
    EXPECT_EQ(r->removed.size(), 2 * v1.size());
    for (const auto& h : v1) {
        EXPECT_EQ(owner(h.mount + step), 0u) << h.mount;
        EXPECT_EQ(owner(h.mount + step + "/task_0"), 0u) << h.mount;
        EXPECT_FALSE(exists(h.mount + step + "/hide")) << h.mount;
        EXPECT_FALSE(exists(h.mount + step + "/task_0/hide")) << h.mount;
    }
    for (auto& s : hidden) EXPECT_TRUE(s->killed()) << "pid " << s->pid();
    // Again: nothing left to take or end, and nothing of Slurm's is touched.
    auto again = reclaim_slurm_step(v1, step, milliseconds(2000));
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->taken, 0u);
    EXPECT_TRUE(again->removed.empty());
    for (const auto& h : v1) EXPECT_TRUE(exists(h.mount + step + "/task_0")) << h.mount;
}

// One slurmstepd calls it once per task: each call takes back the task directories Slurm made
// since, and ends what the user made in them before that.
TEST(ReclaimSlurmStep, EachCallTheTasksMadeSince) {
    const auto v1 = v1_under_test();
    ASSERT_EQ(v1.size(), 2u) << "needs the cgroup v1 devices and freezer controllers";
    Trees trees;
    const std::string step = slurm_step(trees, v1, "job_2");
    SlurmStepReclaimer reclaimer(v1, step);
    auto first = reclaimer.run(milliseconds(2000));
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_EQ(first->taken, 2 * v1.size());
    Sleeper hidden;
    for (const auto& h : v1) {
        mkdir_slurms(h.mount + step + "/task_1", true);
        mkdir_users(h.mount + step + "/task_1/hide");
    }
    hidden.enter(v1[0].mount + step + "/task_1/hide");
    auto second = reclaimer.run(milliseconds(2000));
    ASSERT_TRUE(second.ok()) << second.error().message;
    EXPECT_EQ(second->taken, v1.size());
    EXPECT_EQ(second->removed.size(), v1.size());
    for (const auto& h : v1) {
        EXPECT_EQ(owner(h.mount + step + "/task_1"), 0u) << h.mount;
        EXPECT_FALSE(exists(h.mount + step + "/task_1/hide")) << h.mount;
    }
    EXPECT_TRUE(hidden.killed());
}

// A link in the step's place is never followed.
TEST(ReclaimSlurmStep, NeverThroughALink) {
    EXPECT_FALSE(take_back("/proc/self/cwd").ok());
}

class EndSlurmJob : public ::testing::Test {
protected:
    void SetUp() override {
        hierarchies = v1_under_test();
        ASSERT_EQ(hierarchies.size(), 2u) << "needs the cgroup v1 devices and freezer controllers";
        auto layout = detect_cgroup_layout(RootFs("/"));
        ASSERT_TRUE(layout.ok() && layout->has(Hierarchy::V2)) << "needs a cgroup2 tree beside v1";
        v2 = layout->mounted(Hierarchy::V2);
        node = test_prefix() + "_node";
        for (const auto& h : hierarchies) {
            const std::string base = slurm_node_cgroups(Hierarchy::V1, h.mount, node).base;
            trees.tops.push_back(base);
            mkdir_slurms(base, false);
            mkdir_slurms(base + "/uid_4242", false);
            for (const char* job : {"/job_77", "/job_78"}) {
                mkdir_slurms(base + "/uid_4242" + job, false);
                mkdir_slurms(base + "/uid_4242" + job + "/step_batch", true);
            }
            job77.push_back({h, base + "/uid_4242/job_77"});
        }
        // v2's scope: system.slice is systemd's where it exists; made (and removed) here if not.
        const std::string slice = v2.mount + "/system.slice";
        if (!exists(slice)) {
            mkdir_slurms(slice, false);
            trees.tops.push_back(slice);
        }
        const std::string scope = slurm_node_cgroups(Hierarchy::V2, v2.mount, node).base;
        trees.tops.insert(trees.tops.begin(), scope);  // removed before the slice
        mkdir_slurms(scope, false);
        mkdir_slurms(scope + "/job_77", false);
        mkdir_slurms(scope + "/job_77/step_batch", false);
        mkdir_slurms(scope + "/job_77/step_batch/user", false);
        job77.push_back({v2, scope + "/job_77"});
    }
    std::vector<MountedHierarchy> all() const {
        auto out = hierarchies;
        out.push_back(v2);
        return out;
    }
    std::vector<MountedHierarchy> hierarchies;
    MountedHierarchy v2;
    std::string node;
    std::vector<std::pair<MountedHierarchy, std::string>> job77;
    Trees trees;
};

TEST_F(EndSlurmJob, KillsWhereverBelowTheJobAndNothingElse) {
    std::vector<std::unique_ptr<Sleeper>> job;
    for (const auto& [h, dir] : job77) {
        const std::string hide = dir + "/step_batch" + (h.controller.empty() ? "/user" : "/hide");
        if (!h.controller.empty()) mkdir_users(hide);
        mkdir_users(hide + "/deeper");
        job.push_back(std::make_unique<Sleeper>());
        job.back()->enter(hide + "/deeper");
        job.push_back(std::make_unique<Sleeper>());
        job.back()->enter(dir + "/step_batch");
    }
    // The user's other job on the node, and a process outside Slurm's tree.
    Sleeper bystander, elsewhere;
    bystander.enter(slurm_node_cgroups(Hierarchy::V1, hierarchies[1].mount, node).base + "/uid_4242/job_78/step_batch");

    const auto end = end_slurm_job(all(), {"77", node, ""}, milliseconds(3000));
    EXPECT_TRUE(end.failed.empty()) << end.failed.front();
    EXPECT_TRUE(end.survivors.empty());
    EXPECT_EQ(end.killed, job.size());
    for (auto& s : job) EXPECT_TRUE(s->killed()) << "pid " << s->pid();
    EXPECT_EQ(::kill(bystander.pid(), 0), 0) << "another job's process was killed";
    EXPECT_EQ(::kill(elsewhere.pid(), 0), 0) << "a process outside the job was killed";
    // freezer's job tree is gone; devices' and v2's stay for sweep_slurm_job.
    for (const auto& [h, dir] : job77) EXPECT_EQ(exists(dir), h.controller != "freezer") << dir;
    EXPECT_TRUE(exists(slurm_node_cgroups(Hierarchy::V1, hierarchies[1].mount, node).base + "/uid_4242/job_78"));
}

// A process SIGKILL cannot end (here: frozen by v1's freezer, which holds the signal) is a
// survivor, named with its cgroup, so the Epilog can fail and Slurm drain the node.
TEST_F(EndSlurmJob, ReportsAProcessThatOutlivesSigkill) {
    const auto& freezer = hierarchies[0].controller == "freezer" ? hierarchies[0] : hierarchies[1];
    const std::string ice = slurm_node_cgroups(Hierarchy::V1, freezer.mount, node).base + "/uid_4242/job_77/step_batch/ice";
    mkdir_users(ice);
    Sleeper frozen;
    frozen.enter(ice);
    std::ofstream(ice + "/freezer.state") << "FROZEN\n";
    const auto end = end_slurm_job(all(), {"77", node, ""}, milliseconds(300));
    ASSERT_EQ(end.survivors.size(), 1u);
    EXPECT_EQ(end.survivors[0].pid, frozen.pid());
    EXPECT_EQ(end.survivors[0].cgroup, ice);
    std::ofstream(ice + "/freezer.state") << "THAWED\n";
    EXPECT_TRUE(frozen.killed()) << "the SIGKILL it was sent lands once thawed";
}

}  // namespace
}  // namespace xpart::cgroup::test
