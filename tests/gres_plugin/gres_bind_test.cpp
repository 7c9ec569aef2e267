// The task's device set, one row per binding mode: what Slurm 22.05's device constraint gives
// the task's cgroup, from what the task sees (SLURMD_TRES_BIND, SLURM_LOCALID, the set Slurm
// hands task_set_env, its CPU mask). Rows marked "seen" were observed on a real slurmd.
#include <gtest/gtest.h>

#include "libxpart/gres/gres_bind.hpp"

namespace xpart {
namespace {

using Kind = TaskDevices::Kind;
using Ids = std::vector<int>;

constexpr unsigned kNodeCpus = 4;
const std::vector<unsigned> kAllCpus = {0, 1, 2, 3};
const Ids kAlloc = {1, 2, 4, 5, 7};  // not a prefix of the node

// 0-2 near CPUs 0,1; 3-5 near 2,3; 6 near CPU 8 (beyond the node's 4: near every CPU); 7 near 3.
std::vector<GresRecord> records(std::size_t n) {
    std::vector<GresRecord> out(n);
    for (std::size_t i = 0; i < n; ++i)
        out[i].cpus = i < 3 ? std::vector<unsigned>{0, 1}
                    : i < 6 ? std::vector<unsigned>{2, 3}
                    : i == 6 ? std::vector<unsigned>{8} : std::vector<unsigned>{3};
    return out;
}

std::vector<bool> bits(const Ids& ids, std::size_t size) {
    std::vector<bool> out(size, false);
    for (int i : ids) out[static_cast<std::size_t>(i)] = true;
    return out;
}

struct BindCase {
    const char* name;
    std::optional<std::string> tres;   // SLURMD_TRES_BIND
    unsigned task;                     // SLURM_LOCALID
    std::optional<Ids> slurm;          // Slurm's set for task_set_env (its numbering)
    Kind kind;
    Ids want;                          // Devices: the task's records
    std::optional<std::vector<unsigned>> cpus = kAllCpus;  // nullopt: unreadable
    Ids alloc = kAlloc;
    bool constrain = true;
    std::size_t size = 8;
    std::string task_plugins = "task/cgroup,task/affinity";
};

BindCase with_cpus(BindCase c, std::vector<unsigned> cpus) {
    c.cpus = std::move(cpus);
    return c;
}
BindCase unreadable_cpus(BindCase c) {
    c.cpus.reset();
    return c;
}
BindCase with_alloc(BindCase c, Ids alloc, std::size_t size = 8) {
    c.alloc = std::move(alloc);
    c.size = size;
    return c;
}
BindCase unconstrained(BindCase c) {
    c.constrain = false;
    return c;
}
BindCase with_task_plugins(BindCase c, std::string plugins) {
    c.task_plugins = std::move(plugins);
    return c;
}
Ids first(int n) {
    Ids out;
    for (int i = 0; i < n; ++i) out.push_back(i);
    return out;
}

class TaskDevicesTest : public ::testing::TestWithParam<BindCase> {};

TEST_P(TaskDevicesTest, AsSlurmsDeviceConstraint) {
    const BindCase& c = GetParam();
    TaskBinding t;
    t.tres_bind = c.tres;
    t.local_id = std::to_string(c.task);
    if (c.slurm) t.slurm_set = bits(*c.slurm, c.size);
    t.cpus = c.cpus;
    t.task_plugins = c.task_plugins;
    t.node_cpus = kNodeCpus;
    TaskDevices d = task_devices(records(c.size), bits(c.alloc, c.size), c.constrain, t);
    EXPECT_EQ(d.kind, c.kind) << d.reason;
    if (c.kind == Kind::Devices) {
        EXPECT_EQ(d.devices, bits(c.want, c.size));
    }
    EXPECT_EQ(d.reason.empty(), c.kind != Kind::Unknown) << d.reason;
}

const char* kMap20 = "gpu:map_gpu:2,0";

INSTANTIATE_TEST_SUITE_P(
    Modes, TaskDevicesTest,
    ::testing::Values(
        // none: Slurm hands no set (--gpu-bind=none; per_task of a type, "cpx:1", reads 0).
        BindCase{"none", "gpu:none", 1, std::nullopt, Kind::StepSet, {}},
        BindCase{"typed_per_task_reading_zero", "gpu:per_task:cpx:1",
                 1, std::nullopt, Kind::StepSet, {}},
        // per_task:N: the allocated GPUs in order, N each; Slurm's own set is always 0..N-1.
        BindCase{"per_task_first", "gpu:per_task:1", 0, Ids{0}, Kind::Devices, {1}},
        BindCase{"per_task_fourth", "gpu:per_task:1", 3, Ids{0}, Kind::Devices, {5}},
        BindCase{"per_task_two", "gpu:per_task:2", 1, Ids{0, 1}, Kind::Devices, {4, 5}},
        BindCase{"per_task_short", "gpu:per_task:2", 2, Ids{0, 1}, Kind::Devices, {7}},
        BindCase{"per_task_beyond_first_device", "gpu:per_task:1", 5, Ids{0}, Kind::Devices, {1}},
        unconstrained(BindCase{"per_task_unconstrained", "gpu:per_task:1",
                               1, Ids{2}, Kind::Devices, {2}}),
        // Typed --gpus-per-task: Slurm reads the leading digits (seen: task 0 gets two, task 1
        // the first device), "1g.5gb:1" happens to read 1.
        with_alloc(BindCase{"typed_2g_task0", "gpu:per_task:2g.10gb:1",
                            0, Ids{0, 1}, Kind::Devices, {1, 2}}, {1, 2}),
        with_alloc(BindCase{"typed_2g_task1_first_device", "gpu:per_task:2g.10gb:1",
                            1, Ids{0, 1}, Kind::Devices, {1}}, {1, 2}),
        BindCase{"typed_1g_task1", "gpu:per_task:1g.5gb:1", 1, Ids{0}, Kind::Devices, {2}},
        // map_gpu: positions in the allocation under ConstrainDevices; Slurm's own set reads
        // them as node indices, which is why it cannot be used.
        BindCase{"map_task0", kMap20, 0, Ids{0}, Kind::Devices, {4}},
        BindCase{"map_task1", kMap20, 1, Ids{0}, Kind::Devices, {1}},
        BindCase{"map_wraps", kMap20, 2, Ids{0}, Kind::Devices, {4}},
        BindCase{"map_repeat_verbose", "gpu:verbose,map_gpu:1*2,3", 1, Ids{0}, Kind::Devices, {2}},
        BindCase{"map_after_repeat", "gpu:map_gpu:1*2,3", 2, Ids{0}, Kind::Devices, {5}},
        BindCase{"map_leading_zero", "gpu:map_gpu:03", 0, Ids{0}, Kind::Devices, {5}},
        BindCase{"map_beyond_allocation", "gpu:map_gpu:6", 0, Ids{0}, Kind::Devices, {1}},
        BindCase{"map_beyond_node", "gpu:map_gpu:9", 0, Ids{0}, Kind::Devices, {1}},
        unconstrained(BindCase{"map_unconstrained", "gpu:map_gpu:4",
                               0, Ids{4}, Kind::Devices, {4}}),
        unconstrained(BindCase{"map_unconstrained_not_allocated", "gpu:map_gpu:3",
                               0, Ids{1}, Kind::Devices, {1}}),
        BindCase{"map_large_task_id", "gpu:map_gpu:0,1,2", 10001, Ids{0}, Kind::Devices, {4}},
        // mask_gpu: bits of positions in the allocation.
        BindCase{"mask_two", "gpu:mask_gpu:0x6", 0, Ids{0, 1}, Kind::Devices, {2, 4}},
        BindCase{"mask_second_entry", "gpu:mask_gpu:0x1*2,0x10", 2, Ids{0}, Kind::Devices, {7}},
        BindCase{"mask_beyond_allocation", "gpu:mask_gpu:0x40", 0, Ids{0}, Kind::Devices, {1}},
        // 64 GPUs (seen on the 64-XCP node): the bound ~(-1 << 64) is 0 on x86, every mask
        // is rejected and each task gets the first device.
        with_alloc(BindCase{"mask_64_gpus_rejected", "gpu:mask_gpu:0x1,0x2",
                            1, Ids{0}, Kind::Devices, {10}}, {10, 20}, 64),
        // 40 GPUs: bit 32 of the mask reads bit 0 of the value.
        with_alloc(BindCase{"mask_40_gpus_mirrors_bit_32", "gpu:mask_gpu:0x1",
                            0, Ids{0, 1}, Kind::Devices, {0, 32}},
                   first(40), 40),
        // closest: the allocated GPUs near the task's CPUs (seen: the mask after --cpu-bind).
        with_cpus(BindCase{"closest_cpu2", "gpu:closest",
                           0, Ids{0, 1}, Kind::Devices, {4, 5}}, {2}),
        with_cpus(BindCase{"closest_cpu0", "gpu:closest",
                           1, Ids{0, 1}, Kind::Devices, {1, 2}}, {0}),
        with_cpus(BindCase{"closest_cpu3", "gpu:closest",
                           0, Ids{0, 1, 2}, Kind::Devices, {4, 5, 7}}, {3}),
        BindCase{"closest_all_cpus", "gpu:closest",
                 0, Ids{0, 1, 2, 3, 4}, Kind::Devices, {1, 2, 4, 5, 7}},
        with_alloc(with_cpus(BindCase{"closest_none_near_first_device", "gpu:closest",
                                      0, Ids{0}, Kind::Devices, {4}}, {0}), {4, 5}),
        with_alloc(with_cpus(BindCase{"closest_record_beyond_node_cpus", "gpu:closest",
                                      0, Ids{0, 1, 2}, Kind::Devices, {1, 2, 6}}, {0}),
                   {1, 2, 4, 6}),
        unconstrained(with_cpus(BindCase{"closest_unconstrained", "gpu:closest",
                                         0, Ids{4, 5}, Kind::Devices, {4, 5}}, {2})),
        // single:N (--ntasks-per-gpu=N): N tasks per near GPU, in order.
        with_cpus(BindCase{"single_1_task1", "gpu:single:1",
                           1, Ids{0}, Kind::Devices, {5}}, {2, 3}),
        BindCase{"single_2_task3", "gpu:single:2", 3, Ids{0}, Kind::Devices, {2}},
        BindCase{"ntasks_per_gpu_2_task4", "gpu:single:2", 4, Ids{0}, Kind::Devices, {4}},
        BindCase{"single_wraps", "gpu:single:1", 6, Ids{0}, Kind::Devices, {2}},
        BindCase{"single_0_reads_1", "gpu:single:0", 1, Ids{0}, Kind::Devices, {2}},
        with_alloc(with_cpus(BindCase{"single_none_near_first_device", "gpu:single:1",
                                      1, Ids{0}, Kind::Devices, {4}}, {0}), {4, 5}),
        // --accel-bind=g: no SLURMD_TRES_BIND, Slurm binds to the closest GPUs.
        with_cpus(BindCase{"accel_bind_closest", std::nullopt,
                           0, Ids{0, 1}, Kind::Devices, {4, 5}}, {2}),
        // --accel-bind=g beside --gpu-bind: Slurm's set is not what SLURMD_TRES_BIND gives.
        with_cpus(BindCase{"accel_bind_overrides_map", "gpu:map_gpu:0",
                           0, Ids{0, 1}, Kind::Unknown, {}}, {2}),
        // Cannot be determined.
        unreadable_cpus(BindCase{"closest_mask_unreadable", "gpu:closest",
                                 0, Ids{0}, Kind::Unknown, {}}),
        with_task_plugins(BindCase{"closest_other_task_plugin", "gpu:closest",
                                   0, Ids{0, 1, 2, 3, 4}, Kind::Unknown, {}},
                          "task/cgroup,task/cray_aries"),
        BindCase{"map_empty_list", "gpu:map_gpu:", 0, Ids{0}, Kind::Unknown, {}},
        BindCase{"map_negative_repeat", "gpu:map_gpu:1*-1", 0, Ids{0}, Kind::Unknown, {}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(TaskDevices, NoTaskIndexIsUnknown) {
    TaskBinding t;
    t.tres_bind = "gpu:per_task:1";
    t.slurm_set = bits({0}, 8);
    TaskDevices d = task_devices(records(8), bits(kAlloc, 8), true, t);
    EXPECT_EQ(d.kind, Kind::Unknown);
    EXPECT_NE(d.reason.find("SLURM_LOCALID"), std::string::npos) << d.reason;
}

TEST(TaskDevices, NothingAllocatedIsTheStepSet) {
    TaskBinding t;
    t.tres_bind = "gpu:per_task:1";
    t.local_id = "0";
    t.slurm_set = bits({}, 8);
    EXPECT_EQ(task_devices(records(8), bits({}, 8), true, t).kind, Kind::StepSet);
}

// A series whose per-task rule is not modelled (24.11): under ConstrainDevices the task's set
// is what its own constraint lets it open (only the files that tell records apart are
// probed), checked against the size of Slurm's set; unconstrained, Slurm's set is in node
// numbering and is taken as it is; --gpu-bind=none is the step's set.
TEST(TaskDevices, UnmodelledSeriesReadsTheTasksConstraint) {
    struct Row {
        const char* name;
        bool constrain;
        Ids openable;    // records whose own files the task may open
        Ids slurm_set;   // what Slurm passed (local numbering when constrained)
        const char* tres_bind;
        Kind want;
        Ids want_devices;
    };
    // kAlloc's records: the probe must name them, whatever Slurm's numbering says.
    const Row rows[] = {
        {"constrained, one openable", true, {kAlloc[1]}, {0}, "gres/gpu:single:1", Kind::Devices, {kAlloc[1]}},
        {"constrained, two openable", true, {kAlloc[0], kAlloc[2]}, {0, 1}, "gres/gpu:per_task:2", Kind::Devices, {kAlloc[0], kAlloc[2]}},
        {"constrained, count differs", true, {kAlloc[0], kAlloc[1]}, {0}, "gres/gpu:closest", Kind::Unknown, {}},
        {"constrained, none openable", true, {}, {0}, "gres/gpu:map_gpu:0", Kind::Unknown, {}},
        {"unconstrained: Slurm's set", false, {}, {kAlloc[2]}, "gres/gpu:map_gpu:2", Kind::Devices, {kAlloc[2]}},
        {"--gpu-bind=none", true, {}, {0, 1, 2}, "gres/gpu:none", Kind::StepSet, {}},
    };
    auto recs = records(8);
    for (std::size_t i = 0; i < recs.size(); ++i)  // a shared control file and one of its own
        recs[i].files = {DeviceFile{"/dev/nvidiactl", 195, 255, true},
                         DeviceFile{"/dev/nvidia-caps/nvidia-cap" + std::to_string(i), 237, unsigned(i), false}};
    for (const Row& r : rows) {
        TaskBinding t;
        t.tres_bind = r.tres_bind;
        t.local_id = "1";
        t.slurm_set = bits(r.slurm_set, 8);
        t.slurm_rule_modelled = false;
        std::vector<std::string> probed;
        t.can_open = [&](const std::string& path) {
            probed.push_back(path);
            for (int i : r.openable)
                for (const auto& f : recs[i].files)
                    if (f.path == path) return true;
            return false;
        };
        TaskDevices d = task_devices(recs, bits(kAlloc, 8), r.constrain, t);
        EXPECT_EQ(d.kind, r.want) << r.name;
        if (r.want == Kind::Devices) {
            EXPECT_EQ(d.devices, bits(r.want_devices, 8)) << r.name;
        }
        if (r.want == Kind::Unknown) {
            EXPECT_NE(d.reason.find("task 1: "), std::string::npos) << d.reason;
        }
        if (!r.constrain) {
            EXPECT_TRUE(probed.empty()) << r.name << ": probed without a constraint";
        }
        for (const auto& path : probed) EXPECT_NE(path, "/dev/nvidiactl") << r.name << ": probed a shared file";
    }
    TaskBinding no_probe;  // constrained, but nothing to read the constraint with
    no_probe.tres_bind = "gres/gpu:single:1";
    no_probe.local_id = "0";
    no_probe.slurm_set = bits({0}, 8);
    no_probe.slurm_rule_modelled = false;
    EXPECT_EQ(task_devices(recs, bits(kAlloc, 8), true, no_probe).kind, Kind::Unknown);
}

}  // namespace
}  // namespace xpart
