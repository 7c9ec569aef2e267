// What GPUs a job asks for on one node, as `xpart geometry` weighs geometries against it:
// {type: count}, the type "" for an untyped request (any partition serves).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "libxpart/result.hpp"

namespace xpart {

using GpuRequest = std::map<std::string, unsigned>;

// "gpu:3g.40gb:1,gpu:1g.10gb" (a --gres value). Error names the text.
Result<GpuRequest> parse_gpu_gres(const std::string& text);

// A job as `scontrol show job -o <id>` prints it: TresPerNode (Slurm 22.05 writes
// "gres:gpu:3g.40gb:1", 23.02 and later "gres/gpu:3g.40gb:1"), else TresPerTask times the
// tasks of one node, else TresPerJob. Error when none asks for a GPU.
Result<GpuRequest> job_gpu_request(const std::string& scontrol_line);

// The geometry each of `gpus` MIG GPUs takes for a node of `scontrol show node -o` to come up
// with its configured Gres (the reshape flow's siblings: one NodeName per host and geometry).
// Every GPU takes the same share: "Gres=gpu:3g.40gb:2,gpu:1g.10gb:4" on 2 GPUs ->
// {1g.10gb, 1g.10gb, 3g.40gb} (by name; the planner orders by size). Error names the node and
// the term: an untyped count, or a count that does not divide by the GPUs.
Result<std::vector<std::string>> node_gpu_geometry(const std::string& scontrol_node_line, unsigned gpus);

}  // namespace xpart
