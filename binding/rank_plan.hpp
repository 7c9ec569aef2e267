// Ties the pieces together for one node: allotted partitions + locality -> slots -> the
// whole local map, then each rank's narrowed environment and its --verbose line.
#pragma once

#include <string>
#include <vector>

#include "binding/allotment.hpp"
#include "libxpart/env_map.hpp"
#include "binding/mapping.hpp"
#include "binding/rank_env.hpp"
#include "binding/topology.hpp"
#include "libxpart/node.hpp"

namespace xpart::binding {

struct NodePlan {
    Allotment allotment;
    std::vector<Slot> slots;                  // parallel to allotment.partitions
    std::vector<RankAssignment> assignments;  // one per local rank
};

// `topology` may be null: locality then comes from discovery (Gpu::numa_node, Gpu::cpus).
Result<NodePlan> plan_node(const Node& node, Allotment allotment, const Topology* topology,
                           int local_size, const MapOptions& options);

// The environment of one rank: only its partition is visible, as libxpart/visibility.hpp
// decides (rank_visibility). NVIDIA: CUDA_VISIBLE_DEVICES=
// the partition UUID. AMD: ROCR_VISIBLE_DEVICES=the token the job was given for it (ROCR
// indices stay valid because narrowing changes no device access) or "0" when `confined` (a
// per-rank cgroup renumbers the one openable XCP to 0); HIP_VISIBLE_DEVICES,
// GPU_DEVICE_ORDINAL and CUDA_VISIBLE_DEVICES are removed since they index the filtered set.
// XPART_PARTITION carries the UUID (and "/<index>" for an XCP) for the program's logs.
EnvMap narrow_env(EnvMap env, const Node& node, const AllottedPartition& mine, bool confined);

// "xpart: rank 3 local 3/4 partition 1g.10gb MIG-.. gpu 0 0000:07:00.0 numa 0 cpus 0-7"
std::string verbose_line(const Node& node, const RankInfo& rank, const NodePlan& plan);

}  // namespace xpart::binding
