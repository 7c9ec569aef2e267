#include "libxpart/slurm_type_naming.hpp"

#include <cctype>

namespace xpart {

namespace {
// NVML_DEVICE_NAME_BUFFER_SIZE: the buffer gpu_nvml.c passes to nvmlDeviceGetName. A name
// that does not fit makes NVML answer INSUFFICIENT_SIZE and Slurm falls back to attributes.
constexpr std::size_t kSlurmNameBuffer = 64;
}  // namespace

const char* to_string(SlurmSeries s) { return s == SlurmSeries::S24_11 ? "24.11" : "22.05"; }

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
    if (series == SlurmSeries::S24_11) {
        if (!mig.mig_name.empty() && mig.mig_name.size() < kSlurmNameBuffer) {
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
