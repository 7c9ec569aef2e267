// What NVML shows for a spec's GPU (MIG device indices, holes) and the fault syntax shared by
// the spec ("faults") and the environment (XPART_SIM_NVML_FAULTS).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "libxpart/result.hpp"
#include "sim/nvidia_profiles.hpp"
#include "sim/spec.hpp"

namespace xpart::sim {

// One MIG device (a compute instance) as NVML enumerates it: ordered by GI id, then CI id,
// numbered from 0 skipping the spec's index holes.
struct SimMigDevice {
    unsigned index = 0;
    const GpuInstanceSpec* gpu_instance = nullptr;
    const ComputeInstanceSpec* compute_instance = nullptr;
    const MigProfileSpec* profile = nullptr;
};
std::vector<SimMigDevice> sim_mig_devices(const NvidiaGpuSpec& gpu);

// The NVML calls a fault may name: discovery's, the MIG management calls of xpart geometry
// and reshape, and both.
const std::vector<std::string>& nvml_discovery_fault_calls();
const std::vector<std::string>& nvml_mig_fault_calls();
const std::vector<std::string>& nvml_fault_calls();

// "nvmlDeviceGetUUID" or "nvmlDeviceGetUUID@2" (only for the GPU with NVML index 2); a
// "#<n>" suffix fails only the n-th call of that name in the process, counted from 1 (a step
// in the middle of a sequence, e.g. the third GPU instance a reshape creates).
struct NvmlFaultKey {
    std::string call;
    int gpu = -1;
    unsigned nth = 0;  // 0: every call
};
Result<NvmlFaultKey> parse_nvml_fault(const std::string& key);
// The code "kill": the process is killed (SIGKILL) as it makes that call, before the call
// does anything; what the calls before it did stays (a reshape cut off halfway).
inline constexpr int kNvmlFaultKill = -9;
// The code "stop": the process stops itself (SIGSTOP) there instead, frozen halfway until
// something continues or kills it (a power cut in the middle of a reshape).
inline constexpr int kNvmlFaultStop = -19;
// "nvmlInit_v2=999,nvmlDeviceGetUUID@2=3,nvmlGpuInstanceDestroy#2=kill" ("stop" too) -> {key: code}. Error
// names the bad item.
Result<std::map<std::string, int>> parse_nvml_fault_list(const std::string& text);

}  // namespace xpart::sim
