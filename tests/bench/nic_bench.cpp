// What NIC selection costs, on the DGX-A100-like node (sim/specs/dgx-a100-nic.json: 8 GPUs
// x 7 MIG devices, 10 RDMA NICs behind 4 switches):
//   NicTaskBind/interleaved: the SPANK plugin's bind work for one 8-task step, per task, with
//     --xpart-nic=closest against without, alternated in random order every iteration so
//     machine noise hits both: plan_step (reads the node cache) once per step plus task_env
//     per task, divided by the tasks. Counters: each side's median (us per task), the ratio
//     of medians and its bootstrap 95% confidence interval. Confinement
//     (a cgroup per task, root) is left out: it costs far more and does not change with it.
//   Discovery/rdma_nics={0,1}: full discover() of the node without and with the NIC part
//     (what slurmd pays once at start).
// Run: XPART_BUILDDIR=_build _build/tests/bench/nic_bench --benchmark_min_time=2
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "spank_plugin/step_plan.hpp"
#include "libxpart/discovery.hpp"
#include "libxpart/node_cache.hpp"
#include "tests/nvidia_sim_root.hpp"

namespace {

using namespace xpart;
using Clock = std::chrono::steady_clock;

constexpr int kTasks = 8;

const testing::SimRoot& dgx_root() {
    static testing::SimRoot root(testing::read_text(testing::spec_file("dgx-a100-nic")));
    return root;
}

// The gres plugin's view: the node cache under the root, written once.
bool write_cache(const testing::SimRoot& r) {
    auto node = discover(r.discovery_options());
    return node.ok() && !node->nics.empty() && write_node_cache(RootFs(r.root()), *node).ok();
}

// One step holding the first MIG device of every GPU (records 0, 7, 14, ...).
EnvMap step_env(const Node& node) {
    EnvMap env{{"PATH", "/usr/bin:/bin"}, {"HOME", "/home/u"}, {"SLURM_JOB_ID", "42"}};
    std::string records, uuids;
    std::size_t record = 0;
    for (const Gpu& g : node.gpus) {
        records += (records.empty() ? "" : ",") + std::to_string(record);
        uuids += (uuids.empty() ? "" : ",") + g.partitions.front().uuid;
        record += g.partitions.size();
    }
    env["SLURM_STEP_GPUS"] = records;
    env["CUDA_VISIBLE_DEVICES"] = uuids;
    return env;
}

// Seconds per task for planning one step and computing every task's environment.
double bind_step(const RootFs& root, const EnvMap& env, binding::NicBind nic) {
    const binding::DeviceOpenable any = [](const DeviceFile&) { return true; };
    const auto t0 = Clock::now();
    auto plan = spank::plan_step(root, env, kTasks, spank::StepBind::Rank);
    if (!plan.ok()) std::abort();  // a failing plan is no timing
    plan->nic = nic;
    std::size_t changes = 0;
    for (int t = 0; t < kTasks; ++t) changes += spank::task_env(*plan, t, env, true, any).size();
    benchmark::DoNotOptimize(changes);
    return std::chrono::duration<double>(Clock::now() - t0).count() / kTasks;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

void BM_NicTaskBind(benchmark::State& state) {
    const auto& r = dgx_root();
    if (!r.error().empty() || !write_cache(r)) {
        state.SkipWithError("cannot build the dgx-a100-nic node and its cache");
        return;
    }
    const RootFs root(r.root());
    auto node = discover(r.discovery_options());
    const EnvMap env = step_env(*node);
    // The environment really names each task's NIC with closest, and none without.
    auto check = spank::plan_step(root, env, kTasks, spank::StepBind::Rank);
    check->nic = binding::NicBind::Closest;
    bool named = false;
    const binding::DeviceOpenable any = [](const DeviceFile&) { return true; };
    for (const auto& c : spank::task_env(*check, 0, env, true, any))
        named |= c.name == "NCCL_IB_HCA";
    if (!named) {
        state.SkipWithError("closest did not set NCCL_IB_HCA");
        return;
    }
    std::mt19937 order(12345);
    std::vector<double> without, with;
    for (auto _ : state) {
        double a = 0, b = 0;
        if (order() & 1) {
            a = bind_step(root, env, binding::NicBind::None);
            b = bind_step(root, env, binding::NicBind::Closest);
        } else {
            b = bind_step(root, env, binding::NicBind::Closest);
            a = bind_step(root, env, binding::NicBind::None);
        }
        without.push_back(a);
        with.push_back(b);
        state.SetIterationTime(a + b);
    }
    // Bootstrap 95% CI of the ratio of medians: resample the iterations (pairs) 400 times.
    std::vector<double> boot, a(without.size()), b(with.size());
    std::uniform_int_distribution<std::size_t> pick(0, without.size() - 1);
    for (int k = 0; k < 400 && !without.empty(); ++k) {
        for (std::size_t i = 0; i < a.size(); ++i) {
            const std::size_t at = pick(order);
            a[i] = without[at];
            b[i] = with[at];
        }
        boot.push_back(median(b) / median(a));
    }
    std::sort(boot.begin(), boot.end());
    const auto pct = [&](double p) { return boot.empty() ? 0 : boot[static_cast<std::size_t>(p * (boot.size() - 1))]; };
    state.counters["none_us"] = median(without) * 1e6;
    state.counters["closest_us"] = median(with) * 1e6;
    state.counters["ratio"] = median(with) / median(without);
    state.counters["ratio_ci_lo"] = pct(0.025);
    state.counters["ratio_ci_hi"] = pct(0.975);
}
BENCHMARK(BM_NicTaskBind)->Name("NicTaskBind/interleaved")->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_Discovery(benchmark::State& state) {
    const auto& r = dgx_root();
    if (!r.error().empty()) {
        state.SkipWithError(r.error().c_str());
        return;
    }
    DiscoveryOptions o = r.discovery_options();
    o.rdma_nics = state.range(0) != 0;
    for (auto _ : state) {
        auto node = discover(o);
        if (!node.ok()) {
            state.SkipWithError(node.error().message.c_str());
            return;
        }
        benchmark::DoNotOptimize(node->nics.size());
    }
}
BENCHMARK(BM_Discovery)->Name("Discovery")->ArgName("rdma_nics")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
