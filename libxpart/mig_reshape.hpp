// Reshaping one GPU's MIG geometry through NVML, the way an admin would with nvidia-smi but
// safely: refuse while any process runs on the GPU, plan every placement before touching
// anything, tear down (compute instances, then GPU instances), build the target largest
// first with one whole-GPU-instance compute instance each, read back what the driver made,
// and on any failure put back the geometry it started from, compute instances as they were.
#pragma once

#include <string>
#include <vector>

#include "libxpart/mig_geometry.hpp"
#include "libxpart/nvml_mig.hpp"

namespace xpart {

struct MigInstanceNow {
    unsigned gi = 0;
    std::string profile;
    unsigned start = 0;
    unsigned compute_instances = 0;
    std::vector<unsigned> ci_profiles;  // each compute instance's CI profile id
    std::vector<unsigned> ci_slices;    // and its compute slices
};

// One GPU as `xpart geometry` shows it.
struct GpuGeometry {
    unsigned gpu = 0;  // NVML index
    std::string name;
    std::string uuid;
    bool mig_capable = false;
    bool mig_on = false;
    std::vector<nvml::GiProfile> profiles;     // empty unless MIG is on
    std::vector<MigInstanceNow> instances;     // by placement
    std::vector<std::string> profile_names() const;  // of the instances, by placement
};

Result<GpuGeometry> read_gpu_geometry(const nvml::NvmlSession& session,
                                      const nvml::MigControl& control, unsigned gpu);

struct ReshapeOutcome {
    std::vector<MigSlot> before;
    std::vector<MigSlot> after;
    bool changed = false;
};

// Error when refused ("GPU 0: 1 process runs on it (pid 505 in GPU instance 1): not
// reshaped"), when the target does not fit, or when a step failed: then the message says
// what failed and whether the starting geometry was put back.
Result<ReshapeOutcome> reshape_gpu(const nvml::NvmlSession& session, const nvml::MigControl& control,
                                   unsigned gpu, const std::vector<std::string>& target);

// Tears the GPU down and makes `before` again, compute instances as they were (the CLI's
// undo when discovery does not confirm a reshape).
Status put_back(const nvml::NvmlSession& session, const nvml::MigControl& control,
                const GpuGeometry& before);

}  // namespace xpart
