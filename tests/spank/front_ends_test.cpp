// One visibility for both front ends: a rank of `xpart launch` (resolve_allotment, plan_node,
// narrow_env on the task's environment) and a task of the SPANK plugin (plan from the gres
// record indices, task_env) given the same step by the gres plugin see the same vendor
// variables. Both go through libxpart/visibility.hpp; this pins that their inputs agree too.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "binding/allotment.hpp"
#include "binding/rank_plan.hpp"
#include "libxpart/gres/gres_env.hpp"
#include "spank_plugin/step_plan.hpp"
#include "libxpart/text.hpp"
#include "libxpart/visibility.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart::spank {
namespace {

const char* const kVisibility[] = {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                   "HIP_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
                                   "XPART_PARTITION"};

struct FrontEndCase {
    const char* name;
    Node (*node)();
    std::vector<std::size_t> records;  // the step's gres records on the node
    int tasks;
    bool constrain_devices;  // Slurm's ConstrainDevices: the task opens only its step's GPUs
    bool confined;           // one cgroup per rank (--confine=rank / the SPANK plugin's)
};

Node a100_mig() { return fixtures::a100_80gb_mig_node(); }
Node dgx() { return fixtures::dgx_a100(2, 7); }
Node mi300x() { return fixtures::mi300x_cpx_node(); }
Node mi300x_reversed() { return fixtures::mi300x_cpx_node(8, fixtures::XcpListing::ReverseKfdOrder); }

const FrontEndCase kCases[] = {
    {"NvidiaMigAndWhole", a100_mig, {0, 1, 3}, 3, false, false},
    {"NvidiaMigAndWholeConfined", a100_mig, {0, 1, 3}, 3, true, true},
    {"NvidiaSharedPartitions", dgx, {2, 9}, 4, true, false},
    {"AmdXcps", mi300x, {1, 2, 5, 6}, 4, false, false},
    {"AmdXcpsConstrained", mi300x, {1, 2, 5, 6}, 4, true, false},
    {"AmdXcpsConfined", mi300x, {1, 2, 5, 6}, 4, true, true},
    {"AmdReverseKfdOrder", mi300x_reversed, {0, 3, 7}, 3, false, false},
    {"AmdReverseKfdOrderConstrained", mi300x_reversed, {0, 3, 7}, 3, true, false},
    {"AmdSharedXcp", mi300x, {4}, 2, false, false},
};

// What the task can open: every render node, or only its step's under ConstrainDevices.
binding::DeviceOpenable task_openable(const Node& node, const FrontEndCase& c) {
    std::set<std::string> allowed;
    const auto order = gres_record_order(node);
    for (std::size_t r : c.records)
        for (const auto& f : node.gpus[order[r].gpu].partitions[order[r].partition].device_files)
            allowed.insert(f.path);
    const bool all = !c.constrain_devices;
    return [allowed, all](const DeviceFile& f) { return all || allowed.count(f.path) > 0; };
}

std::map<std::string, std::string> visibility(const EnvMap& env) {
    std::map<std::string, std::string> out;
    for (const char* name : kVisibility)
        if (const std::string* v = env_get(env, name)) out[name] = *v;
    return out;
}

class FrontEnds : public ::testing::TestWithParam<FrontEndCase> {};

TEST_P(FrontEnds, GiveARankTheSameVisibility) {
    const FrontEndCase& c = GetParam();
    const Node node = c.node();
    const auto records = gres_records(node, RootFs("/"));
    EnvRequest request;
    request.alloc.assign(records.size(), false);
    for (std::size_t r : c.records) request.alloc[r] = true;
    request.constrain_devices = c.constrain_devices;
    const EnvResult step = gres_env(records, request);
    ASSERT_TRUE(step.errors.empty());
    EnvMap step_env{{"PATH", "/usr/bin"}};
    apply_changes(step_env, step.changes);
    const binding::DeviceOpenable openable = task_openable(node, c);

    // The SPANK plugin: the plan from SLURM_STEP_GPUS, then each task's changes.
    auto allotment = binding::from_record_indices(node, "SLURM_STEP_GPUS", step_env.at("SLURM_STEP_GPUS"));
    ASSERT_TRUE(allotment) << allotment.error().message;
    StepPlan spank;
    auto spank_plan = binding::plan_node(node, *allotment, nullptr, c.tasks, binding::MapOptions{});
    ASSERT_TRUE(spank_plan) << spank_plan.error().message;
    spank.plan = *spank_plan;
    spank.node = node;
    spank.step_gpus = split(step_env.at("SLURM_STEP_GPUS"), ',');

    // `xpart launch`: the allotment from the vendor lists.
    auto launch_allotment = binding::resolve_allotment(node, step_env, openable);
    ASSERT_TRUE(launch_allotment) << launch_allotment.error().message;
    auto launch = plan_node(node, *launch_allotment, nullptr, c.tasks, binding::MapOptions{});
    ASSERT_TRUE(launch) << launch.error().message;

    for (int rank = 0; rank < c.tasks; ++rank) {
        SCOPED_TRACE("rank " + std::to_string(rank));
        EnvMap task = step_env;
        apply_changes(task, task_env(spank, rank, step_env, c.confined, openable));
        const auto& me = launch->assignments[static_cast<std::size_t>(rank)];
        const EnvMap rank_env =
            binding::narrow_env(step_env, node, launch->allotment.partitions[me.slot], c.confined);
        const auto want = visibility(rank_env);
        EXPECT_EQ(visibility(task), want);
        EXPECT_EQ(want.count("GPU_DEVICE_ORDINAL"), 1u);
        EXPECT_EQ(want.count("XPART_PARTITION"), 1u);
    }
}

INSTANTIATE_TEST_SUITE_P(Steps, FrontEnds, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace xpart::spank
