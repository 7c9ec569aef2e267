// NVML's MIG management calls (GPU and compute instances: list, create with a placement,
// destroy; the processes running on a GPU), for `xpart geometry` and `xpart reshape`. Kept
// apart from discovery's calls (nvml.hpp): discovery must keep working with a library that
// lacks them. Layouts are nvml.h's on x86-64 (static_asserts in nvml_mig.cpp; field by field
// in tests/libxpart/nvml_header_check). Errors name the call, the GPU and the code, as
// nvml.hpp's do.
#pragma once

#include <string>
#include <vector>

#include "libxpart/nvidia/nvml.hpp"

namespace xpart::nvml {

struct GpuInstanceOpaque;
using GpuInstance = GpuInstanceOpaque*;  // nvmlGpuInstance_t
struct ComputeInstanceOpaque;
using ComputeInstance = ComputeInstanceOpaque*;  // nvmlComputeInstance_t

struct GiProfileInfoV2 {  // nvmlGpuInstanceProfileInfo_v2_t
    unsigned version;
    unsigned id;
    unsigned isP2pSupported;
    unsigned sliceCount;
    unsigned instanceCount;
    unsigned multiprocessorCount;
    unsigned copyEngineCount;
    unsigned decoderCount;
    unsigned encoderCount;
    unsigned jpegCount;
    unsigned ofaCount;
    unsigned long long memorySizeMB;
    char name[kNameBufferSize];
};

struct GiPlacement {  // nvmlGpuInstancePlacement_t
    unsigned start;
    unsigned size;
};

struct GiInfo {  // nvmlGpuInstanceInfo_t
    Device device;
    unsigned id;
    unsigned profileId;
    GiPlacement placement;
};

struct CiProfileInfo {  // nvmlComputeInstanceProfileInfo_t
    unsigned id;
    unsigned sliceCount;
    unsigned instanceCount;
    unsigned multiprocessorCount;
    unsigned sharedCopyEngineCount;
    unsigned sharedDecoderCount;
    unsigned sharedEncoderCount;
    unsigned sharedJpegCount;
    unsigned sharedOfaCount;
};

struct ProcessInfo {  // nvmlProcessInfo_t (the _v3 call's)
    unsigned pid;
    unsigned long long usedGpuMemory;
    unsigned gpuInstanceId;
    unsigned computeInstanceId;
};

// NVML_STRUCT_VERSION(GpuInstanceProfileInfo, 2)
constexpr unsigned kGiProfileInfoV2 = (2u << 24) | sizeof(GiProfileInfoV2);

// NVML_GPU_INSTANCE_PROFILE_* indexes a driver may answer (1_SLICE .. 2_SLICE_ALL_ME).
constexpr unsigned kGiProfileIndexes = 17;
// NVML_COMPUTE_INSTANCE_PROFILE_* indexes (1_SLICE .. 1_SLICE_REV1).
constexpr unsigned kCiProfileIndexes = 8;

// One GPU-instance profile as the driver lists it.
struct GiProfile {
    unsigned index = 0;  // NVML_GPU_INSTANCE_PROFILE_*
    unsigned id = 0;
    std::string name;    // "1g.10gb" (the driver's "MIG " prefix dropped)
    unsigned slices = 0;
    unsigned max_count = 0;
    unsigned long long memory_mib = 0;
    std::vector<GiPlacement> placements;
};

struct CiState {
    ComputeInstance handle = nullptr;
    unsigned profile_id = 0;  // its CI profile (id == NVML_COMPUTE_INSTANCE_PROFILE_* index)
    unsigned slices = 0;
};

// A GPU instance that exists, with its compute instances.
struct GiState {
    GpuInstance handle = nullptr;
    unsigned id = 0;
    unsigned profile_id = 0;
    GiPlacement placement{};
    std::vector<CiState> compute_instances;
};

// The MIG management calls of one loaded library, on an open session.
class MigControl {
public:
    // Error: "NVML library '<file>' lacks <symbol> (MIG management needs driver R470 or later)".
    static Result<MigControl> bind(std::shared_ptr<const NvmlLibrary> lib);

    // Every profile the GPU supports (NOT_SUPPORTED indexes skipped), with its placements.
    Result<std::vector<GiProfile>> profiles(const DeviceRef& gpu) const;
    Result<std::vector<GiState>> gpu_instances(const DeviceRef& gpu,
                                               const std::vector<GiProfile>& profiles) const;
    Result<std::vector<ProcessInfo>> processes(const DeviceRef& gpu) const;
    // The error keeps NVML's code in Error::message and returns it in *code when given.
    Result<GpuInstance> create_gpu_instance(const DeviceRef& gpu, const GiProfile& profile,
                                            unsigned start, int* code = nullptr) const;
    // One compute instance spanning the whole GPU instance (the largest CI profile).
    Status create_full_compute_instance(const DeviceRef& gpu, GpuInstance gi) const;
    // One compute instance of a given CI profile id (putting back a split GPU instance).
    Status create_compute_instance(const DeviceRef& gpu, GpuInstance gi, unsigned profile_id) const;
    Status destroy_compute_instance(const DeviceRef& gpu, ComputeInstance ci) const;
    Status destroy_gpu_instance(const DeviceRef& gpu, GpuInstance gi, int* code = nullptr) const;
    Result<GiInfo> gpu_instance_info(const DeviceRef& gpu, GpuInstance gi) const;

private:
    struct Calls;
    explicit MigControl(std::shared_ptr<const NvmlLibrary> lib, std::shared_ptr<const Calls> c)
        : lib_(std::move(lib)), calls_(std::move(c)) {}
    std::shared_ptr<const NvmlLibrary> lib_;
    std::shared_ptr<const Calls> calls_;
};

}  // namespace xpart::nvml
