// MIG geometries: what a GPU is split into, as a list of GPU-instance profile names
// ("3g.40gb+2g.20gb+2x1g.10gb"), and where each instance goes. The placement rules are the
// driver's, read from NVML (nvml_mig.hpp): an instance takes the memory slices
// [start, start + size) of one of its profile's placements, no two overlap, at most the
// profile's count, at most 7 compute slices. Pure functions: no NVML call here.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "libxpart/nvidia/nvml_mig.hpp"
#include "libxpart/result.hpp"

namespace xpart {

// "3g.40gb+2g.20gb+2x1g.10gb" -> {3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb}. Error names the
// bad term: "'0x1g.10gb': count must be 1..7".
Result<std::vector<std::string>> parse_mig_geometry(const std::string& text);
// Largest first, repeats counted: "3g.40gb+2g.20gb+2x1g.10gb" (profiles give the order;
// names they lack go last, by name).
std::string format_mig_geometry(const std::vector<std::string>& names,
                                const std::vector<nvml::GiProfile>& profiles);

struct MigSlot {
    std::string profile;
    unsigned start = 0;
    bool operator==(const MigSlot& o) const { return profile == o.profile && start == o.start; }
};

// Placements for `names` on an empty GPU, or one line saying why none exists:
// "3g.40gb+3g.40gb+1g.10gb does not fit: no placement is left for 1g.10gb",
// "'5g.50gb' is not a profile of this GPU (it has 1g.10gb, ...)".
Result<std::vector<MigSlot>> plan_mig_geometry(const std::vector<nvml::GiProfile>& profiles,
                                               const std::vector<std::string>& names);

// What of `names` an empty GPU holds when not all of it fits (plan_mig_geometry's refusal):
// the longest run of its instances, largest first, that one placement set keeps apart
// (`placed`), and the rest (`left`, largest first; names that are no profile of the GPU too).
struct MigPartialPlan {
    std::vector<MigSlot> placed;
    std::vector<std::string> left;
};
MigPartialPlan place_what_fits(const std::vector<nvml::GiProfile>& profiles,
                               const std::vector<std::string>& names);

// The memory slices the GPU's instances are placed on (8 on an A100 or H100): where its
// furthest placement ends.
unsigned mig_memory_slices(const std::vector<nvml::GiProfile>& profiles);
// The memory slices an instance of `name` takes; 0 when it is no profile of the GPU.
unsigned mig_instance_size(const std::vector<nvml::GiProfile>& profiles, const std::string& name);

// The geometries a GPU could take that a site has not named: each profile alone, as many
// as fit ("7x1g.10gb", "3x2g.20gb", ..., "7g.80gb"), +me variants left out.
std::vector<std::vector<std::string>> uniform_mig_geometries(
    const std::vector<nvml::GiProfile>& profiles);

// Does a geometry hold at least the wanted count of each type ({"3g.40gb": 1}; the type ""
// counts every instance)?
bool geometry_serves(const std::vector<std::string>& geometry,
                     const std::map<std::string, unsigned>& wanted);

}  // namespace xpart
