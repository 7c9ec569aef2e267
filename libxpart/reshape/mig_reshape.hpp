// Reshaping one GPU's MIG geometry through NVML, the way an admin would with nvidia-smi but
// safely: refuse while any process runs on the GPU, plan every placement before touching
// anything, tear down (compute instances, then GPU instances), build the target largest
// first with one whole-GPU-instance compute instance each, read back what the driver made,
// and on any failure put back the geometry it started from, compute instances as they were.
#pragma once

#include <string>
#include <vector>

#include "libxpart/discovery.hpp"
#include "libxpart/nvidia/mig_geometry.hpp"
#include "libxpart/nvidia/nvml_mig.hpp"

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

// Where each instance of `g` is placed (profile and start), in its order.
std::vector<MigSlot> mig_slots(const GpuGeometry& g);

// What a reshape of one GPU to `target` would do, found before anything changes (what `xpart
// reshape --dry-run` shows, and reshape_and_verify's first step): the geometry now, where the
// target's instances go, whether it is there already, and what refuses it.
struct MigReshapePlan {
    GpuGeometry now;
    std::vector<MigSlot> target;  // every instance placed; empty when `misfit` says why not
    std::string misfit;           // why the target does not fit ("" when it does)
    MigPartialPlan partial;       // when it does not fit: what would, and the rest
    bool already = false;         // the same instances at the same places, one compute instance each
    std::string in_use;           // "1 process runs on it (pid 505 in GPU instance 1)"; "" when none
                                  // (not asked when it fits not, or is there already)
};

// Error when the GPU cannot be read, is not MIG-capable or has MIG off.
Result<MigReshapePlan> plan_reshape(const nvml::NvmlSession& session, const nvml::MigControl& control,
                                    unsigned gpu, const std::vector<std::string>& target);
// The same from a geometry the caller has read already (`now`, of that GPU).
Result<MigReshapePlan> plan_reshape(const nvml::NvmlSession& session, const nvml::MigControl& control,
                                    unsigned gpu, GpuGeometry now, const std::vector<std::string>& target);

// A reshape as slurmd will see it, run by the reshape engine (reshape_engine.hpp): plan_reshape,
// refused when the target does not fit or a process runs; tear down and build, read back what
// the driver made; then discovery (`discovery`, NVIDIA only) must show exactly the target's
// partitions on the GPU, and the /dev/nvidia-caps nodes of the new instances that NVML did not
// make are made (also when the GPU had the target). Anything else puts the starting geometry back.
struct VerifiedReshape {
    std::string from, to;      // "3g.40gb+2x1g.10gb", "7x1g.10gb" ("none" for no instance)
    bool changed = false;      // false: the GPU had the target already
    std::size_t partitions = 0;  // discovery's, after
    unsigned nodes_made = 0;
};
// Error when refused ("GPU 0: 1 process runs on it (pid 505 in GPU instance 1): not reshaped
// (NVML_ERROR_IN_USE)", the target's misfit), "GPU 0: reshape to <to> failed: <why>; the previous
// geometry (<slots>) is back" (or "; restoring the previous geometry (<slots>) failed too: <why>"),
// or "GPU 0: reshaped to <to> but discovery shows <what>; put back <from>" (or "; putting back
// <from> failed: <why>").
Result<VerifiedReshape> reshape_and_verify(const nvml::NvmlSession& session, const nvml::MigControl& control,
                                           unsigned gpu, const std::vector<std::string>& target,
                                           const DiscoveryOptions& discovery);

// Tears the GPU down and makes `before` again, compute instances as they were (the undo when
// a step or discovery does not confirm a reshape).
Status put_back(const nvml::NvmlSession& session, const nvml::MigControl& control,
                const GpuGeometry& before);

}  // namespace xpart
