// MIG profile names as nvidia-smi shows them, derived from NVML device attributes, and the
// tolerant comparison a site's configured type needs when drivers drift ("3g.39gb"/"3g.40gb").
#pragma once

#include <cstdint>
#include <string>

namespace xpart {

struct MigShape {
    unsigned gi_slices = 0;          // nvmlDeviceAttributes_t::gpuInstanceSliceCount
    unsigned ci_slices = 0;          // ::computeInstanceSliceCount
    std::uint64_t gi_memory_mb = 0;  // ::memorySizeMB (MiB of the GPU instance)
    unsigned shared_ofa = 0;         // ::sharedOfaCount (media extensions: "+me")
};

// "1g.5gb", "1g.5gb+me", "1c.3g.20gb". parent_memory_mb: the parent GPU's total MiB.
// Memory is named in eighths of the parent, rounded the way nvidia-smi prints it.
std::string mig_profile_name(const MigShape& shape, std::uint64_t parent_memory_mb);

// True when a configured type names the discovered profile: same CI/GI slice counts and media
// suffix, memory GB differing by at most max(1, 5%). Malformed names never match.
bool mig_types_match(const std::string& configured, const std::string& discovered);

// Whole-GPU type name: "NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3".
std::string full_gpu_type_name(const std::string& model);

}  // namespace xpart
