// `xpart-sim kfd-hold ROOT BDF`: a process that holds an AMD GPU of a simulated root as a KFD
// process does (sim/kfd_registry.hpp) until SIGTERM/SIGINT, so that the driver refuses
// compute-partition switches of that GPU with EBUSY.
#pragma once

#include <string>

namespace xpart::sim {

// Registers the calling process, prints "ready" on stdout, waits for SIGTERM/SIGINT,
// unregisters. Returns the exit status (1 after a one-line error on stderr).
int run_kfd_hold(const std::string& root, const std::string& bdf);

}  // namespace xpart::sim
