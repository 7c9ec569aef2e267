// `xpart reshape` for AMD Instinct GPUs: the compute partition mode of every partitionable
// AMD GPU (or one, --gpu), through libxpart/reshape/amd_reshape. geometry_cmd.cpp sends a target here
// when it names a mode ("cpx", "cpx.nps4"), or when the --slurm-node's Gres types do.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "libxpart/reshape/amd_reshape.hpp"
#include "libxpart/slurm_text/gpu_request.hpp"

namespace xpart::cli {

// The mode a node of `scontrol show node -o` needs on this host's partitionable AMD GPUs
// (every one takes the same share of its Gres); nullopt when its GPU types name no AMD mode.
// Errors begin "node NODE".
Result<std::optional<AmdTarget>> amd_slurm_node_target(const GlobalOptions& global, const std::string& node,
                                                       const std::string& node_line);

// `xpart geometry` for the partitionable AMD GPUs (or one, --gpu): each one's mode now and the
// modes it could take (those serving `wanted` when given), printed, or appended to `doc` when
// `json`. Returns how many GPUs it showed.
Result<std::size_t> amd_geometry(const GlobalOptions& global, int gpu, const GpuRequest& wanted,
                                 AmdTypeNaming naming, bool json, nlohmann::json& doc);

// `xpart reshape --dry-run` with a mode: each GPU's XCPs and memory partitions now and under the
// target, and whether the switch would be made (plan_amd_reshape); nothing is written. Exit
// status 0 when every GPU would take it, 1 with one line for each that would refuse.
int dry_run_amd_reshape(const GlobalOptions& global, int gpu, const AmdTarget& target, bool allow_reboot_class);

// Exit status: 0 done (or already so); 1 refused or failed, one line each; 3 a memory partition
// change was written, which amdgpu applies when it loads again: reboot, then reshape again.
int run_amd_reshape(const GlobalOptions& global, int gpu, const AmdTarget& target, bool allow_reboot_class);

}  // namespace xpart::cli
