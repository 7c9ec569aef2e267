// Per-product MIG profile tables (NVIDIA MIG user guide, `nvidia-smi mig -lgip/-lgipp`) and the
// placement rules the driver enforces. The fake NVML and the spec checker share them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "libxpart/result.hpp"

namespace xpart::sim {

struct MigProfileSpec {
    std::string name;           // "1g.5gb+me"
    unsigned id = 0;            // NVML GPU-instance profile id
    unsigned slices = 0;        // compute slices (gpuInstanceSliceCount)
    unsigned memory_slices = 0; // placement size, in eighths of the memory
    std::vector<unsigned> starts;  // allowed placement starts
    unsigned max_count = 0;
    std::uint64_t memory_mib = 0;
    unsigned sms = 0;
    unsigned copy_engines = 0, decoders = 0, encoders = 0, jpegs = 0, ofas = 0;
    // GI ids come from per-size pools, by placement, not in creation order:
    // gi = gi_base + start / memory_slices (7g: 0; 4g and 3g: 1..; 2g: 3..; 1g: 7..).
    unsigned gi_base = 0;
};

struct GpuProductSpec {
    std::string key;            // "A100-SXM4-40GB"
    std::string name;           // what nvmlDeviceGetName returns by default
    std::uint64_t memory_mib = 0;
    unsigned sms = 0;
    unsigned pci_device_id = 0; // nvmlPciInfo_t::pciDeviceId (device << 16 | vendor)
    bool mig_capable = false;
    unsigned max_mig_devices = 0;
    std::vector<MigProfileSpec> profiles;

    const MigProfileSpec* find_profile(const std::string& name) const;
};

const GpuProductSpec* find_gpu_product(const std::string& key);
const std::vector<GpuProductSpec>& gpu_products();

}  // namespace xpart::sim
