// Which partitions the job may use on this node: read from the environment the gres plugin
// (or Slurm) set, resolved against the discovered node.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "libxpart/env_map.hpp"
#include "libxpart/node.hpp"
#include "libxpart/result.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart::binding {

struct AllottedPartition {
    std::size_t gpu = 0;        // index into Node::gpus
    std::size_t partition = 0;  // index into Gpu::partitions
    std::string token;          // the token as the environment gave it ("MIG-..", "3")
};

struct Allotment {
    std::string variable;  // the variable it came from: CUDA_VISIBLE_DEVICES, ...
    std::vector<AllottedPartition> partitions;
};

// True when this process could open the device file (a render node): ROCR drops the KFD
// nodes whose render device it cannot open, which renumbers ROCR_VISIBLE_DEVICES indices.
using DeviceOpenable = std::function<bool(const DeviceFile&)>;
// open() probe through the root prefix: EPERM/EACCES = not openable; success, ENXIO or ENODEV
// (a node without a driver, as in the simulator) = openable.
DeviceOpenable open_probe(const RootFs& root);
// Whether the device cgroup allows this process the file (only EPERM refuses: a file missing
// or closed by its mode says nothing of the rules).
DeviceOpenable cgroup_probe(const RootFs& root);

// Where ROCm puts `part` in its numbering (the openable KFD GPU nodes in KFD order); nullopt
// when this process cannot open its render node.
std::optional<std::size_t> rocr_index(const Node& node, const AllottedPartition& part,
                                      const DeviceOpenable& openable);

// Slurm's gres/gpu record indices as xpart's plugin sets them ("0,3,5" in SLURM_STEP_GPUS or
// SLURM_JOB_GPUS) as partitions, in that order, each keeping its token: index i is record i as
// slurmd registered it (registered_record_order, libxpart/gres_record.hpp). The one reader of
// those indices; an empty field, a non-number or an index past the records is an error naming
// the variable and the token.
Result<Allotment> from_record_indices(const Node& node, const std::string& var,
                                      const std::string& value);

// Reads, first found: CUDA_VISIBLE_DEVICES (MIG-<uuid>, GPU-<uuid>, legacy
// MIG-GPU-<uuid>/<gi>/<ci>, or an NVML index of a whole GPU), ROCR_VISIBLE_DEVICES (GPU-<hex>
// prefix matching one XCP, or an index into the openable KFD GPU nodes), then SLURM_STEP_GPUS
// / SLURM_JOB_GPUS (GPU indices: every partition of each; gres record indices, one partition
// each, when the node carries the records slurmd registered). An unknown or ambiguous token is an
// error naming the variable and token: a rank must never run on a guessed device.
Result<Allotment> resolve_allotment(const Node& node, const EnvMap& env,
                                    const DeviceOpenable& openable);

}  // namespace xpart::binding
