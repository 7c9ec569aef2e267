#include "libxpart/amd/amd_partition.hpp"

#include "libxpart/text.hpp"

namespace xpart {

std::optional<PartitionMode> parse_amd_compute_partition(const std::string& text) {
    const std::string t = trim(text);
    static const std::pair<const char*, PartitionMode> kModes[] = {
        {"SPX", PartitionMode::Spx}, {"DPX", PartitionMode::Dpx}, {"TPX", PartitionMode::Tpx},
        {"QPX", PartitionMode::Qpx}, {"CPX", PartitionMode::Cpx}};
    for (const auto& [name, mode] : kModes)
        if (t == name) return mode;
    return std::nullopt;
}

std::optional<std::string> parse_amd_memory_partition(const std::string& text) {
    const std::string t = trim(text);
    if (t == "NPS1" || t == "NPS2" || t == "NPS4" || t == "NPS8") return t;
    return std::nullopt;
}

unsigned amd_mode_partition_count(PartitionMode mode, const AmdModel& model) {
    switch (mode) {
        case PartitionMode::Dpx: return 2;
        case PartitionMode::Tpx: return 3;
        case PartitionMode::Qpx: return 4;
        case PartitionMode::Cpx: return model.total_xcc;
        default: return 1;
    }
}

namespace {
PartitionMode mode_for_count(std::size_t partitions, bool one_xcc_each) {
    if (partitions <= 1) return PartitionMode::Spx;
    if (one_xcc_each) return PartitionMode::Cpx;
    switch (partitions) {
        case 2: return PartitionMode::Dpx;
        case 3: return PartitionMode::Tpx;
        case 4: return PartitionMode::Qpx;
        default: return PartitionMode::Cpx;
    }
}
}  // namespace

Result<PartitionMode> infer_amd_mode(const AmdModel* model, unsigned num_xcc,
                                     std::size_t nodes_present) {
    if (!model) {
        if (nodes_present <= 1) return PartitionMode::Full;
        return mode_for_count(nodes_present, false);
    }
    if (!model->partitionable) return PartitionMode::Full;
    if (num_xcc == 0) return mode_for_count(nodes_present, false);
    if (num_xcc > model->total_xcc || model->total_xcc % num_xcc != 0)
        return Error{"num_xcc " + std::to_string(num_xcc) + " does not divide the " +
                     std::to_string(model->total_xcc) + " XCCs of an " + model->name};
    return mode_for_count(model->total_xcc / num_xcc, num_xcc == 1);
}

std::string amd_partition_type(AmdTypeNaming naming, PartitionMode mode,
                               const std::string& memory_mode, const std::string& model) {
    const std::string lower_model = to_lower(model);
    if (mode == PartitionMode::Full) return lower_model;
    std::string type = to_string(mode);
    if (naming != AmdTypeNaming::Mode && !memory_mode.empty()) type += "." + to_lower(memory_mode);
    if (naming == AmdTypeNaming::ModelModeMemory) type = lower_model + "." + type;
    return type;
}

Status check_amd_render_link(const std::string& target, const std::string& pci_bus_id,
                             int partition_index, const std::string& link) {
    std::string base = target;
    while (!base.empty() && base.back() == '/') base.pop_back();
    if (std::size_t slash = base.rfind('/'); slash != std::string::npos) base = base.substr(slash + 1);
    if (partition_index == 0) {
        if (base == pci_bus_id) return ok_status();
        return Error{link + ": points to '" + target + "', expected the GPU's PCI device " +
                     pci_bus_id + " (partition 0)"};
    }
    for (const char* prefix : {"amdgpu_xcp.", "amdgpu_xcp_"}) {
        const std::string p(prefix);
        if (base.size() > p.size() && base.compare(0, p.size(), p) == 0 &&
            parse_u64(base.substr(p.size())))
            return ok_status();
    }
    return Error{link + ": points to '" + target + "', expected a platform device amdgpu_xcp.N " +
                 "or amdgpu_xcp_N (partition " + std::to_string(partition_index) + " of " +
                 pci_bus_id + ")"};
}

}  // namespace xpart
