// Facts about AMD Instinct models that the KFD topology does not state: the XCC count of the
// whole GPU (needed to infer the partition mode when the PCI partition attributes are absent)
// and the values the simulator writes. Keyed by the PCI device id KFD reports as `device_id`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace xpart {

struct AmdModel {
    unsigned device_id;             // PCI device id (KFD `device_id`, decimal there)
    const char* name;               // "MI300X"
    unsigned total_xcc;             // XCCs of the whole GPU
    bool partitionable;             // has compute partition modes (MI300 series)
    unsigned cus_per_xcc;           // active CUs per XCC
    std::uint64_t memory_mb;        // HBM of the whole GPU
    unsigned gfx_target_version;    // KFD `gfx_target_version`
    const char* compute_modes;      // `available_compute_partition` ("SPX, DPX, QPX, CPX")
    const char* memory_modes;       // `available_memory_partition` ("NPS1, NPS4")
};

// nullptr for device ids not in the table.
const AmdModel* find_amd_model(unsigned device_id);
const AmdModel* find_amd_model(const std::string& name);  // case-insensitive
const std::vector<AmdModel>& amd_models();

}  // namespace xpart
