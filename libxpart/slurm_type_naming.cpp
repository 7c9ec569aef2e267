#include "libxpart/slurm_type_naming.hpp"

#include <algorithm>
#include <cctype>

namespace xpart {

// The name buffer is what _handle_mig (gpu_nvml.c) gives nvmlDeviceGetName: a name that does
// not fit makes NVML answer INSUFFICIENT_SIZE and Slurm falls back to the attributes. 24.11:
// NVML_DEVICE_NAME_BUFFER_SIZE (64); 25.11 and 26.05: NVML_DEVICE_NAME_V2_BUFFER_SIZE (96 in
// nvml.h; gpu_nvml.c falls back to 64 only for an nvml.h too old to define it).
const std::vector<SlurmSeriesInfo>& all_slurm_series() {
    static const std::vector<SlurmSeriesInfo> table = {
        {SlurmSeries::S22_05, "22.05", false, 0},
        {SlurmSeries::S24_11, "24.11", true, 64},
        {SlurmSeries::S25_11, "25.11", true, 96},
        {SlurmSeries::S26_05, "26.05", true, 96},
    };
    return table;
}

const SlurmSeriesInfo& slurm_series_info(SlurmSeries s) {
    const auto& table = all_slurm_series();
    auto it = std::find_if(table.begin(), table.end(),
                           [s](const SlurmSeriesInfo& i) { return i.series == s; });
    return it != table.end() ? *it : table.front();
}

std::optional<SlurmSeries> slurm_series_from_number(std::uint32_t n) {
    for (const auto& i : all_slurm_series())
        if (static_cast<std::uint32_t>(i.series) == n) return i.series;
    return std::nullopt;
}

bool slurm_reads_mig_name(SlurmSeries s) { return slurm_series_info(s).reads_mig_name; }

const char* to_string(SlurmSeries s) { return slurm_series_info(s).name; }

std::string slurm_underscorify_tolower(std::string s) {
    for (char& c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (c == ' ') c = '_';
    }
    return s;
}

std::string slurm_nvml_gpu_type(const std::string& nvml_name) {
    return slurm_underscorify_tolower(nvml_name);
}

std::string slurm_nvml_mig_type(SlurmSeries series, const SlurmMigInput& mig) {
    std::string name = slurm_underscorify_tolower(mig.gpu_name);
    if (std::size_t dash = name.find('-'); dash != std::string::npos) name.resize(dash);
    if (const SlurmSeriesInfo& info = slurm_series_info(series); info.reads_mig_name) {
        if (!mig.mig_name.empty() && mig.mig_name.size() < info.mig_name_buffer) {
            const std::string lower = slurm_underscorify_tolower(mig.mig_name);
            if (std::size_t at = lower.find("mig_"); at != std::string::npos)
                return name + lower.substr(at + 3);
        }
        name += "_";
        if (mig.ci_slices != mig.gi_slices) name += std::to_string(mig.ci_slices) + "c.";
        // ROUNDUP(memorySizeMB, 1024) of src/common/macros.h: ceiling division.
        return name + std::to_string(mig.gi_slices) + "g." +
               std::to_string((mig.memory_mb + 1023) / 1024) + "gb";
    }
    // roundl(memorySizeMB / 1024.0): the remainder decides, half away from zero.
    const std::uint64_t gb = mig.memory_mb / 1024 + (mig.memory_mb % 1024 >= 512 ? 1 : 0);
    return name + "_" + std::to_string(mig.gi_slices) + "g." + std::to_string(gb) + "gb";
}

std::string slurm_rsmi_gpu_type(const std::string& brand_or_name) {
    return slurm_underscorify_tolower(brand_or_name);
}

}  // namespace xpart
