// ROCR_VISIBLE_DEVICES for a job's AMD partitions, as the ROCm runtime counts devices.
// ROCR numbers the KFD GPU nodes it can open, in KFD order. Before ROCm 7 all XCPs of a GPU
// share one UUID, so partitions must be named by index, and an index depends on what the job
// can open: under a cgroup device constraint the other render nodes fail to open and the
// visible partitions renumber 0..n-1; without one, every GPU node of the node counts.
#pragma once

#include <vector>

#include "libxpart/node.hpp"
#include "libxpart/result.hpp"

namespace xpart {

enum class RocrCounting {
    OthersHidden,   // the job's cgroup denies the other render nodes: indices 0..n-1
    AllVisible,     // no device constraint: index = position among all the node's KFD GPU nodes
};

// `allotted` are KFD node ids of AMD partitions of `node`. Returns the comma list in KFD
// order ("0,1" / "5,6"). Error for an empty allotment, a KFD node that is not an AMD partition
// of the node, or one given twice.
Result<std::string> rocr_visible_devices(const Node& node, const std::vector<int>& allotted,
                                         RocrCounting counting);

}  // namespace xpart
