// AMD discovery speed: a full discover() of the simulated 8 x MI300X CPX node (64 XCPs), tree
// in tmpfs, built once. Goal: well under 2 ms. Report the median of the repetitions.
#include <benchmark/benchmark.h>
#include <ftw.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "libxpart/discovery.hpp"
#include "sim/spec.hpp"
#include "sim/tree.hpp"

namespace {

// Specs live in the source tree: $XPART_SRCDIR, else next to this file as compiled.
std::string spec_path(const char* name) {
    const char* src = std::getenv("XPART_SRCDIR");
    std::string dir = src && *src ? src : std::string(__FILE__).substr(0, std::string(__FILE__).rfind("tests/bench/"));
    if (dir.empty()) dir = ".";
    return dir + "/sim/specs/" + name + ".json";
}

class SimulatedRoot {
public:
    explicit SimulatedRoot(const char* spec_name) {
        std::string tmpl = std::string(::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") +
                           "/xpart-amd-bench.XXXXXX";
        if (!::mkdtemp(tmpl.data())) { error_ = "mkdtemp failed"; return; }
        path_ = tmpl;
        auto spec = xpart::sim::load_spec(spec_path(spec_name));
        if (!spec) { error_ = spec.error().message; return; }
        if (auto st = xpart::sim::build_tree(*spec, path_); !st) error_ = st.error().message;
    }
    ~SimulatedRoot() {
        if (!path_.empty())
            ::nftw(path_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) {
                return ::remove(p);
            }, 64, FTW_DEPTH | FTW_PHYS);
    }
    const std::string& path() const { return path_; }
    const std::string& error() const { return error_; }

private:
    std::string path_, error_;
};

void BM_DiscoverMi300xCpx64(benchmark::State& state) {
    static SimulatedRoot root("mi300x-cpx-8gpu");
    if (!root.error().empty()) {
        state.SkipWithError(root.error().c_str());
        return;
    }
    xpart::DiscoveryOptions options;
    options.root = xpart::RootFs(root.path());
    options.nvidia = false;
    for (auto _ : state) {
        auto node = xpart::discover(options);
        if (!node || node->partition_count() != 64) {
            state.SkipWithError(node ? "expected 64 partitions" : node.error().message.c_str());
            return;
        }
        benchmark::DoNotOptimize(node);
    }
    state.counters["partitions"] = 64;
}
BENCHMARK(BM_DiscoverMi300xCpx64)
    ->Unit(benchmark::kMicrosecond)
    ->Repetitions(15)
    ->ReportAggregatesOnly(true);

}  // namespace
