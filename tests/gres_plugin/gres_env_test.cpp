#include <gtest/gtest.h>

#include <map>

#include "libxpart/gres/gres_env.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart {
namespace {

// Records of fixtures::a100_80gb_mig_and_mi300x_node(): 0 3g.40gb (MIG ..01), 1 1g.10gb (..09),
// 2 1g.10gb (..10) near CPUs 0-7, 3 whole A100 near 8-15, 4..11 MI300X XCPs on KFD nodes 9..2
// (ROCm ranks 7..0) near 16-19.
const std::string kMig01 = "MIG-aaaaaaaa-0000-0000-0000-000000000001";
const std::string kMig09 = "MIG-aaaaaaaa-0000-0000-0000-000000000009";
const std::string kMig10 = "MIG-aaaaaaaa-0000-0000-0000-000000000010";
const char* kUnset = "<unset>";

struct EnvCase {
    const char* name;
    EnvScope scope;
    std::vector<int> alloc;
    std::optional<TaskBinding> task;
    bool constrain;
    AmdIndexMode mode;
    std::map<std::string, std::string> want;  // every variable the scope owns
    bool errors = false;
};

std::vector<bool> bits(const std::vector<int>& set) {
    std::vector<bool> out(12, false);
    for (int i : set) {
        if (static_cast<std::size_t>(i) >= out.size()) out.resize(i + 1, false);
        out[i] = true;
    }
    return out;
}

class GresEnv : public ::testing::TestWithParam<EnvCase> {};

TEST_P(GresEnv, SetsExactlyWhatStockAndRocmExpect) {
    const EnvCase& c = GetParam();
    EnvRequest req;
    req.scope = c.scope;
    req.alloc = c.alloc.empty() ? std::vector<bool>{} : bits(c.alloc);
    req.task = c.task;
    req.constrain_devices = c.constrain;
    req.amd_index_mode = c.mode;
    if (std::string(c.name) == "vanished_partition_binds_nothing")
        req.faults = {"gres/gpu index 0: gone"};
    auto records = gres_records(fixtures::a100_80gb_mig_and_mi300x_node(), RootFs("/"));
    EnvResult r = gres_env(records, req);

    std::map<std::string, std::string> got;
    for (const auto& ch : r.changes) {
        EXPECT_EQ(got.count(ch.name), 0u) << ch.name << " changed twice";
        got[ch.name] = ch.value ? *ch.value : kUnset;
    }
    EXPECT_EQ(got, c.want);
    EXPECT_EQ(!r.errors.empty(), c.errors);
}

// A task of a step bound by SLURMD_TRES_BIND; `slurm`: the set Slurm hands task_set_env.
TaskBinding task(std::optional<std::string> tres, unsigned id,
                 std::optional<std::vector<int>> slurm, std::vector<unsigned> cpus = {0, 8, 16}) {
    TaskBinding t;
    t.tres_bind = std::move(tres);
    t.local_id = std::to_string(id);
    if (slurm) t.slurm_set = bits(*slurm);
    t.cpus = std::move(cpus);
    t.task_plugins = "task/cgroup,task/affinity";
    t.node_cpus = 20;
    return t;
}

std::map<std::string, std::string> step(std::string on_node, std::string ids, std::string cuda,
                                        std::string rocr, std::string ordinal) {
    return {{"SLURM_GPUS_ON_NODE", on_node}, {"SLURM_STEP_GPUS", ids},
            {"CUDA_VISIBLE_DEVICES", cuda}, {"ROCR_VISIBLE_DEVICES", rocr},
            {"GPU_DEVICE_ORDINAL", ordinal}};
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GresEnv,
    ::testing::Values(
        EnvCase{"one_mig", EnvScope::Step, {1}, std::nullopt, true, AmdIndexMode::Index,
                step("1", "1", kMig09, kUnset, kMig09)},
        EnvCase{"job_two_migs", EnvScope::Job, {1, 2}, std::nullopt, true, AmdIndexMode::Index,
                {{"SLURM_GPUS_ON_NODE", "2"}, {"SLURM_JOB_GPUS", "1,2"},
                 {"CUDA_VISIBLE_DEVICES", kMig09 + "," + kMig10}, {"ROCR_VISIBLE_DEVICES", kUnset},
                 {"GPU_DEVICE_ORDINAL", kMig09 + "," + kMig10}}},
        EnvCase{"nothing_allocated_unsets_all", EnvScope::Step, {}, std::nullopt, true,
                AmdIndexMode::Index, step(kUnset, kUnset, kUnset, kUnset, kUnset)},
        EnvCase{"whole_gpu_by_uuid", EnvScope::Step, {3}, std::nullopt, false, AmdIndexMode::Index,
                step("1", "3", "GPU-11111111-1111-1111-1111-111111111111", kUnset,
                     "GPU-11111111-1111-1111-1111-111111111111")},
        // ROCm counts in KFD order among the render nodes the cgroup leaves open.
        EnvCase{"xcps_constrained_renumber", EnvScope::Step, {10, 11}, std::nullopt, true,
                AmdIndexMode::Index, step("2", "10,11", kUnset, "1,0", "0,1")},
        EnvCase{"xcps_unconstrained_count_all", EnvScope::Step, {10, 11}, std::nullopt, false,
                AmdIndexMode::Index, step("2", "10,11", kUnset, "1,0", "10,11")},
        EnvCase{"last_kfd_xcp_constrained", EnvScope::Step, {4}, std::nullopt, true,
                AmdIndexMode::Index, step("1", "4", kUnset, "0", "0")},
        EnvCase{"last_kfd_xcp_unconstrained", EnvScope::Step, {4}, std::nullopt, false,
                AmdIndexMode::Index, step("1", "4", kUnset, "7", "4")},
        EnvCase{"xcp_uuid_mode", EnvScope::Step, {4}, std::nullopt, true, AmdIndexMode::Uuid,
                step("1", "4", kUnset, "GPU-4f2e1c5a9b7d3e01", "0")},
        // Task scope: the task's own partitions, indices among what its cgroup leaves it.
        EnvCase{"task_per_task_xcp", EnvScope::Task, {4, 5, 6, 7}, task("gpu:per_task:1", 1, {{0}}),
                true, AmdIndexMode::Index, step("4", "5", kUnset, "0", "0")},
        EnvCase{"task_per_task_xcp_uuid", EnvScope::Task, {4, 5, 6, 7},
                task("gpu:per_task:1", 1, {{0}}), true, AmdIndexMode::Uuid,
                step("4", "5", kUnset, "GPU-4f2e1c5a9b7d3e01", "0")},
        EnvCase{"task_unconstrained_sees_all", EnvScope::Task, {4, 5, 6, 7},
                task("gpu:per_task:1", 1, {{5}}), false, AmdIndexMode::Index,
                step("4", "5", kUnset, "6", "5")},
        EnvCase{"task_per_task_mig", EnvScope::Task, {0, 1, 2}, task("gpu:per_task:1", 2, {{0}}),
                true, AmdIndexMode::Index, step("3", "2", kMig10, kUnset, kMig10)},
        EnvCase{"task_map_mig", EnvScope::Task, {0, 1, 2}, task("gpu:map_gpu:2,0", 0, {{0}}), true,
                AmdIndexMode::Index, step("3", "2", kMig10, kUnset, kMig10)},
        EnvCase{"task_mask_mig", EnvScope::Task, {0, 1, 2}, task("gpu:mask_gpu:0x5", 0, {{0, 1}}),
                true, AmdIndexMode::Index,
                step("3", "0,2", kMig01 + "," + kMig10, kUnset, kMig01 + "," + kMig10)},
        EnvCase{"task_closest_not_first", EnvScope::Task, {1, 3, 4},
                task("gpu:closest", 1, {{0}}, {8}), true, AmdIndexMode::Index,
                step("3", "3", "GPU-11111111-1111-1111-1111-111111111111", kUnset,
                     "GPU-11111111-1111-1111-1111-111111111111")},
        EnvCase{"task_ntasks_per_gpu_xcp", EnvScope::Task, {2, 10, 11},
                task("gpu:single:1", 1, {{0}}, {16, 17}), true, AmdIndexMode::Index,
                step("3", "11", kUnset, "0", "0")},
        EnvCase{"task_ntasks_per_gpu_xcp_uuid", EnvScope::Task, {2, 10, 11},
                task("gpu:single:1", 1, {{0}}, {16, 17}), true, AmdIndexMode::Uuid,
                step("3", "11", kUnset, "GPU-4f2e1c5a9b7d3e01", "0")},
        // Typed --gpus-per-task=2g.10gb:1: Slurm's cgroup gives task 1 the first device.
        EnvCase{"task_typed_per_task_as_slurm", EnvScope::Task, {1, 2},
                task("gpu:per_task:2g.10gb:1", 1, {{0, 1}}), true, AmdIndexMode::Index,
                step("2", "1", kMig09, kUnset, kMig09)},
        // per_task:cpx:1 reads 0 GPUs per task: no task binding, the step's variables.
        EnvCase{"task_without_binding_is_step", EnvScope::Task, {4, 5},
                task("gpu:per_task:cpx:1", 1, std::nullopt), true, AmdIndexMode::Index,
                step("2", "4,5", kUnset, "1,0", "0,1")},
        // --accel-bind=g beside --gpu-bind: the task's set cannot be determined.
        EnvCase{"task_unknown_binds_nothing", EnvScope::Task, {1, 2},
                task("gpu:map_gpu:0", 0, {{0, 1}}), true, AmdIndexMode::Index,
                step("2", "-1", "-1", "-1", "-1"), true},
        EnvCase{"mixed_vendors", EnvScope::Step, {0, 11}, std::nullopt, true, AmdIndexMode::Index,
                step("2", "0,11", kMig01, "0", kMig01 + ",1")},
        EnvCase{"allocation_beyond_records_binds_nothing", EnvScope::Step, {12}, std::nullopt,
                true, AmdIndexMode::Index, step("0", kUnset, "-1", "-1", "-1"), true},
        EnvCase{"vanished_partition_binds_nothing", EnvScope::Step, {0}, std::nullopt, true,
                AmdIndexMode::Index, step("1", "0", "-1", "-1", "-1"), true}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(EpilogEnv, NamesTheJobsPartitions) {
    auto records = gres_records(fixtures::a100_80gb_mig_and_mi300x_node(), RootFs("/"));
    std::vector<bool> alloc(12, false);
    alloc[1] = alloc[2] = alloc[11] = true;
    EnvResult r = epilog_env(records, alloc);
    std::map<std::string, std::string> got;
    for (const auto& ch : r.changes) got[ch.name] = ch.value ? *ch.value : kUnset;
    EXPECT_EQ(got, (std::map<std::string, std::string>{
                       {"SLURM_JOB_GPUS", "1,2,11"},
                       {"CUDA_VISIBLE_DEVICES", kMig09 + "," + kMig10},
                       {"XPART_PARTITION_UUIDS", kMig09 + "," + kMig10 + ",GPU-4f2e1c5a9b7d3e01"},
                       {"XPART_PARTITION_TYPES", "1g.10gb,1g.10gb,cpx"},
                       {"XPART_GPU_UUIDS",
                        "GPU-00000000-0000-0000-0000-000000000000,GPU-4f2e1c5a9b7d3e01"},
                       {"XPART_MIG_INSTANCES", "0:9:0,0:10:0"},
                       {"XPART_AMD_KFD_NODES", "2"}}));
    EXPECT_TRUE(r.errors.empty());
}

}  // namespace
}  // namespace xpart
