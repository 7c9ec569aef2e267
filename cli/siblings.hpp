// `xpart discover --siblings`: the geometries this host may take, as the reshape flow's sibling
// NodeNames (libxpart/slurm_text/reshape_siblings): MIG geometries from NVML (the site's Geometry= names
// that fit, then each profile alone), AMD modes from amdgpu's offer that the memory partition
// allows. Every partitionable GPU of the host takes the same geometry, as
// `xpart reshape --slurm-node` does.
#pragma once

#include <string>
#include <vector>

#include "libxpart/slurm_text/reshape_siblings.hpp"
#include "libxpart/gres/xpart_conf.hpp"

namespace xpart::cli {

struct SiblingChoice {
    std::string nvml_library;
    AmdTypeNaming amd_type_naming = AmdTypeNaming::Mode;
    std::vector<std::string> only;  // --geometry: names, geometries or modes to keep ("" = all)
};

// The host's geometries, the current one marked (and kept whatever `only` says). Error, one
// line, for a host the flow cannot reshape: no GPU, two vendors, a GPU without MIG on or
// without compute partitions, GPUs laid out differently now; or a --geometry it cannot take.
Result<std::vector<HostGeometry>> host_geometries(const Node& node, const RootFs& root, const XpartConf& conf,
                                                  const SiblingChoice& choice);

}  // namespace xpart::cli
