// Mapping policies on a recorded DGX-A100-shaped hwloc topology (2 NUMA nodes, 8 GPUs).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "binding/rank_plan.hpp"
#include "libxpart/text.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart::binding {
namespace {

using fixtures::dgx_a100;
using fixtures::mig_uuid;

std::string topology_dir() {
    const char* src = std::getenv("XPART_SRCDIR");
    return std::string(src ? src : "..") + "/tests/binding/topologies";
}

const Topology& dgx_topology() {
    static Topology t = [] {
        auto r = Topology::load(topology_dir() + "/dgx-a100.xml", "/");
        if (!r) {
            ADD_FAILURE() << r.error().message;
            std::abort();
        }
        return std::move(*r);
    }();
    return t;
}

// CUDA_VISIBLE_DEVICES naming the first partition of each GPU in `gpus`, in that order.
Allotment allot(const Node& node, const std::vector<int>& gpus, int per_gpu = 1) {
    std::string list;
    for (int g : gpus)
        for (int p = 0; p < per_gpu; ++p) list += (list.empty() ? "" : ",") + mig_uuid(g, 7 + p);
    auto a = resolve_allotment(node, {{"CUDA_VISIBLE_DEVICES", list}},
                               [](const DeviceFile&) { return true; });
    EXPECT_TRUE(a.ok()) << a.error().message;
    return a.ok() ? *a : Allotment{};
}

struct PlanCase {
    const char* name;
    std::vector<int> gpus;  // allotted GPUs, environment order
    int per_gpu;
    int ranks;
    BindPolicy bind;
    std::vector<int> explicit_map;
    std::vector<unsigned> allowed;
    // Expected per local rank: GPU index, sharers, CPU list ("" = unbound).
    std::vector<std::tuple<int, int, std::string>> expect;
};

class PlanTest : public ::testing::TestWithParam<PlanCase> {};

TEST_P(PlanTest, Maps) {
    const PlanCase& c = GetParam();
    Node node = dgx_a100(8, c.per_gpu);
    MapOptions options;
    options.bind = c.bind;
    options.explicit_map = c.explicit_map;
    options.allowed_cpus = c.allowed.empty() ? dgx_topology().allowed_cpus() : c.allowed;
    auto plan = plan_node(node, allot(node, c.gpus, c.per_gpu), &dgx_topology(), c.ranks, options);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    ASSERT_EQ(plan->assignments.size(), c.expect.size());
    for (std::size_t r = 0; r < c.expect.size(); ++r) {
        const auto& a = plan->assignments[r];
        EXPECT_EQ(plan->allotment.partitions[a.slot].gpu, static_cast<std::size_t>(std::get<0>(c.expect[r])))
            << "rank " << r;
        EXPECT_EQ(a.sharers, std::get<1>(c.expect[r])) << "rank " << r;
        EXPECT_EQ(format_cpu_list(a.cpus), std::get<2>(c.expect[r])) << "rank " << r;
    }
}

const std::vector<int> kAll = {0, 1, 2, 3, 4, 5, 6, 7};
const std::vector<int> kShuffled = {7, 0, 6, 1, 5, 2, 4, 3};

const PlanCase kCases[] = {
    {"one_per_rank_env_order", kShuffled, 1, 8, BindPolicy::None, {}, {},
     {{7, 1, ""}, {0, 1, ""}, {6, 1, ""}, {1, 1, ""}, {5, 1, ""}, {2, 1, ""}, {4, 1, ""}, {3, 1, ""}}},
    {"closest_groups_by_numa_and_pins", kShuffled, 1, 8, BindPolicy::Closest, {}, {},
     {{0, 1, "0-3"}, {1, 1, "4-7"}, {2, 1, "8-11"}, {3, 1, "12-15"},
      {4, 1, "16-19"}, {5, 1, "20-23"}, {6, 1, "24-27"}, {7, 1, "28-31"}}},
    {"closest_two_ranks_use_both_sockets", kAll, 1, 2, BindPolicy::Closest, {}, {},
     {{0, 1, "0-15"}, {4, 1, "16-31"}}},
    {"closest_three_ranks_largest_remainder", kAll, 1, 3, BindPolicy::Closest, {}, {},
     {{0, 1, "0-7"}, {1, 1, "8-15"}, {4, 1, "16-31"}}},
    {"closest_two_per_partition", kAll, 1, 16, BindPolicy::Closest, {}, {},
     {{0, 2, "0-1"}, {0, 2, "2-3"}, {1, 2, "4-5"}, {1, 2, "6-7"},
      {2, 2, "8-9"}, {2, 2, "10-11"}, {3, 2, "12-13"}, {3, 2, "14-15"},
      {4, 2, "16-17"}, {4, 2, "18-19"}, {5, 2, "20-21"}, {5, 2, "22-23"},
      {6, 2, "24-25"}, {6, 2, "26-27"}, {7, 2, "28-29"}, {7, 2, "30-31"}}},
    {"more_ranks_than_partitions_block", {0, 4, 5}, 1, 8, BindPolicy::None, {}, {},
     {{0, 3, ""}, {0, 3, ""}, {0, 3, ""}, {4, 3, ""}, {4, 3, ""}, {4, 3, ""}, {5, 2, ""}, {5, 2, ""}}},
    {"closest_respects_allowed_cpus", kAll, 1, 2, BindPolicy::Closest, {},
     {0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19},
     {{0, 1, "0-7"}, {4, 1, "16-19"}}},
    {"explicit_map_shares", kAll, 1, 4, BindPolicy::None, {5, 5, 0, 2}, {},
     {{5, 2, ""}, {5, 2, ""}, {0, 1, ""}, {2, 1, ""}}},
    {"seven_instances_one_gpu_closest", {0}, 7, 7, BindPolicy::Closest, {}, {},
     {{0, 1, "0-1"}, {0, 1, "2-3"}, {0, 1, "4-5"}, {0, 1, "6-8"}, {0, 1, "9-10"},
      {0, 1, "11-12"}, {0, 1, "13-15"}}},
};

INSTANTIATE_TEST_SUITE_P(Dgx, PlanTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(MappingTest, ExplicitMapErrors) {
    std::vector<Slot> slots(3);
    MapOptions o;
    o.explicit_map = {0, 1};
    auto short_map = map_ranks(slots, 3, o);
    ASSERT_FALSE(short_map.ok());
    EXPECT_EQ(short_map.error().message, "--map has 2 entries for 3 local ranks");
    o.explicit_map = {0, 3, 1};
    auto past = map_ranks(slots, 3, o);
    ASSERT_FALSE(past.ok());
    EXPECT_EQ(past.error().message, "--map entry 1 is 3, but only 3 partitions are allotted");
    EXPECT_FALSE(map_ranks({}, 1, MapOptions{}).ok());
}

TEST(MappingTest, ParseRankMap) {
    auto ok = parse_rank_map("0,2, 1");
    ASSERT_TRUE(ok.ok());
    EXPECT_EQ(*ok, (std::vector<int>{0, 2, 1}));
    for (const char* bad : {"", "0,,1", "a", "-1", "1,2x"}) {
        auto r = parse_rank_map(bad);
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_NE(r.error().message.find("--map='"), std::string::npos);
    }
}

TEST(TopologyTest, LocalityFromXmlNotDiscovery) {
    Node node = dgx_a100(8, 1);
    auto with = plan_node(node, allot(node, {0, 5}), &dgx_topology(), 2, MapOptions{});
    ASSERT_TRUE(with.ok());
    EXPECT_EQ(with->slots[0].numa_node, 0);
    EXPECT_EQ(with->slots[1].numa_node, 1);
    EXPECT_EQ(format_cpu_list(with->slots[1].cpus), "16-31");
    auto without = plan_node(node, allot(node, {0, 5}), nullptr, 2, MapOptions{});
    ASSERT_TRUE(without.ok());
    EXPECT_EQ(without->slots[0].numa_node, 9);  // discovery's (deliberately different) view
    EXPECT_FALSE(dgx_topology().is_this_system());
}

TEST(TopologyTest, Errors) {
    auto missing = dgx_topology().locality_of("0000:99:00.0");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().message, "hwloc topology has no PCI device 0000:99:00.0");
    EXPECT_FALSE(dgx_topology().locality_of("07:00.0:x").ok());
    auto bad = Topology::load("/nonexistent/topo.xml", "/");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("/nonexistent/topo.xml"), std::string::npos);
    auto junk = Topology::load_xml_buffer("<topology>not hwloc");
    EXPECT_FALSE(junk.ok());
}

