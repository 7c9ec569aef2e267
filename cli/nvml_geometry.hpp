// NVML opened for MIG geometry work, shared by `xpart geometry`, `xpart reshape` and
// `xpart discover --siblings`: the session, the MIG control calls, and the geometries a GPU
// could take.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "libxpart/reshape/mig_reshape.hpp"
#include "libxpart/gres/xpart_conf.hpp"

namespace xpart::cli {

struct Nvml {
    std::shared_ptr<const nvml::NvmlLibrary> lib;
    std::unique_ptr<nvml::NvmlSession> session;
    std::unique_ptr<nvml::MigControl> control;
};

Result<Nvml> open_nvml(const std::string& configured);

// NVML indexes of every GPU (wanted < 0) or of the one wanted; Error names --gpu.
Result<std::vector<unsigned>> gpus_of(const Nvml& n, int wanted);

struct Candidate {
    std::string name;  // the site's name, or "" for a profile alone
    std::vector<std::string> profiles;
};

// The site's geometries (xpart.conf Geometry=) that this GPU can take, then each profile alone.
std::vector<Candidate> candidates(const GpuGeometry& g, const XpartConf& conf);

}  // namespace xpart::cli
