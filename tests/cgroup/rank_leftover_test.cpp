#include <gtest/gtest.h>

#include <algorithm>

#include "cgroup/rank_leftover.hpp"
#include "tests/cgroup/fake_cgroup_tree.hpp"

namespace xpart::cgroup {
namespace {

using testing::FakeCgroupTree;
using Outcome = SweepEntry::Outcome;

// --- names ----------------------------------------------------------------------------------
struct NameCase {
    const char* name;
    bool valid;
    unsigned rank;
    pid_t pid;
};
class RankName : public ::testing::TestWithParam<NameCase> {};
TEST_P(RankName, ParsesOnlyExactNames) {
    const auto& c = GetParam();
    auto n = parse_rank_cgroup_name(c.name);
    ASSERT_EQ(n.has_value(), c.valid) << c.name;
    if (!c.valid) return;
    EXPECT_EQ(n->rank, c.rank);
    EXPECT_EQ(n->launcher, c.pid);
    EXPECT_EQ(rank_cgroup_name(c.rank, c.pid), c.name);  // the launcher spells it the same way
}
INSTANTIATE_TEST_SUITE_P(Cases, RankName,
                         ::testing::Values(NameCase{"xpart_rank0_123", true, 0, 123},
                                           NameCase{"xpart_rank17_4194303", true, 17, 4194303},
                                           NameCase{"xpart_rank_123", false, 0, 0},
                                           NameCase{"xpart_rank0_", false, 0, 0},
                                           NameCase{"xpart_rank0_0", false, 0, 0},
                                           NameCase{"xpart_rank-1_5", false, 0, 0},
                                           NameCase{"xpart_rank0_12a", false, 0, 0},
                                           NameCase{"xpart_rank01_5", false, 0, 0},
                                           NameCase{"xpart_rank0_5_6", false, 0, 0},
                                           NameCase{"xpart_rank0_99999999999", false, 0, 0},
                                           NameCase{"Xpart_rank0_5", false, 0, 0},
                                           NameCase{"task_0", false, 0, 0},
                                           NameCase{"", false, 0, 0}));

// --- /proc/<pid>/stat --------------------------------------------------------------------------
struct StatCase {
    const char* stat;
    std::optional<LauncherState> want;
};
class LauncherStat : public ::testing::TestWithParam<StatCase> {};
TEST_P(LauncherStat, TellsLauncherFromOthers) {
    EXPECT_EQ(launcher_state_from_stat(GetParam().stat), GetParam().want) << GetParam().stat;
}
INSTANTIATE_TEST_SUITE_P(
    Cases, LauncherStat,
    ::testing::Values(StatCase{"123 (xpart) S 1 123 123 0", LauncherState::Xpart},
                      StatCase{"123 (xpart) R 1", LauncherState::Xpart},
                      StatCase{"123 (xpart) Z 1", LauncherState::Gone},
                      StatCase{"123 (xpart) X 1", LauncherState::Gone},
                      StatCase{"123 (sleep) S 1", LauncherState::NotXpart},
                      StatCase{"123 (xpart-sim) S 1", LauncherState::NotXpart},
                      StatCase{"123 (a (xpart)) S 1", LauncherState::NotXpart},
                      StatCase{"123 (x) (xpart) S 1", LauncherState::NotXpart},
                      StatCase{"123 (xpart)", std::nullopt}, StatCase{"123 xpart S", std::nullopt},
                      StatCase{"", std::nullopt}));

TEST(LauncherState, ReadsTheFakeProc) {
    FakeCgroupTree t;
    t.process(10, "xpart");
    t.process(11, "bash");
    t.process(12, "xpart", 'Z');
    const RootFs proc(t.root());
    EXPECT_EQ(launcher_state(proc, 10), LauncherState::Xpart);
    EXPECT_EQ(launcher_state(proc, 11), LauncherState::NotXpart);
    EXPECT_EQ(launcher_state(proc, 12), LauncherState::Gone);
    EXPECT_EQ(launcher_state(proc, 13), LauncherState::Gone);
}

// --- the policy --------------------------------------------------------------------------------
struct JudgeCase {
    std::size_t processes, children;
    LauncherState launcher;
    LeftoverVerdict want;
};
class Judge : public ::testing::TestWithParam<JudgeCase> {};
TEST_P(Judge, BusyNeverRemovedLiveLauncherKeepsIt) {
    const auto& c = GetParam();
    EXPECT_EQ(judge_rank_leftover({c.processes, c.children}, c.launcher), c.want)
        << c.processes << " processes, " << c.children << " children";
}
INSTANTIATE_TEST_SUITE_P(
    Cases, Judge,
    ::testing::Values(JudgeCase{0, 0, LauncherState::Gone, LeftoverVerdict::Remove},
                      JudgeCase{0, 0, LauncherState::NotXpart, LeftoverVerdict::Remove},
                      JudgeCase{0, 0, LauncherState::Xpart, LeftoverVerdict::KeepLauncherRuns},
                      JudgeCase{1, 0, LauncherState::Gone, LeftoverVerdict::KeepBusy},
                      JudgeCase{0, 1, LauncherState::Gone, LeftoverVerdict::KeepBusy},
                      JudgeCase{3, 2, LauncherState::NotXpart, LeftoverVerdict::KeepBusy},
                      JudgeCase{2, 0, LauncherState::Xpart, LeftoverVerdict::KeepBusy}));

// --- the sweep over a fake tree ------------------------------------------------------------------
// One tree with every kind of directory; each case names one and what the sweep must do to it.
struct TreeCase {
    const char* dir;
    unsigned depth;
    bool dry_run;
    std::optional<Outcome> want;  // nullopt: not reported at all
    bool exists_after;
};
void build_tree(FakeCgroupTree& t) {
    t.cgroup("task_0/xpart_rank0_100");         // launcher gone
    t.cgroup("task_0/xpart_rank1_101", {555});  // busy
    t.cgroup("task_0/xpart_rank2_102");         // launcher runs
    t.process(102, "xpart");
    t.cgroup("task_0/xpart_rank3_103");  // pid reused by another program
    t.process(103, "bash");
    t.cgroup("task_0/xpart_rank4_104");  // launcher is a zombie
    t.process(104, "xpart", 'Z');
    t.cgroup("task_0/xpart_rank5_105/inner");  // has a child cgroup
    t.cgroup("task_0/other");                  // not ours
    t.cgroup("task_0/deeper/xpart_rank0_106");  // two levels down
}
class SweepTree : public ::testing::TestWithParam<TreeCase> {};
TEST_P(SweepTree, RemovesOnlyEmptyOrphans) {
    const auto& c = GetParam();
    FakeCgroupTree t;
    build_tree(t);
    auto entries = sweep_rank_leftovers(Hierarchy::V1, t.path("task_0"), c.depth, t.host(c.dry_run));
    auto it = std::find_if(entries.begin(), entries.end(),
                           [&](const SweepEntry& e) { return e.path == t.path(c.dir); });
    if (!c.want) {
        EXPECT_EQ(it, entries.end()) << c.dir << ": " << format_entry(*it);
    } else {
        ASSERT_NE(it, entries.end()) << c.dir << " not reported";
        EXPECT_EQ(it->outcome, *c.want) << format_entry(*it);
    }
    EXPECT_EQ(t.exists(c.dir), c.exists_after) << c.dir;
    for (const auto& e : entries) EXPECT_NE(e.outcome, Outcome::Failed) << format_entry(e);
    if (c.dry_run) {
        EXPECT_TRUE(t.removed.empty());
    }
}
INSTANTIATE_TEST_SUITE_P(
    Cases, SweepTree,
    ::testing::Values(TreeCase{"task_0/xpart_rank0_100", 1, false, Outcome::Removed, false},
                      TreeCase{"task_0/xpart_rank1_101", 1, false, Outcome::Kept, true},
                      TreeCase{"task_0/xpart_rank2_102", 1, false, Outcome::Kept, true},
                      TreeCase{"task_0/xpart_rank3_103", 1, false, Outcome::Removed, false},
                      TreeCase{"task_0/xpart_rank4_104", 1, false, Outcome::Removed, false},
                      TreeCase{"task_0/xpart_rank5_105", 1, false, Outcome::Kept, true},
                      TreeCase{"task_0/xpart_rank5_105/inner", 1, false, std::nullopt, true},
                      TreeCase{"task_0/other", 1, false, std::nullopt, true},
                      TreeCase{"task_0/deeper/xpart_rank0_106", 1, false, std::nullopt, true},
                      TreeCase{"task_0/deeper/xpart_rank0_106", 2, false, Outcome::Removed, false},
                      TreeCase{"task_0/xpart_rank0_100", 0, false, std::nullopt, true},
                      TreeCase{"task_0/xpart_rank0_100", 1, true, Outcome::WouldRemove, true},
                      TreeCase{"task_0/xpart_rank1_101", 1, true, Outcome::Kept, true}));

TEST(SweepTree, KeptEntriesSayWhy) {
    FakeCgroupTree t;
    build_tree(t);
    std::vector<std::string> lines;
    for (const auto& e : sweep_rank_leftovers(Hierarchy::V1, t.path("task_0"), 1, t.host()))
        lines.push_back(format_entry(e));
    auto has = [&](const std::string& line) { return std::find(lines.begin(), lines.end(), line) != lines.end(); };
    EXPECT_TRUE(has("kept " + t.path("task_0/xpart_rank1_101") + ": busy (1 process(es))"));
    EXPECT_TRUE(has("kept " + t.path("task_0/xpart_rank2_102") + ": its launcher (xpart, pid 102) still runs"));
    EXPECT_TRUE(has("kept " + t.path("task_0/xpart_rank5_105") + ": busy (1 child cgroup(s))"));
    EXPECT_TRUE(has("removed " + t.path("task_0/xpart_rank0_100")));
}

TEST(SweepTree, UnreadableDirectoryIsAFailureNotARemoval) {
    FakeCgroupTree t;
    t.cgroup("task_0/xpart_rank0_100");
    ::unlink((t.path("task_0/xpart_rank0_100") + "/cgroup.procs").c_str());
    auto entries = sweep_rank_leftovers(Hierarchy::V1, t.path("task_0"), 1, t.host());
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].outcome, Outcome::Failed);
    EXPECT_NE(entries[0].why.find("cgroup.procs"), std::string::npos) << entries[0].why;
    EXPECT_TRUE(t.removed.empty());
}

TEST(SweepTree, MissingDirectoryIsReported) {
    FakeCgroupTree t;
    auto entries = sweep_rank_leftovers(Hierarchy::V1, t.path("nowhere"), 1, t.host());
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].outcome, Outcome::Failed);
}

}  // namespace
}  // namespace xpart::cgroup
