// The simulator's node spec (JSON).
#include "sim/spec.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(sim_spec) { (void)xpart::sim::parse_spec(xpart::fuzz::text_of(data, size), "spec.json"); }
