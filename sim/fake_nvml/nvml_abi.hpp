// The NVML C ABI the fake library answers with: the export macro and the structs of the NVML
// header that its entry points fill, laid out as in nvml.h (checked by size below). Shared by
// the entry-point files of the fake libnvidia-ml.so.1.
#pragma once

#define NVML_API extern "C" __attribute__((visibility("default")))

struct nvmlPciInfo_st {
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
};
struct nvmlDeviceAttributes_st {
    unsigned multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount, sharedEncoderCount,
        sharedJpegCount, sharedOfaCount, gpuInstanceSliceCount, computeInstanceSliceCount;
    unsigned long long memorySizeMB;
};
struct nvmlMemory_st {
    unsigned long long total, free, used;
};
struct nvmlProcessInfo_st {
    unsigned pid;
    unsigned long long usedGpuMemory;
    unsigned gpuInstanceId, computeInstanceId;
};
struct nvmlGpuInstancePlacement_st {
    unsigned start, size;
};
struct nvmlGpuInstanceProfileInfo_st {
    unsigned id, isP2pSupported, sliceCount, instanceCount, multiprocessorCount, copyEngineCount,
        decoderCount, encoderCount, jpegCount, ofaCount;
    unsigned long long memorySizeMB;
};
struct nvmlGpuInstanceProfileInfo_v2_st {
    unsigned version, id, isP2pSupported, sliceCount, instanceCount, multiprocessorCount,
        copyEngineCount, decoderCount, encoderCount, jpegCount, ofaCount;
    unsigned long long memorySizeMB;
    char name[96];  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
};
struct nvmlGpuInstanceInfo_st {
    void* device;
    unsigned id, profileId;
    nvmlGpuInstancePlacement_st placement;
};
struct nvmlComputeInstanceProfileInfo_st {
    unsigned id, sliceCount, instanceCount, multiprocessorCount, sharedCopyEngineCount,
        sharedDecoderCount, sharedEncoderCount, sharedJpegCount, sharedOfaCount;
};
struct nvmlComputeInstanceProfileInfo_v2_st {
    unsigned version, id, sliceCount, instanceCount, multiprocessorCount, sharedCopyEngineCount,
        sharedDecoderCount, sharedEncoderCount, sharedJpegCount, sharedOfaCount;
    char name[96];
};
struct nvmlComputeInstancePlacement_st {
    unsigned start, size;
};
struct nvmlComputeInstanceInfo_st {
    void* device;
    void* gpuInstance;
    unsigned id, profileId;
    nvmlComputeInstancePlacement_st placement;
};
static_assert(sizeof(nvmlProcessInfo_st) == 24 && sizeof(nvmlGpuInstanceProfileInfo_st) == 48 &&
                  sizeof(nvmlGpuInstanceProfileInfo_v2_st) == 152 &&
                  sizeof(nvmlGpuInstanceInfo_st) == 24 &&
                  sizeof(nvmlComputeInstanceProfileInfo_st) == 36 &&
                  sizeof(nvmlComputeInstanceProfileInfo_v2_st) == 136 &&
                  sizeof(nvmlComputeInstanceInfo_st) == 32,
              "NVML ABI");
static_assert(sizeof(nvmlPciInfo_st) == 68 && sizeof(nvmlDeviceAttributes_st) == 40, "NVML ABI");
