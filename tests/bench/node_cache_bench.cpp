// The node cache write at slurmd start (issue #12), on the 8 x MI300X CPX node (64 XCPs, the
// discovery golden mi300x-cpx-8gpu), cache in tmpfs. Report the medians:
//   NodeText/nlohmann: to_json(node).dump(), the text the cache was written from before;
//   NodeText/direct: node_json_text(node), the text it is written from now (the same bytes);
//   WriteNodeCache/changed: write_node_cache over a file holding another node (text, compare,
//     temporary file, rename);
//   WriteNodeCache/unchanged: write_node_cache over a file that already holds the node (text
//     and one read).
// Run: XPART_SRCDIR=. _build/tests/bench/node_cache_bench
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "libxpart/node_cache.hpp"
#include "libxpart/node_json.hpp"
#include "libxpart/node_json_writer.hpp"
#include "tests/libxpart/amd_temp_root.hpp"

namespace {

using namespace xpart;

// The golden lives in the source tree: $XPART_SRCDIR, else next to this file as compiled.
const Node& cpx64_node() {
    static const Node node = [] {
        const char* src = std::getenv("XPART_SRCDIR");
        const std::string file(__FILE__);
        std::string dir = src && *src ? src : file.substr(0, file.rfind("tests/bench/"));
        std::ifstream in((dir.empty() ? "." : dir) + "/tests/libxpart/golden/mi300x-cpx-8gpu.json");
        std::stringstream text;
        text << in.rdbuf();
        auto parsed = node_from_json(nlohmann::json::parse(text.str(), nullptr, false));
        return parsed ? *parsed : Node{};
    }();
    return node;
}

void BM_NodeText(benchmark::State& state) {
    const Node& node = cpx64_node();
    if (node.partition_count() != 64) return state.SkipWithError("golden mi300x-cpx-8gpu missing");
    const bool direct = state.range(0) == 1;
    for (auto _ : state) {
        std::string text = direct ? node_json_text(node) : to_json(node).dump();
        benchmark::DoNotOptimize(text);
    }
    state.SetLabel(direct ? "direct" : "nlohmann");
}
BENCHMARK(BM_NodeText)->ArgName("direct")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)
    ->Repetitions(10)->ReportAggregatesOnly(true);

// Each iteration writes the node; "changed" puts the other node back first (not timed).
void BM_WriteNodeCache(benchmark::State& state) {
    const Node& node = cpx64_node();
    if (node.partition_count() != 64) return state.SkipWithError("golden mi300x-cpx-8gpu missing");
    const testing::TempRoot tmp;  // in tmpfs, like /run
    const RootFs root(tmp.path());
    Node other = node;
    other.warnings.push_back("changed");
    const bool changed = state.range(0) == 1;
    if (!write_node_cache(root, node)) return state.SkipWithError("write_node_cache failed");
    for (auto _ : state) {
        if (changed) {
            state.PauseTiming();
            (void)write_node_cache(root, other);
            state.ResumeTiming();
        }
        if (!write_node_cache(root, node)) return state.SkipWithError("write_node_cache failed");
    }
    state.SetLabel(changed ? "changed" : "unchanged");
}
BENCHMARK(BM_WriteNodeCache)->ArgName("changed")->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond)
    ->Repetitions(10)->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
