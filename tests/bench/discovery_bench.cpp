#include "tests/bench/discovery_bench.hpp"

#include <map>
#include <memory>

#include "tests/nvidia_sim_root.hpp"

namespace xpart::bench {

void run_discovery(benchmark::State& state, const std::string& spec, DiscoverySelection which) {
    // One root per spec for the whole process: building it is not what is measured.
    static std::map<std::string, std::unique_ptr<testing::SimRoot>> roots;
    auto& root = roots[spec];
    if (!root) root = std::make_unique<testing::SimRoot>(testing::read_text(testing::spec_file(spec)));
    if (!root->error().empty()) {
        state.SkipWithError(root->error().c_str());
        return;
    }
    DiscoveryOptions options;
    options.root = RootFs(root->root());
    options.nvidia = which.nvidia;
    options.amd = which.amd;
    options.nvml_library = root->nvml_library();
    std::size_t partitions = 0;
    for (auto _ : state) {
        auto node = discover(options);
        if (!node.ok()) {
            state.SkipWithError(node.error().message.c_str());
            return;
        }
        partitions = node->partition_count();
        benchmark::DoNotOptimize(partitions);
    }
    state.counters["partitions"] = static_cast<double>(partitions);
}

void discovery_settings(benchmark::internal::Benchmark* b) {
    b->Repetitions(10)->ReportAggregatesOnly(true)->Unit(benchmark::kMicrosecond);
}

}  // namespace xpart::bench

namespace {

// The guide's 8 x A100-SXM4-40GB node: 26 MIG devices, NVML (fake) + procfs cross-checks.
void BM_DiscoverNvidiaA100Guide(benchmark::State& state) {
    xpart::bench::run_discovery(state, "a100-guide", {/*nvidia=*/true, /*amd=*/false});
}
BENCHMARK(BM_DiscoverNvidiaA100Guide)->Apply(xpart::bench::discovery_settings);

}  // namespace

BENCHMARK_MAIN();
