// Discovery benchmarks: a full discover() of a simulated node, repeated in-process.
// Vendors add one BENCHMARK per reference node in their own file of this program, e.g.
//   static void BM_DiscoverAmdMi300x(benchmark::State& s) { bench::run_discovery(s, "mi300x-cpx", ...); }
//   BENCHMARK(BM_DiscoverAmdMi300x)->Apply(bench::discovery_settings);
#pragma once

#include <benchmark/benchmark.h>

#include <string>

#include "libxpart/discovery.hpp"

namespace xpart::bench {

// Which vendors a benchmark discovers (the other half stays off, so figures are per vendor).
struct DiscoverySelection {
    bool nvidia = false;
    bool amd = false;
};

// Builds the simulated root of sim/specs/<spec>.json once (fake NVML installed when the spec
// has NVIDIA GPUs), then times discover() on it; fails the benchmark on any discovery error.
void run_discovery(benchmark::State& state, const std::string& spec, DiscoverySelection which);

// Median of 10 repetitions, in microseconds.
void discovery_settings(benchmark::internal::Benchmark* b);

}  // namespace xpart::bench