// What `load` writes on standard error (hwloc's warnings go there).
std::string stderr_of(const std::function<void()>& f) {
    std::fflush(stderr);
    FILE* tmp = std::tmpfile();
    const int saved = dup(2);
    dup2(fileno(tmp), 2);
    f();
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::rewind(tmp);
    std::string text;
    for (int c; (c = std::fgetc(tmp)) != EOF;) text += static_cast<char>(c);
    std::fclose(tmp);
    return text;
}

// A root prefix (a recorded or simulated node) is read through hwloc's fsroot: hwloc then
// treats the topology as another machine's, so nothing is ever bound from it. The root has
// the sysfs CPU topology of a real node (one CPU here); without it hwloc warns "failed to
// find sysfs cpu topology directory" and gives up on the root's CPUs.
TEST(TopologyTest, RootPrefixIsAnotherMachine) {
    char tmpl[] = "/tmp/xpt-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string root = tmpl;
    const std::string cpu = root + "/sys/devices/system/cpu";
    std::filesystem::create_directories(cpu + "/cpu0/topology");
    std::filesystem::create_directories(root + "/proc");
    std::ofstream(cpu + "/online") << "0\n";
    for (const char* f : {"core_cpus", "package_cpus"}) std::ofstream(cpu + "/cpu0/topology/" + f) << "1\n";
    Result<Topology> t = Error{""};
    EXPECT_EQ(stderr_of([&] { t = Topology::load("", root); }), "");
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_FALSE(t->is_this_system());
    EXPECT_EQ(t->allowed_cpus(), std::vector<unsigned>{0});
    EXPECT_EQ(std::getenv("HWLOC_FSROOT"), nullptr) << "the override must not leak";
    std::filesystem::remove_all(root);
}

