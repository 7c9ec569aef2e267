// NVIDIA part of the simulator spec: GPUs, their MIG geometry, and faults for the fake NVML.
//
//   "nvidia": {
//     "driver_version": "535.104.05",      // /proc/driver/nvidia/version
//     "frontend": false,                   // /proc/devices says "195 nvidia-frontend"
//     "faults": {"nvmlDeviceGetUUID@2": 999},  // call[@gpu index] -> nvmlReturn_t
//     "gpus": [{
//       "product": "A100-SXM4-40GB",       // key of the profile table (nvidia_profiles.hpp)
//       "name": "A100-SXM4-40GB",          // optional: what nvmlDeviceGetName returns
//       "uuid": "GPU-...", "pci_bus_id": "0000:07:00.0", "minor": 0, "numa_node": 0,
//       "switch": "sw0",                   // optional: the PCIe switch above it (spec_pcie.hpp)
//       "mig": "enabled",   // unsupported | disabled | enabled | enable-pending | disable-pending
//       "legacy_mig_uuids": false,         // UUIDs as MIG-GPU-<uuid>/<gi>/<ci> (R450/R460)
//       "mig_index_holes": [1],            // MIG indices NVML skips (NOT_FOUND)
//       "instances": [{"profile": "3g.20gb", "start": 0,
//                      "compute_instances": [{"ci": 0, "slices": 1, "uuid": "MIG-..."}]},
//                     {"profile": "1g.5gb", "start": 6, "uuid": "MIG-..."}]  // one full CI
//     }]
//   }
#pragma once

#include <map>
#include <string>
#include <vector>

namespace xpart::sim {

enum class MigState { Unsupported, Disabled, Enabled, EnablePending, DisablePending };

struct ComputeInstanceSpec {
    unsigned ci = 0;      // compute-instance id within its GPU instance
    unsigned slices = 0;  // compute slices (the "Nc." of the name)
    std::string uuid;     // "MIG-<uuid>"
};

struct GpuInstanceSpec {
    std::string profile;  // "3g.20gb"
    unsigned start = 0;   // placement start (memory slice)
    unsigned gi = 0;      // GPU-instance id, derived from profile and placement as the driver does
    std::vector<ComputeInstanceSpec> compute_instances;
};

struct NvidiaGpuSpec {
    std::string product;
    std::string name;
    std::string uuid;
    std::string pci_bus_id;  // "0000:07:00.0"
    unsigned minor = 0;
    int numa_node = 0;
    std::string switch_name;  // "" : below a host bridge of its own
    MigState mig = MigState::Disabled;
    bool legacy_mig_uuids = false;
    std::vector<unsigned> mig_index_holes;
    std::vector<GpuInstanceSpec> instances;
};

struct NvidiaSpec {
    std::string driver_version = "535.104.05";
    bool frontend = false;
    std::map<std::string, int> faults;  // "nvmlInit_v2" or "nvmlDeviceGetUUID@2" -> code
    std::vector<NvidiaGpuSpec> gpus;
    bool empty() const { return gpus.empty(); }
};

}  // namespace xpart::sim
