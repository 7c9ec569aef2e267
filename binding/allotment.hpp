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

namespace xpart::launch {

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

// Reads, first found: CUDA_VISIBLE_DEVICES (MIG-<uuid>, GPU-<uuid>, legacy
// MIG-GPU-<uuid>/<gi>/<ci>, or an NVML index of a whole GPU), ROCR_VISIBLE_DEVICES (GPU-<hex>
// prefix matching one XCP, or an index into the openable KFD GPU nodes), then SLURM_STEP_GPUS
// / SLURM_JOB_GPUS (GPU indices: every partition of each; gres record indices, one partition
// each, when the node carries the records slurmd registered). An unknown or ambiguous token is an
// error naming the variable and token: a rank must never run on a guessed device.
Result<Allotment> resolve_allotment(const Node& node, const EnvMap& env,
                                    const DeviceOpenable& openable);

}  // namespace xpart::launch
