// Our NVML layouts and constants (libxpart/nvidia/nvml.hpp) against NVIDIA's real nvml.h, which the
// product never includes: compiled only by tests/libxpart/nvml_header_test. A struct field at
// another offset would make NVML write over our stack; a wrong constant would misread a mode.
#include <nvml.h>

#include <cstddef>
#include <cstdio>
#include <cstring>

#include "libxpart/nvidia/nvml.hpp"
#include "libxpart/nvidia/nvml_mig.hpp"

namespace n = xpart::nvml;

// Same size, same offset, same field size: the field is where NVML writes it.
#define SAME_FIELD(ours, theirs, field)                                                    \
    static_assert(offsetof(ours, field) == offsetof(theirs, field), #field " offset");     \
    static_assert(sizeof(ours::field) == sizeof(theirs::field), #field " size")

static_assert(sizeof(n::PciInfo) == sizeof(nvmlPciInfo_t), "nvmlPciInfo_t size");
SAME_FIELD(n::PciInfo, nvmlPciInfo_t, busIdLegacy);
SAME_FIELD(n::PciInfo, nvmlPciInfo_t, domain);
SAME_FIELD(n::PciInfo, nvmlPciInfo_t, bus);
SAME_FIELD(n::PciInfo, nvmlPciInfo_t, device);
SAME_FIELD(n::PciInfo, nvmlPciInfo_t, pciDeviceId);
SAME_FIELD(n::PciInfo, nvmlPciInfo_t, pciSubSystemId);
SAME_FIELD(n::PciInfo, nvmlPciInfo_t, busId);

static_assert(sizeof(n::DeviceAttributes) == sizeof(nvmlDeviceAttributes_t), "nvmlDeviceAttributes_t size");
SAME_FIELD(n::DeviceAttributes, nvmlDeviceAttributes_t, multiprocessorCount);
SAME_FIELD(n::DeviceAttributes, nvmlDeviceAttributes_t, sharedCopyEngineCount);
SAME_FIELD(n::DeviceAttributes, nvmlDeviceAttributes_t, sharedDecoderCount);
SAME_FIELD(n::DeviceAttributes, nvmlDeviceAttributes_t, sharedEncoderCount);
SAME_FIELD(n::DeviceAttributes, nvmlDeviceAttributes_t, sharedJpegCount);
SAME_FIELD(n::DeviceAttributes, nvmlDeviceAttributes_t, sharedOfaCount);
SAME_FIELD(n::DeviceAttributes, nvmlDeviceAttributes_t, gpuInstanceSliceCount);
SAME_FIELD(n::DeviceAttributes, nvmlDeviceAttributes_t, computeInstanceSliceCount);
SAME_FIELD(n::DeviceAttributes, nvmlDeviceAttributes_t, memorySizeMB);

static_assert(sizeof(n::Memory) == sizeof(nvmlMemory_t), "nvmlMemory_t size");
SAME_FIELD(n::Memory, nvmlMemory_t, total);
SAME_FIELD(n::Memory, nvmlMemory_t, free);
SAME_FIELD(n::Memory, nvmlMemory_t, used);

// MIG management (libxpart/nvidia/nvml_mig.hpp).
static_assert(sizeof(n::GiProfileInfoV2) == sizeof(nvmlGpuInstanceProfileInfo_v2_t), "profile info v2 size");
SAME_FIELD(n::GiProfileInfoV2, nvmlGpuInstanceProfileInfo_v2_t, version);
SAME_FIELD(n::GiProfileInfoV2, nvmlGpuInstanceProfileInfo_v2_t, id);
SAME_FIELD(n::GiProfileInfoV2, nvmlGpuInstanceProfileInfo_v2_t, sliceCount);
SAME_FIELD(n::GiProfileInfoV2, nvmlGpuInstanceProfileInfo_v2_t, instanceCount);
SAME_FIELD(n::GiProfileInfoV2, nvmlGpuInstanceProfileInfo_v2_t, memorySizeMB);
SAME_FIELD(n::GiProfileInfoV2, nvmlGpuInstanceProfileInfo_v2_t, name);
static_assert(n::kGiProfileInfoV2 == nvmlGpuInstanceProfileInfo_v2, "nvmlGpuInstanceProfileInfo_v2");
static_assert(sizeof(n::GiPlacement) == sizeof(nvmlGpuInstancePlacement_t), "placement size");
SAME_FIELD(n::GiPlacement, nvmlGpuInstancePlacement_t, start);
SAME_FIELD(n::GiPlacement, nvmlGpuInstancePlacement_t, size);
static_assert(sizeof(n::GiInfo) == sizeof(nvmlGpuInstanceInfo_t), "nvmlGpuInstanceInfo_t size");
SAME_FIELD(n::GiInfo, nvmlGpuInstanceInfo_t, device);
SAME_FIELD(n::GiInfo, nvmlGpuInstanceInfo_t, id);
SAME_FIELD(n::GiInfo, nvmlGpuInstanceInfo_t, profileId);
SAME_FIELD(n::GiInfo, nvmlGpuInstanceInfo_t, placement);
static_assert(sizeof(n::CiProfileInfo) == sizeof(nvmlComputeInstanceProfileInfo_t), "CI profile size");
SAME_FIELD(n::CiProfileInfo, nvmlComputeInstanceProfileInfo_t, id);
SAME_FIELD(n::CiProfileInfo, nvmlComputeInstanceProfileInfo_t, sliceCount);
SAME_FIELD(n::CiProfileInfo, nvmlComputeInstanceProfileInfo_t, sharedOfaCount);
static_assert(sizeof(n::ProcessInfo) == sizeof(nvmlProcessInfo_t), "nvmlProcessInfo_t size");
SAME_FIELD(n::ProcessInfo, nvmlProcessInfo_t, pid);
SAME_FIELD(n::ProcessInfo, nvmlProcessInfo_t, usedGpuMemory);
SAME_FIELD(n::ProcessInfo, nvmlProcessInfo_t, gpuInstanceId);
SAME_FIELD(n::ProcessInfo, nvmlProcessInfo_t, computeInstanceId);
static_assert(sizeof(n::GpuInstance) == sizeof(nvmlGpuInstance_t), "nvmlGpuInstance_t size");
static_assert(sizeof(n::ComputeInstance) == sizeof(nvmlComputeInstance_t), "nvmlComputeInstance_t size");

// nvmlReturn_t is an enum of its own: compare the numbers.
#define SAME_CODE(ours, theirs) \
    static_assert(static_cast<int>(n::ours) == static_cast<int>(theirs), #theirs)

// The handle and the return type cross the ABI as a pointer and an int.
static_assert(sizeof(n::Device) == sizeof(nvmlDevice_t), "nvmlDevice_t size");
static_assert(sizeof(int) == sizeof(nvmlReturn_t), "nvmlReturn_t size");

SAME_CODE(kSuccess, NVML_SUCCESS);
SAME_CODE(kErrorUninitialized, NVML_ERROR_UNINITIALIZED);
SAME_CODE(kErrorInvalidArgument, NVML_ERROR_INVALID_ARGUMENT);
SAME_CODE(kErrorNotSupported, NVML_ERROR_NOT_SUPPORTED);
SAME_CODE(kErrorNoPermission, NVML_ERROR_NO_PERMISSION);
SAME_CODE(kErrorAlreadyInitialized, NVML_ERROR_ALREADY_INITIALIZED);
SAME_CODE(kErrorNotFound, NVML_ERROR_NOT_FOUND);
SAME_CODE(kErrorInsufficientSize, NVML_ERROR_INSUFFICIENT_SIZE);
SAME_CODE(kErrorDriverNotLoaded, NVML_ERROR_DRIVER_NOT_LOADED);
SAME_CODE(kErrorLibraryNotFound, NVML_ERROR_LIBRARY_NOT_FOUND);
SAME_CODE(kErrorFunctionNotFound, NVML_ERROR_FUNCTION_NOT_FOUND);
SAME_CODE(kErrorGpuIsLost, NVML_ERROR_GPU_IS_LOST);
SAME_CODE(kErrorInUse, NVML_ERROR_IN_USE);
SAME_CODE(kErrorInsufficientResources, NVML_ERROR_INSUFFICIENT_RESOURCES);
SAME_CODE(kErrorUnknown, NVML_ERROR_UNKNOWN);

static_assert(n::kMigDisable == NVML_DEVICE_MIG_DISABLE, "NVML_DEVICE_MIG_DISABLE");
static_assert(n::kMigEnable == NVML_DEVICE_MIG_ENABLE, "NVML_DEVICE_MIG_ENABLE");
static_assert(n::kUuidBufferSize == NVML_DEVICE_UUID_V2_BUFFER_SIZE, "NVML_DEVICE_UUID_V2_BUFFER_SIZE");
static_assert(n::kNameBufferSize == NVML_DEVICE_NAME_V2_BUFFER_SIZE, "NVML_DEVICE_NAME_V2_BUFFER_SIZE");
static_assert(n::kAffinityScopeNode == NVML_AFFINITY_SCOPE_NODE, "NVML_AFFINITY_SCOPE_NODE");

// return_code_name spells some codes by number (nvml.cpp): each name must be the header's.
int main() {
#define CODE(name) {name, #name}
    const struct {
        int code;
        const char* name;
    } codes[] = {
        CODE(NVML_SUCCESS), CODE(NVML_ERROR_UNINITIALIZED), CODE(NVML_ERROR_INVALID_ARGUMENT),
        CODE(NVML_ERROR_NOT_SUPPORTED), CODE(NVML_ERROR_NO_PERMISSION),
        CODE(NVML_ERROR_ALREADY_INITIALIZED), CODE(NVML_ERROR_NOT_FOUND),
        CODE(NVML_ERROR_INSUFFICIENT_SIZE), CODE(NVML_ERROR_INSUFFICIENT_POWER),
        CODE(NVML_ERROR_DRIVER_NOT_LOADED), CODE(NVML_ERROR_TIMEOUT), CODE(NVML_ERROR_IRQ_ISSUE),
        CODE(NVML_ERROR_LIBRARY_NOT_FOUND), CODE(NVML_ERROR_FUNCTION_NOT_FOUND),
        CODE(NVML_ERROR_CORRUPTED_INFOROM), CODE(NVML_ERROR_GPU_IS_LOST),
        CODE(NVML_ERROR_RESET_REQUIRED), CODE(NVML_ERROR_OPERATING_SYSTEM),
        CODE(NVML_ERROR_LIB_RM_VERSION_MISMATCH), CODE(NVML_ERROR_IN_USE),
        CODE(NVML_ERROR_MEMORY), CODE(NVML_ERROR_NO_DATA), CODE(NVML_ERROR_VGPU_ECC_NOT_SUPPORTED),
        CODE(NVML_ERROR_INSUFFICIENT_RESOURCES), CODE(NVML_ERROR_FREQ_NOT_SUPPORTED),
        CODE(NVML_ERROR_ARGUMENT_VERSION_MISMATCH), CODE(NVML_ERROR_UNKNOWN),
    };
#undef CODE
    int wrong = 0;
    for (const auto& c : codes) {
        const std::string ours = n::return_code_name(c.code);
        if (ours != c.name) {
            std::printf("FAIL: return_code_name(%d) is %s, nvml.h says %s\n", c.code, ours.c_str(), c.name);
            ++wrong;
        }
    }
    std::printf("%s: %zu return code names, 8 struct layouts, 6 constants as nvml.h has them\n",
                wrong ? "FAIL" : "PASS", sizeof codes / sizeof codes[0]);
    return wrong ? 1 : 0;
}
