// The SPANK plugin's plan of a step (spank_plugin/step_plan.hpp): partitions from the gres
// plugin's record indices, the node cache cross-checked against CUDA_VISIBLE_DEVICES, and
// each task's environment.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "spank_plugin/step_plan.hpp"
#include "libxpart/node_cache.hpp"
#include "libxpart/text.hpp"
#include "tests/fixtures/sample_nodes.hpp"
#include "tests/spank/step_test_util.hpp"

namespace xpart::spank {
namespace {

using fixtures::mig_uuid;
using fixtures::nvidia_gpu_uuid;

// ---- from_record_indices ----------------------------------------------------------

struct Expected {
    std::size_t gpu, partition;
    std::string token;
};

struct RecordCase {
    const char* name;
    Node (*node)();
    std::string step_gpus;
    std::vector<Expected> expect;  // empty: `error` is the whole message
    std::string error;
};

Node dgx_one_each() { return fixtures::dgx_a100(8, 1); }
Node dgx_mixed() { return fixtures::dgx_a100(4, 2); }  // GPUs 0-3: 2 MIG each; 4-7 whole
Node mig_pending() {
    Node n = fixtures::a100_80gb_mig_node();  // GPU 0: 3 MIG devices; GPU 1 whole
    n.gpus[0].mode = PartitionMode::MigPending;
    return n;
}
Node pending_in_the_middle() {
    Node n = fixtures::dgx_a100(8, 1);
    n.gpus[2].mode = PartitionMode::MigPending;
    return n;
}
Node nvidia_and_amd() { return fixtures::a100_80gb_mig_and_mi300x_node(); }

class AllotmentFromRecordsTest : public ::testing::TestWithParam<RecordCase> {};

TEST_P(AllotmentFromRecordsTest, Resolves) {
    const RecordCase& c = GetParam();
    auto a = binding::from_record_indices(c.node(), "SLURM_STEP_GPUS", c.step_gpus);
    if (c.expect.empty()) {
        ASSERT_FALSE(a.ok()) << c.name;
        EXPECT_EQ(a.error().message, c.error);
        return;
    }
    ASSERT_TRUE(a.ok()) << a.error().message;
    EXPECT_EQ(a->variable, "SLURM_STEP_GPUS");
    ASSERT_EQ(a->partitions.size(), c.expect.size());
    for (std::size_t i = 0; i < c.expect.size(); ++i) {
        EXPECT_EQ(a->partitions[i].gpu, c.expect[i].gpu) << i;
        EXPECT_EQ(a->partitions[i].partition, c.expect[i].partition) << i;
        EXPECT_EQ(a->partitions[i].token, c.expect[i].token) << i;
    }
}

const RecordCase kRecordCases[] = {
    {"step_order_kept", dgx_one_each, "3,0", {{3, 0, "3"}, {0, 0, "0"}}, ""},
    {"records_count_partitions_not_gpus", dgx_mixed, "1,8,11",
     {{0, 1, "1"}, {4, 0, "8"}, {7, 0, "11"}}, ""},
    {"blanks_trimmed", dgx_one_each, " 2 , 5", {{2, 0, "2"}, {5, 0, "5"}}, ""},
    {"mig_pending_gpu_has_no_record", mig_pending, "0", {{1, 0, "0"}}, ""},
    {"records_after_a_pending_gpu_shift", pending_in_the_middle, "2,6",
     {{3, 0, "2"}, {7, 0, "6"}}, ""},
    // Records follow discovery's listing (the MI300X is listed in reverse KFD order): the
    // gres plugin registers them in that order.
    {"amd_after_nvidia_in_listing_order", nvidia_and_amd, "4,11,3",
     {{2, 0, "4"}, {2, 7, "11"}, {1, 0, "3"}}, ""},
    {"pending_gpu_records_are_gone", mig_pending, "1", {},
     "environment: SLURM_STEP_GPUS='1': token '1' is not one of this node's 1 gres/gpu records"},
    {"one_past_the_end", dgx_mixed, "2,12", {},
     "environment: SLURM_STEP_GPUS='2,12': token '12' is not one of this node's 12 gres/gpu records"},
    {"not_a_number", dgx_one_each, "0,gpu1", {},
     "environment: SLURM_STEP_GPUS='0,gpu1': token 'gpu1' is not one of this node's 8 gres/gpu records"},
    {"negative", dgx_one_each, "-1", {},
     "environment: SLURM_STEP_GPUS='-1': token '-1' is not one of this node's 8 gres/gpu records"},
    {"empty_field", dgx_one_each, "1,,2", {},
     "environment: SLURM_STEP_GPUS='1,,2': token '' is not one of this node's 8 gres/gpu records"},
    {"empty", dgx_one_each, "", {}, "environment: SLURM_STEP_GPUS='': token '' is not one of this node's 8 gres/gpu records"},
};

INSTANTIATE_TEST_SUITE_P(StepGpus, AllotmentFromRecordsTest, ::testing::ValuesIn(kRecordCases),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- plan_step: the node cache under a private root ---------------------------------

class PlanStepTest : public ::testing::Test {
protected:
    void use(const Node& node) { ASSERT_TRUE(write_node_cache(RootFs(dir_.path()), node).ok()); }
    // The cache as slurmd wrote it with `member` replaced.
    void use(const Node& node, const char* member, const nlohmann::json& value) {
        use(node);
        RootFs root(dir_.path());
        auto j = nlohmann::json::parse(*root.read("/run/xpart/node.json"));
        j[member] = value;
        std::ofstream(root.host_path("/run/xpart/node.json")) << j.dump();
    }
    Result<StepPlan> plan(const EnvMap& env, int tasks, StepBind bind = StepBind::Rank) {
        return plan_step(RootFs(dir_.path()), env, tasks, bind);
    }
    testing::ScratchDir dir_;
};

TEST_F(PlanStepTest, OnePartitionPerTaskFromTheCache) {
    use(fixtures::dgx_a100(1, 7));  // GPU 0: seven 1g.5gb (records 0-6); GPUs 1-7 whole
    auto p = plan({{"SLURM_STEP_GPUS", "4,0"},
                   {"CUDA_VISIBLE_DEVICES", mig_uuid(0, 11) + "," + mig_uuid(0, 7)}},
                  2);
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(p->bind, StepBind::Rank);
    EXPECT_EQ(p->step_gpus, (std::vector<std::string>{"4", "0"}));
    EXPECT_EQ(p->node.gpus.size(), 8u);
    EXPECT_EQ(task_partition(*p, 0).uuid, mig_uuid(0, 11));
    EXPECT_EQ(task_partition(*p, 1).uuid, mig_uuid(0, 7));
    auto used = used_partitions(*p);
    ASSERT_EQ(used.size(), 2u);
    EXPECT_EQ(used[0].partition, 4u);
    EXPECT_EQ(used[1].partition, 0u);
}

TEST_F(PlanStepTest, MoreTasksThanPartitionsShareInBlocks) {
    use(fixtures::dgx_a100(8, 1));
    auto p = plan({{"SLURM_STEP_GPUS", "1,2"},
                   {"CUDA_VISIBLE_DEVICES", mig_uuid(1, 7) + "," + mig_uuid(2, 7)}},
                  3);
    ASSERT_TRUE(p.ok()) << p.error().message;
    std::vector<std::string> tasks;
    for (int t = 0; t < 3; ++t) tasks.push_back(task_partition(*p, t).uuid);
    EXPECT_EQ(tasks, (std::vector<std::string>{mig_uuid(1, 7), mig_uuid(1, 7), mig_uuid(2, 7)}));
    EXPECT_EQ(p->plan.assignments[0].sharers, 2);
    EXPECT_EQ(p->plan.assignments[2].sharers, 1);
}

TEST_F(PlanStepTest, AmdNeedsNoCudaList) {
    use(fixtures::mi300x_cpx_node());
    auto p = plan({{"SLURM_STEP_GPUS", "6"}, {"ROCR_VISIBLE_DEVICES", "0"}}, 1);
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(task_partition(*p, 0).index, 6);
}

// The record indices are read through the places slurmd wrote, not re-derived from the node.
TEST_F(PlanStepTest, RecordIndicesAreWhatSlurmdRegistered) {
    use(fixtures::mi300x_cpx_node(), "gres_records", nlohmann::json::array({{0, 7}, {0, 6}}));
    auto p = plan({{"SLURM_STEP_GPUS", "1"}, {"ROCR_VISIBLE_DEVICES", "0"}}, 1);
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(task_partition(*p, 0).index, 6);
}

// A cache of another format is refused with its one line, never discovered around.
// Without slurmd's cache the record indices mean nothing known: the step binds nothing (no
// discovery here, which would not know xpart.conf's settings).
TEST_F(PlanStepTest, NoCacheBindsNothing) {
    auto p = plan({{"SLURM_STEP_GPUS", "0"}}, 1);
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().message.find(dir_.path() + "/run/xpart/node.json"), std::string::npos)
        << p.error().message;
    EXPECT_NE(p.error().message.find("(the step's partitions are the records slurmd's xpart "
                                     "gres/gpu plugin registered there; is slurmd running with it?)"),
              std::string::npos)
        << p.error().message;
}

TEST_F(PlanStepTest, CacheOfAnotherFormatIsRefused) {
    use(fixtures::mi300x_cpx_node(), "format", 2);
    auto p = plan({{"SLURM_STEP_GPUS", "1"}, {"ROCR_VISIBLE_DEVICES", "0"}}, 1);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().message, RootFs(dir_.path()).host_path("/run/xpart/node.json") +
                                     ": node cache format 2, this xpart reads format 1: restart "
                                     "slurmd so it rewrites the cache");
}

// A node cache that no longer matches what slurmd registered must bind nothing.
struct CrossCheckCase {
    const char* name;
    EnvMap env;
    std::string error;
};

class PlanStepCrossCheckTest : public PlanStepTest,
                               public ::testing::WithParamInterface<CrossCheckCase> {};

TEST_P(PlanStepCrossCheckTest, RefusesTheStep) {
    use(fixtures::dgx_a100(8, 1));
    auto p = plan(GetParam().env, 2);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().message, GetParam().error);
}

