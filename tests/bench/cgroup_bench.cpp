// Time to apply a device rule set of 1, 8 and 64 MIG partitions (baseline included) to a
// cgroup with a process inside, on cgroup v1 and v2. Each iteration replaces the set with a
// disjoint one of the same size (the worst case: every rule changes). Needs root.
#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "cgroup/device_cgroup.hpp"
#include "cgroup/layout.hpp"

namespace {

using namespace xpart;
using namespace xpart::cgroup;

// Partitions [first, first+count) of a MIG node: nvidiaN, GI and CI caps, shared nvidiactl
// and monitor cap, plus the baseline.
DeviceRuleSet mig_rules(unsigned first, unsigned count, const std::vector<DeviceRule>& baseline) {
    DeviceRuleSet set;
    for (const auto& r : baseline) set.add_allow(r);
    const unsigned rw = kAccessRead | kAccessWrite;
    set.add_allow({DeviceType::Char, 195u, 255u, rw});
    set.add_allow({DeviceType::Char, 508u, 2u, rw});
    for (unsigned k = first; k < first + count; ++k) {
        set.add_allow({DeviceType::Char, 195u, k / 7, rw});
        set.add_allow({DeviceType::Char, 508u, 3 + 2 * k, rw});
        set.add_allow({DeviceType::Char, 508u, 4 + 2 * k, rw});
    }
    return set;
}

void BM_Apply(benchmark::State& state, Hierarchy h) {
    const unsigned partitions = static_cast<unsigned>(state.range(0));
    auto layout = detect_cgroup_layout(RootFs("/"));
    if (!layout || !layout->has(h)) {
        state.SkipWithError("hierarchy not mounted");
        return;
    }
    auto base = baseline_rules(RootFs("/"));
    if (!base) {
        state.SkipWithError(base.error().message.c_str());
        return;
    }
    const std::string name = "xpart_bench_" + std::to_string(::getpid()) + "_" + to_string(h) + "_" +
                             std::to_string(partitions);
    auto cg = DeviceCgroup::create(h, layout->own(h), name);
    if (!cg) {
        state.SkipWithError(cg.error().message.c_str());
        return;
    }
    const pid_t child = ::fork();
    if (child == 0) {
        ::pause();
        ::_exit(0);
    }
    const DeviceRuleSet sets[2] = {mig_rules(0, partitions, *base), mig_rules(partitions, partitions, *base)};
    bool ok = cg->move(child).ok();
    unsigned i = 0;
    for (auto _ : state) {
        if (!ok) break;
        Status st = cg->apply(sets[i++ % 2]);
        if (!st) {
            state.SkipWithError(st.error().message.c_str());
            break;
        }
    }
    state.counters["rules"] = static_cast<double>(sets[0].allow.size());
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    for (int attempt = 0; attempt < 100 && !cg->remove().ok(); ++attempt) ::usleep(5000);
}

BENCHMARK_CAPTURE(BM_Apply, v1, Hierarchy::V1)
    ->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->UseRealTime()->Repetitions(9)
    ->ReportAggregatesOnly(true);
BENCHMARK_CAPTURE(BM_Apply, v2, Hierarchy::V2)
    ->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->UseRealTime()->Repetitions(9)
    ->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
