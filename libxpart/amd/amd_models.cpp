#include "libxpart/amd/amd_models.hpp"

#include "libxpart/text.hpp"

namespace xpart {

namespace {
// Device ids from the amdgpu PCI id table. MI300 parts report gfx942 (90402) after the
// gfx940/941 unification. MI300A is an APU: its HBM is the node's memory, listed here whole.
const std::vector<AmdModel> kModels = {
    {0x74a1, "MI300X", 8, true, 38, 196608, 90402, "SPX, DPX, QPX, CPX", "NPS1, NPS4"},
    {0x74a5, "MI325X", 8, true, 38, 262144, 90402, "SPX, DPX, QPX, CPX", "NPS1, NPS4"},
    // MI308X: 80 CUs in 4 XCCs; its device id (0x74a2) is not confirmed by a primary source.
    {0x74a2, "MI308X", 4, true, 20, 196608, 90402, "SPX, DPX, CPX", "NPS1, NPS4"},
    {0x74a0, "MI300A", 6, true, 38, 131072, 90402, "SPX, TPX, CPX", "NPS1"},
    {0x740f, "MI210", 1, false, 104, 65536, 90010, "", ""},
    {0x740c, "MI250X", 1, false, 110, 65536, 90010, "", ""},
    {0x738c, "MI100", 1, false, 120, 32768, 90008, "", ""},
};
}  // namespace

const std::vector<AmdModel>& amd_models() { return kModels; }

const AmdModel* find_amd_model(unsigned device_id) {
    for (const auto& m : kModels)
        if (m.device_id == device_id) return &m;
    return nullptr;
}

const AmdModel* find_amd_model(const std::string& name) {
    const std::string lower = to_lower(name);
    for (const auto& m : kModels)
        if (to_lower(m.name) == lower) return &m;
    return nullptr;
}

}  // namespace xpart