// A simulated node (xpart-sim): hwloc reads its CPUs, NUMA nodes and the GPUs' local_cpus
// without a word on stderr, and nothing of this machine (its CPUID caches) gets in. The same
// GPUs behind PCIe switches (dgx-a100-nic: bridges hwloc builds from their config space) are
// as near to the same CPUs.
class SimulatedTopologyTest : public ::testing::TestWithParam<const char*> {};
TEST_P(SimulatedTopologyTest, SimulatedNodeIsItsSpec) {
    const char* b = std::getenv("XPART_BUILDDIR");
    char tmpl[] = "/tmp/xpt-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string root = std::string(tmpl) + "/root";
    const std::string cmd = std::string(b ? b : ".") + "/xpart-sim build " +
                            std::string(std::getenv("XPART_SRCDIR") ? std::getenv("XPART_SRCDIR") : "..") +
                            "/sim/specs/" + GetParam() + ".json " + root + " >/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    Result<Topology> t = Error{""};
    EXPECT_EQ(stderr_of([&] { t = Topology::load("", root); }), "");
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_FALSE(t->is_this_system());
    EXPECT_EQ(t->allowed_cpus().size(), 256u);
    // GPU 0 of the guide's node is on NUMA node 0 (CPUs 0-63,128-191), GPU 6 on node 1.
    auto near0 = t->locality_of("0000:07:00.0");
    ASSERT_TRUE(near0.ok()) << near0.error().message;
    EXPECT_EQ(near0->numa_node, 0);
    EXPECT_EQ(format_cpu_list(near0->cpus), "0-63,128-191");
    auto near6 = t->locality_of("0000:87:00.0");
    ASSERT_TRUE(near6.ok()) << near6.error().message;
    EXPECT_EQ(near6->numa_node, 1);
    EXPECT_EQ(format_cpu_list(near6->cpus), "64-127,192-255");
    std::filesystem::remove_all(tmpl);
}
INSTANTIATE_TEST_SUITE_P(Specs, SimulatedTopologyTest, ::testing::Values("a100-guide", "dgx-a100-nic"),
                         [](const auto& info) {
                             std::string n = info.param;
                             for (char& c : n) if (c == '-') c = '_';
                             return n;
                         });