const std::string kRestart = "': the node changed since slurmd started (restart slurmd)";

const CrossCheckCase kCrossCheckCases[] = {
    {"other_uuid",
     {{"SLURM_STEP_GPUS", "0,1"}, {"CUDA_VISIBLE_DEVICES", mig_uuid(0, 7) + "," + mig_uuid(5, 7)}},
     "SLURM_STEP_GPUS names " + mig_uuid(1, 7) + " but CUDA_VISIBLE_DEVICES is '" +
         mig_uuid(0, 7) + "," + mig_uuid(5, 7) + kRestart},
    {"other_order",
     {{"SLURM_STEP_GPUS", "0,1"}, {"CUDA_VISIBLE_DEVICES", mig_uuid(1, 7) + "," + mig_uuid(0, 7)}},
     "SLURM_STEP_GPUS names " + mig_uuid(0, 7) + " but CUDA_VISIBLE_DEVICES is '" +
         mig_uuid(1, 7) + "," + mig_uuid(0, 7) + kRestart},
    {"shorter_list", {{"SLURM_STEP_GPUS", "0,1"}, {"CUDA_VISIBLE_DEVICES", mig_uuid(0, 7)}},
     "SLURM_STEP_GPUS names " + mig_uuid(1, 7) + " but CUDA_VISIBLE_DEVICES is '" +
         mig_uuid(0, 7) + kRestart},
    {"no_cuda_list", {{"SLURM_STEP_GPUS", "3"}},
     "SLURM_STEP_GPUS names " + mig_uuid(3, 7) + " but CUDA_VISIBLE_DEVICES is '" + kRestart},
    {"cuda_indices_are_not_uuids", {{"SLURM_STEP_GPUS", "0"}, {"CUDA_VISIBLE_DEVICES", "0"}},
     "SLURM_STEP_GPUS names " + mig_uuid(0, 7) + " but CUDA_VISIBLE_DEVICES is '0" + kRestart},
    {"no_step_gpus", {{"CUDA_VISIBLE_DEVICES", mig_uuid(0, 7)}},
     "the step has no GPU on this node (SLURM_STEP_GPUS unset)"},
    {"index_beyond_the_cache", {{"SLURM_STEP_GPUS", "8"}, {"CUDA_VISIBLE_DEVICES", "x"}},
     "environment: SLURM_STEP_GPUS='8': token '8' is not one of this node's 8 gres/gpu records"},
};

