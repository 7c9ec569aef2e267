// Locality as both front ends use it (`xpart launch`, the SPANK plugin's steps): the hwloc
// topology a Closest plan needs, and pinning a rank to the CPUs its plan chose.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "binding/mapping.hpp"
#include "binding/topology.hpp"
#include "libxpart/result.hpp"

namespace xpart::binding {

// For BindPolicy::Closest only: the topology (from `xml_file` when given, else `fsroot`) and
// the CPUs this process may use, into `options.allowed_cpus`. nullopt for other policies.
Result<std::optional<Topology>> load_locality(MapOptions& options, const std::string& xml_file,
                                              const std::string& fsroot);

// Pins `pid` (0: this process) to `cpus`, kept within the CPUs it may already use (Slurm's
// allocation, a cpuset): false, and nothing changed, when none of them is among those.
Result<bool> pin_within_allocation(pid_t pid, const std::vector<unsigned>& cpus);

}  // namespace xpart::binding