// Pinning to these CPUs: tests/binding/locality_test.cpp.
TEST(TopologyTest, ThisMachineIsThisSystem) {
    auto live = Topology::load("", "/");
    ASSERT_TRUE(live.ok()) << live.error().message;
    EXPECT_TRUE(live->is_this_system());
    EXPECT_FALSE(live->allowed_cpus().empty());
}

TEST(NarrowEnvTest, NvidiaGetsOneUuid) {
    Node node = dgx_a100(8, 2);
    EnvMap env{{"CUDA_VISIBLE_DEVICES", mig_uuid(0, 7) + "," + mig_uuid(3, 8)}, {"KEEP", "1"},
               {"GPU_DEVICE_ORDINAL", mig_uuid(0, 7) + "," + mig_uuid(3, 8)}, {"ROCR_VISIBLE_DEVICES", "0"}};
    EnvMap out = narrow_env(env, node, {3, 1, mig_uuid(3, 8)}, false);
    EXPECT_EQ(out["CUDA_VISIBLE_DEVICES"], mig_uuid(3, 8));
    EXPECT_EQ(out["GPU_DEVICE_ORDINAL"], mig_uuid(3, 8)) << "one device through every variable";
    EXPECT_EQ(out.count("ROCR_VISIBLE_DEVICES"), 0u);
    EXPECT_EQ(out["XPART_PARTITION"], mig_uuid(3, 8));
    EXPECT_EQ(out["KEEP"], "1");
}

TEST(NarrowEnvTest, AmdKeepsRocrTokenOrZeroWhenConfinedAndTheOrdinalSaysTheSame) {
    Node node = fixtures::mi300x_cpx_node();
    EnvMap env{{"ROCR_VISIBLE_DEVICES", "2,5"}, {"HIP_VISIBLE_DEVICES", "0,1"},
               {"GPU_DEVICE_ORDINAL", "0,1"}, {"CUDA_VISIBLE_DEVICES", "0,1"}};
    EnvMap shared = narrow_env(env, node, {0, 5, "5"}, false);
    EXPECT_EQ(shared["ROCR_VISIBLE_DEVICES"], "5");
    EXPECT_EQ(shared.count("HIP_VISIBLE_DEVICES"), 0u);
    EXPECT_EQ(shared["GPU_DEVICE_ORDINAL"], "5");
    EXPECT_EQ(shared.count("CUDA_VISIBLE_DEVICES"), 0u);
    EXPECT_EQ(shared["XPART_PARTITION"], fixtures::amd_gpu_uuid(0) + "/5");
    EnvMap confined = narrow_env(env, node, {0, 5, "5"}, true);
    EXPECT_EQ(confined["ROCR_VISIBLE_DEVICES"], "0");
    EXPECT_EQ(confined["GPU_DEVICE_ORDINAL"], "0");
}

TEST(VerboseLineTest, NamesEverything) {
    Node node = dgx_a100(8, 1);
    MapOptions o;
    o.bind = BindPolicy::Closest;
    o.allowed_cpus = dgx_topology().allowed_cpus();
    auto plan = plan_node(node, allot(node, kAll), &dgx_topology(), 16, o);
    ASSERT_TRUE(plan.ok());
    RankInfo rank{13, 16, 13, 16, "slurm"};
    EXPECT_EQ(verbose_line(node, rank, *plan),
              "xpart: rank 13 local 13/16 partition 6 1g.5gb " + mig_uuid(6, 7) +
                  " gpu 6 0000:b7:00.0 numa 1 cpus 26-27 shared-by 2");
}

}  // namespace
}  // namespace xpart::binding
