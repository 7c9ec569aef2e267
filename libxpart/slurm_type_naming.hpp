// The GRES type names Slurm's own autodetect computes (xpart.conf TypeNaming=slurm), for sites
// whose job scripts ask for them. Transcribed from Slurm's sources, no Slurm header needed:
// src/plugins/gpu/nvml/gpu_nvml.c (_handle_mig, _get_system_gpu_list_nvml),
// src/plugins/gpu/rsmi/gpu_rsmi.c and gpu_common_underscorify_tolower (gpu/common).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xpart {

// The Slurm series the plugin runs under: the MIG names differ between them. The values cross
// the gres_gpu.so / xpart_node_discovery.so seam as numbers: append, never renumber.
enum class SlurmSeries {
    S22_05,  // 22.05 (Debian 12): MIG names from the device attributes only
    S24_11,  // 23.02.6 and later, 24.11 (Debian 13): from the MIG device's NVML name
    S25_11,  // SchedMD's 25.11: as 24.11, with a larger name buffer
    S26_05,  // SchedMD's 26.05: as 25.11
};

// What xpart knows of each series: the one table (slurm_type_naming.cpp) the CLI's choices,
// the plugin's series and the names below all come from.
struct SlurmSeriesInfo {
    SlurmSeries series;
    const char* name;             // "24.11": what --slurm-series takes and logs print
    bool reads_mig_name;          // MIG type from the MIG device's NVML name (else attributes)
    std::size_t mig_name_buffer;  // the buffer gpu_nvml.c's _handle_mig passes to
                                  // nvmlDeviceGetName (0: never asks)
};
const std::vector<SlurmSeriesInfo>& all_slurm_series();  // oldest first
const SlurmSeriesInfo& slurm_series_info(SlurmSeries s);
std::optional<SlurmSeries> slurm_series_from_number(std::uint32_t n);  // the enum's value
bool slurm_reads_mig_name(SlurmSeries s);

// How xpart names GRES types (xpart.conf TypeNaming=).
enum class TypeNaming {
    Xpart,  // default: "3g.20gb", "1c.3g.20gb", "1g.5gb+me", "a100-sxm4-40gb", "cpx"
    Slurm,  // what Slurm's AutoDetect=nvml / rsmi registers: "nvidia_a100_3g.20gb"
};

const char* to_string(SlurmSeries s);  // "22.05", "24.11", "25.11", "26.05"

// gpu_common_underscorify_tolower: every character lower-cased, ' ' -> '_'.
std::string slurm_underscorify_tolower(std::string s);

// A whole GPU under gpu/nvml (MIG off or unsupported): the NVML name underscored
// ("NVIDIA A100-SXM4-40GB" -> "nvidia_a100-sxm4-40gb").
std::string slurm_nvml_gpu_type(const std::string& nvml_name);

// One MIG device under gpu/nvml. The NVML figures of the device (nvmlDeviceAttributes_t).
struct SlurmMigInput {
    std::string gpu_name;             // nvmlDeviceGetName of the parent GPU
    std::string mig_name;             // nvmlDeviceGetName of the MIG device ("" if it failed);
                                      // real NVML: "NVIDIA A100-SXM4-40GB MIG 1c.3g.20gb"
    unsigned gi_slices = 0;           // gpuInstanceSliceCount
    unsigned ci_slices = 0;           // computeInstanceSliceCount
    std::uint64_t memory_mb = 0;      // memorySizeMB
};
// The parent's underscored name cut at its first '-' ("nvidia_a100"), then:
//  22.05: "_<gi>g.<round(memorySizeMB / 1024)>gb" (roundl: half away from zero);
//  24.11 and later: what follows "mig" in the underscored MIG device name ("_1c.3g.20gb"),
//         else (no name, a name the series' buffer cannot hold, or no "mig_" in it)
//         "_[<ci>c.]<gi>g.<ceil(memorySizeMB / 1024)>gb", the "<ci>c." only when ci != gi.
std::string slurm_nvml_mig_type(SlurmSeries series, const SlurmMigInput& mig);

// A GPU under gpu/rsmi (24.11; rsmi sees whole GPUs only): rsmi's brand, else its device
// name, underscored. xpart gives every XCP of that GPU this same name, so
// --gres=gpu:<name>:N still asks for N partitions.
std::string slurm_rsmi_gpu_type(const std::string& brand_or_name);

}  // namespace xpart
