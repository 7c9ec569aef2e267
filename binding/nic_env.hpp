// Whether and how a rank is told its RDMA NIC for GPUDirect RDMA (partitions of one GPU share
// its PCIe position, so they share its NIC). The variables and their values are written by
// libxpart/visibility's nic_visibility, the one writer of a task's variables.
#pragma once

#include <string>

#include "libxpart/env_map.hpp"
#include "libxpart/node.hpp"
#include "libxpart/result.hpp"

namespace xpart::binding {

enum class NicBind {
    None,             // leave the variables alone
    Closest,          // the GPU's own NIC where the user set nothing
    ClosestOverride,  // the GPU's own NIC, over what the user set
};
const char* to_string(NicBind n);
// "closest", "closest-override" or "none"; Error: "expected closest, closest-override or none".
Result<NicBind> parse_nic_bind(const std::string& value);

// Sets the variables in `env` for a rank on `gpu`. A GPU without a usable NIC changes nothing.
void apply_nic_env(EnvMap& env, const Gpu& gpu, NicBind mode);

}  // namespace xpart::binding