INSTANTIATE_TEST_SUITE_P(Env, PlanStepCrossCheckTest, ::testing::ValuesIn(kCrossCheckCases),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- task_env -------------------------------------------------------------------------

// The changes as a map; unset = nullopt.
std::map<std::string, std::optional<std::string>> as_map(const std::vector<EnvChange>& changes) {
    std::map<std::string, std::optional<std::string>> out;
    for (const auto& c : changes) {
        EXPECT_EQ(out.count(c.name), 0u) << c.name << " changed twice";
        out[c.name] = c.value;
    }
    return out;
}

// A plan built by hand from step-order record indices (no cache, no topology).
StepPlan hand_plan(const Node& node, const std::string& step_gpus, int tasks, StepBind bind) {
    StepPlan step;
    auto a = binding::from_record_indices(node, "SLURM_STEP_GPUS", step_gpus);
    EXPECT_TRUE(a.ok()) << a.error().message;
    binding::MapOptions options;
    options.bind = bind == StepBind::Closest ? binding::BindPolicy::Closest : binding::BindPolicy::None;
    auto plan = binding::plan_node(node, *a, nullptr, tasks, options);
    EXPECT_TRUE(plan.ok()) << plan.error().message;
    step.plan = *plan;
    step.node = node;
    step.bind = bind;
    step.step_gpus = split(step_gpus, ',');
    return step;
}

using Changes = std::map<std::string, std::optional<std::string>>;

struct TaskEnvCase {
    const char* name;
    Node (*node)();
    std::string step_gpus;
    int tasks;
    StepBind bind;
    std::vector<bool> confined;  // each of these gives the same changes
    EnvMap step_env;
    std::vector<Changes> expect;  // per local task: exactly these changes
};

Node a100_mig() { return fixtures::a100_80gb_mig_node(); }
Node mi300x() { return fixtures::mi300x_cpx_node(); }

const EnvMap kUntouched = {{"PATH", "/usr/bin"}, {"SLURM_GPUS_ON_NODE", "2"}, {"SLURM_STEP_ID", "0"}};
EnvMap with(EnvMap env, const EnvMap& more) {
    for (const auto& [k, v] : more) env[k] = v;
    return env;
}

const std::string kGpu0Gi9 = mig_uuid(0, 9), kGpu1 = nvidia_gpu_uuid(1);
const std::string kMi300x = fixtures::amd_gpu_uuid(0);

const TaskEnvCase kTaskEnvCases[] = {
    // NVIDIA names partitions by UUID: confined or not, the environment is the same.
    {"nvidia_mig_and_whole", a100_mig, "1,3", 2, StepBind::Rank, {true, false},
     with(kUntouched, {{"CUDA_VISIBLE_DEVICES", kGpu0Gi9 + "," + kGpu1},
                       {"GPU_DEVICE_ORDINAL", kGpu0Gi9 + "," + kGpu1},
                       {"SLURM_STEP_GPUS", "1,3"}}),
     {{{"CUDA_VISIBLE_DEVICES", kGpu0Gi9}, {"GPU_DEVICE_ORDINAL", kGpu0Gi9},
       {"SLURM_STEP_GPUS", "1"}, {"XPART_PARTITION", kGpu0Gi9}},
      {{"CUDA_VISIBLE_DEVICES", kGpu1}, {"GPU_DEVICE_ORDINAL", kGpu1}, {"SLURM_STEP_GPUS", "3"},
       {"XPART_PARTITION", kGpu1}}}},
    // What already says the task's one partition is left alone.
    {"nothing_to_change_but_partition", a100_mig, "2", 1, StepBind::Rank, {true, false},
     with(kUntouched, {{"CUDA_VISIBLE_DEVICES", mig_uuid(0, 10)},
                       {"GPU_DEVICE_ORDINAL", mig_uuid(0, 10)},
                       {"SLURM_STEP_GPUS", "2"}}),
     {{{"XPART_PARTITION", mig_uuid(0, 10)}}}},
    // Two tasks on one partition: the same environment for both.
    {"shared_partition", a100_mig, "0", 2, StepBind::Rank, {true, false},
     with(kUntouched, {{"CUDA_VISIBLE_DEVICES", mig_uuid(0, 1)}, {"SLURM_STEP_GPUS", "0"}}),
     {{{"GPU_DEVICE_ORDINAL", mig_uuid(0, 1)}, {"XPART_PARTITION", mig_uuid(0, 1)}},
      {{"GPU_DEVICE_ORDINAL", mig_uuid(0, 1)}, {"XPART_PARTITION", mig_uuid(0, 1)}}}},
    // AMD confined: the task's cgroup leaves ROCm one agent, numbered 0; the variables that
    // index the step's filtered set are unset.
    {"amd_confined", mi300x, "3,5", 2, StepBind::Rank, {true},
     with(kUntouched, {{"ROCR_VISIBLE_DEVICES", "0,1"}, {"GPU_DEVICE_ORDINAL", "0,1"},
                       {"HIP_VISIBLE_DEVICES", "0,1"}, {"CUDA_VISIBLE_DEVICES", "0,1"},
                       {"SLURM_STEP_GPUS", "3,5"}}),
     {{{"ROCR_VISIBLE_DEVICES", "0"}, {"GPU_DEVICE_ORDINAL", "0"}, {"HIP_VISIBLE_DEVICES", std::nullopt},
       {"CUDA_VISIBLE_DEVICES", std::nullopt}, {"SLURM_STEP_GPUS", "3"},
       {"XPART_PARTITION", kMi300x + "/3"}},
      {{"ROCR_VISIBLE_DEVICES", "0"}, {"GPU_DEVICE_ORDINAL", "0"}, {"HIP_VISIBLE_DEVICES", std::nullopt},
       {"CUDA_VISIBLE_DEVICES", std::nullopt}, {"SLURM_STEP_GPUS", "5"},
       {"XPART_PARTITION", kMi300x + "/5"}}}},
    // Closest: the CPUs near each task's GPU (here discovery's, no topology).
    {"closest_pins", a100_mig, "1,3", 2, StepBind::Closest, {true, false},
     with(kUntouched, {{"CUDA_VISIBLE_DEVICES", kGpu0Gi9 + "," + kGpu1}, {"SLURM_STEP_GPUS", "1,3"}}),
     {{{"CUDA_VISIBLE_DEVICES", kGpu0Gi9}, {"GPU_DEVICE_ORDINAL", kGpu0Gi9},
       {"SLURM_STEP_GPUS", "1"}, {"XPART_PARTITION", kGpu0Gi9}, {"XPART_CPUS", "0-7"}},
      {{"CUDA_VISIBLE_DEVICES", kGpu1}, {"GPU_DEVICE_ORDINAL", kGpu1}, {"SLURM_STEP_GPUS", "3"},
       {"XPART_PARTITION", kGpu1}, {"XPART_CPUS", "8-15"}}}},
};

// In the task, every device file opens (confined, or no cgroup narrower than the step's).
const binding::DeviceOpenable kAllOpen = [](const DeviceFile&) { return true; };

class TaskEnvTest : public ::testing::TestWithParam<TaskEnvCase> {};

TEST_P(TaskEnvTest, ExactlyTheseChanges) {
    const TaskEnvCase& c = GetParam();
    StepPlan step = hand_plan(c.node(), c.step_gpus, c.tasks, c.bind);
    ASSERT_EQ(c.expect.size(), static_cast<std::size_t>(c.tasks));
    for (bool confined : c.confined)
        for (int t = 0; t < c.tasks; ++t) {
            Changes want = c.expect[t];
            want["XPART_STEP_GPUS"] = c.step_gpus;  // every task keeps the step's list there
            EXPECT_EQ(as_map(task_env(step, t, c.step_env, confined, kAllOpen)), want)
                << "task " << t << (confined ? " confined" : " unconfined");
        }
}

INSTANTIATE_TEST_SUITE_P(Tasks, TaskEnvTest, ::testing::ValuesIn(kTaskEnvCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(TaskEnvTest, AmdUnconfinedKeepsOtherVariablesNarrowed) {
    StepPlan step = hand_plan(mi300x(), "3,5", 2, StepBind::Rank);
    const EnvMap env = {{"ROCR_VISIBLE_DEVICES", "0,1"}, {"HIP_VISIBLE_DEVICES", "0,1"},
                        {"SLURM_STEP_GPUS", "3,5"}};
    auto changes = as_map(task_env(step, 1, env, false, kAllOpen));
    EXPECT_EQ(changes["HIP_VISIBLE_DEVICES"], std::nullopt);
    EXPECT_EQ(changes["SLURM_STEP_GPUS"], "5");
    EXPECT_EQ(changes["XPART_PARTITION"], kMi300x + "/5");
    EXPECT_EQ(changes["GPU_DEVICE_ORDINAL"], changes["ROCR_VISIBLE_DEVICES"]);
}

// Unconfined, a task's ROCR_VISIBLE_DEVICES names its XCP as ROCm numbers what the task can
// open (the step's XCPs 3 and 5 here: 0 and 1), not by its gres record index.
TEST(TaskEnvTest, AmdUnconfinedNamesTheXcpAsTheTaskSeesIt) {
    const Node node = mi300x();
    StepPlan step = hand_plan(node, "3,5", 2, StepBind::Rank);
    const EnvMap env = {{"ROCR_VISIBLE_DEVICES", "0,1"}, {"SLURM_STEP_GPUS", "3,5"}};
    auto own = [&](int p) { return node.gpus[0].partitions[static_cast<std::size_t>(p)].device_files[1].path; };  // its render node
    const binding::DeviceOpenable step_only = [&](const DeviceFile& f) { return f.path == own(3) || f.path == own(5); };
    EXPECT_EQ(as_map(task_env(step, 0, env, false, step_only))["ROCR_VISIBLE_DEVICES"], std::optional<std::string>("0"));
    EXPECT_EQ(as_map(task_env(step, 1, env, false, step_only))["ROCR_VISIBLE_DEVICES"], std::optional<std::string>("1"));
    // A task that cannot open its XCP is told none rather than another one.
    const binding::DeviceOpenable none = [](const DeviceFile&) { return false; };
    EXPECT_EQ(as_map(task_env(step, 0, env, false, none))["ROCR_VISIBLE_DEVICES"], std::optional<std::string>("-1"));
}

// Slurm's own per-task choice (--gpu-bind, --gpus-per-task) holds beside xpart's on both
// hierarchies: a task is bound to a partition its rules let it open, the plan's while it can,
// and told of none when it can open none of the step's; on both vendors, confined or not.
struct SlurmChoiceCase {
    const char* name;
    int task;
    std::vector<int> slurm_gave;  // the step's slots Slurm's rules let the task open
    std::optional<std::string> step_gpus;  // what SLURM_STEP_GPUS says (nullopt: unset)
    const char* note;                      // part of the note ("" = no note)
};

const SlurmChoiceCase kSlurmChoiceCases[] = {
    {"everything_opens", 0, {0, 1}, "1", ""},
    {"its_own", 1, {1}, "3", ""},
    {"swapped_task0", 0, {1}, "3", "gave partition 1, which --xpart-bind chose for this task, to another task; bound to partition 3"},
    {"swapped_task1", 1, {0}, "1", "gave partition 3, which --xpart-bind chose for this task, to another task; bound to partition 1"},
    {"none", 0, {}, std::nullopt, "left this task none of the step's partitions"},
};

class SlurmChoiceTest : public ::testing::TestWithParam<SlurmChoiceCase> {};

// What a task opens when Slurm's per-task rules gave it these slots: their files, and every
// shared one.
binding::DeviceOpenable slurm_gave(const StepPlan& step, const std::vector<int>& slots) {
    std::set<std::string> own;
    for (int slot : slots)
        for (const auto& f : slot_partition(step, static_cast<std::size_t>(slot)).device_files) own.insert(f.path);
    return [own](const DeviceFile& f) { return f.shared || own.count(f.path) > 0; };
}

TEST_P(SlurmChoiceTest, TaskIsBoundWithinWhatSlurmGaveIt) {
    const SlurmChoiceCase& c = GetParam();
    for (const Node& node : {a100_mig(), mi300x()})
        for (bool confined : {true, false}) {
            StepPlan step = hand_plan(node, "1,3", 2, StepBind::Rank);
            const EnvMap env = {{"SLURM_STEP_GPUS", "1,3"}};
            const binding::DeviceOpenable slurms = slurm_gave(step, c.slurm_gave);
            const std::string where = std::string(node.gpus[0].vendor == Vendor::Nvidia ? "nvidia" : "amd") +
                                      (confined ? " confined" : " unconfined");
            std::string note;
            auto got = as_map(task_env(step, c.task, env, confined, slurms, &note));
            ASSERT_TRUE(got.count("SLURM_STEP_GPUS")) << where;
            EXPECT_EQ(got["SLURM_STEP_GPUS"], c.step_gpus) << where;
            const auto device = got.count("CUDA_VISIBLE_DEVICES") ? got["CUDA_VISIBLE_DEVICES"] : got["ROCR_VISIBLE_DEVICES"];
            const auto ordinal = got["GPU_DEVICE_ORDINAL"];
            if (c.step_gpus) {
                const std::size_t slot = c.step_gpus == std::optional<std::string>("1") ? 0 : 1;
                EXPECT_EQ(task_slot(step, c.task, slurms), slot) << where;
                EXPECT_NE(ordinal, std::optional<std::string>("-1")) << where;
                EXPECT_TRUE(got.count("XPART_PARTITION") && got["XPART_PARTITION"]) << where;
            } else {
                EXPECT_EQ(ordinal, std::optional<std::string>("-1")) << where;
                if (node.gpus[0].vendor == Vendor::Nvidia) {
                    EXPECT_EQ(device, std::optional<std::string>("-1")) << where;
                }
                EXPECT_FALSE(got.count("XPART_PARTITION") && got["XPART_PARTITION"]) << where;
            }
            if (*c.note) {
                EXPECT_NE(note.find(c.note), std::string::npos) << where << ": " << note;
            } else {
                EXPECT_EQ(note, "") << where;
            }
        }
}

// Closest: a task Slurm's rules moved to another partition is pinned near that one.
TEST(SlurmChoice, ClosestTaskMovedIsPinnedNearItsPartition) {
    StepPlan step = hand_plan(a100_mig(), "1,3", 2, StepBind::Closest);
    const EnvMap env = {{"SLURM_STEP_GPUS", "1,3"}};
    const binding::DeviceOpenable slurms = slurm_gave(step, {1});
    EXPECT_EQ(format_cpu_list(task_cpus(step, 0, 0)), "0-7");
    EXPECT_EQ(format_cpu_list(task_cpus(step, 0, 1)), "8-15");
    EXPECT_EQ(as_map(task_env(step, 0, env, true, slurms))["XPART_CPUS"], std::optional<std::string>("8-15"));
    // Rank binding pins nothing, wherever the task runs.
    EXPECT_TRUE(task_cpus(hand_plan(a100_mig(), "1,3", 2, StepBind::Rank), 0, 1).empty());
}

INSTANTIATE_TEST_SUITE_P(Slurm, SlurmChoiceTest, ::testing::ValuesIn(kSlurmChoiceCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace xpart::spank
