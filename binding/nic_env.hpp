// Which RDMA NIC a rank uses for GPUDirect RDMA, told in the variables the communication
// libraries read: the first of its GPU's Gpu::nics (discovery ranked them; partitions of one
// GPU share its PCIe position, so they share its NIC).
//   NCCL_IB_HCA      "=mlx5_0:1"  NCCL and RCCL ('=': exactly this device, not mlx5_0*)
//   UCX_NET_DEVICES  "mlx5_0:1"   UCX, so Open MPI's pml/ucx and MPICH's ch4:ucx
//   XPART_NIC        "mlx5_0:1"   what xpart chose, always (for logs and scripts)
// A variable the user already set is kept unless the mode says override.
#pragma once

#include <string>

#include "libxpart/env_map.hpp"
#include "libxpart/node.hpp"
#include "libxpart/result.hpp"

namespace xpart::launch {

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

}  // namespace xpart::launch
