// NVML through dlopen: no NVIDIA header or library is needed to build. The struct layouts are
// our own, checked against the x86-64 ABI of nvml.h (static_asserts in nvml.cpp; with NVIDIA's
// real header field by field, with every constant, in tests/libxpart/nvml_header_test). Every
// failing call becomes one Error naming the call, the device and the code:
//   "nvmlDeviceGetUUID(gpu 2, mig 3): NVML_ERROR_UNKNOWN (999)"
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libxpart/result.hpp"

namespace xpart::nvml {

// nvmlReturn_t values (the ones the enumeration meets; others are named by number).
enum : int {
    kSuccess = 0,
    kErrorUninitialized = 1,
    kErrorInvalidArgument = 2,
    kErrorNotSupported = 3,
    kErrorNoPermission = 4,
    kErrorAlreadyInitialized = 5,
    kErrorNotFound = 6,
    kErrorInsufficientSize = 7,
    kErrorDriverNotLoaded = 9,
    kErrorLibraryNotFound = 12,
    kErrorFunctionNotFound = 13,
    kErrorGpuIsLost = 15,
    kErrorInUse = 19,
    kErrorInsufficientResources = 23,
    kErrorUnknown = 999,
};
constexpr unsigned kMigDisable = 0;
constexpr unsigned kMigEnable = 1;
constexpr unsigned kUuidBufferSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned kNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr int kAffinityScopeNode = 0;     // NVML_AFFINITY_SCOPE_NODE

// "NVML_ERROR_NOT_FOUND", "NVML_SUCCESS"; unknown codes: "NVML_ERROR_<n>".
std::string return_code_name(int code);

struct PciInfo {  // nvmlPciInfo_t (v3 call)
    char busIdLegacy[16];
    unsigned domain;
    unsigned bus;
    unsigned device;
    unsigned pciDeviceId;
    unsigned pciSubSystemId;
    char busId[32];
};

struct DeviceAttributes {  // nvmlDeviceAttributes_t
    unsigned multiprocessorCount;
    unsigned sharedCopyEngineCount;
    unsigned sharedDecoderCount;
    unsigned sharedEncoderCount;
    unsigned sharedJpegCount;
    unsigned sharedOfaCount;
    unsigned gpuInstanceSliceCount;
    unsigned computeInstanceSliceCount;
    unsigned long long memorySizeMB;
};

struct Memory {  // nvmlMemory_t
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

struct DeviceOpaque;
using Device = DeviceOpaque*;  // nvmlDevice_t

// The C entry points, resolved once per library (nvmlErrorString may be null: optional).
struct Api {
    int (*init_v2)();
    int (*shutdown)();
    const char* (*error_string)(int);
    int (*device_get_count_v2)(unsigned*);
    int (*device_get_handle_by_index_v2)(unsigned, Device*);
    int (*device_get_mig_mode)(Device, unsigned*, unsigned*);
    int (*device_get_max_mig_device_count)(Device, unsigned*);
    int (*device_get_mig_device_handle_by_index)(Device, unsigned, Device*);
    int (*device_get_gpu_instance_id)(Device, unsigned*);
    int (*device_get_compute_instance_id)(Device, unsigned*);
    int (*device_get_uuid)(Device, char*, unsigned);
    int (*device_get_attributes_v2)(Device, DeviceAttributes*);
    int (*device_get_minor_number)(Device, unsigned*);
    int (*device_get_pci_info_v3)(Device, PciInfo*);
    int (*device_get_name)(Device, char*, unsigned);
    int (*device_get_memory_info)(Device, Memory*);
    int (*device_get_cpu_affinity)(Device, unsigned, unsigned long*);
    int (*device_get_memory_affinity)(Device, unsigned, unsigned long*, int);
};

// One loaded NVML library. Loaded once per path for the life of the process (NVML is never
// unloaded: dlclose of a driver library is unsafe and reloading costs milliseconds).
class NvmlLibrary {
public:
    // RTLD_NOW|RTLD_LOCAL. Error: "NVML library '<path>' could not be loaded: <dlerror>", or
    // "... lacks <symbol>" when a required call is missing.
    static Result<std::shared_ptr<const NvmlLibrary>> load(const std::string& path);
    // DiscoveryOptions::nvml_library when non-empty, else $XPART_NVML_LIBRARY, else
    // "libnvidia-ml.so.1".
    static std::string resolve_path(const std::string& configured);

    const std::string& path() const { return path_; }
    // The file the dynamic linker loaded (path() may be a bare soname), for messages.
    const std::string& file() const { return file_; }
    const Api& api() const { return api_; }
    // A call beyond discovery's (MIG management, libxpart/nvidia/nvml_mig): null when the library
    // lacks it.
    void* symbol(const char* name) const;
    // `NVML_ERROR_DRIVER_NOT_LOADED (9) "Driver Not Loaded"`: the name, the number and, when
    // the library exports nvmlErrorString, NVIDIA's own words.
    std::string describe(int code) const;

private:
    NvmlLibrary() = default;
    std::string path_;
    std::string file_;
    void* handle_ = nullptr;
    Api api_{};
};

// Which device a call was about, for messages: "gpu 2" or "gpu 2, mig 3".
struct DeviceRef {
    Device handle = nullptr;
    unsigned gpu = 0;
    int mig = -1;  // NVML MIG index, -1 for the GPU itself
};

struct MigMode {
    unsigned current = kMigDisable;
    unsigned pending = kMigDisable;
};

// An initialized NVML (nvmlInit_v2 .. nvmlShutdown, RAII): the calls discovery makes, each
// returning a value or an Error in the house format. Not copyable; movable.
class NvmlSession {
public:
    // Error: `nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED (9) "Driver Not Loaded"`.
    static Result<NvmlSession> open(std::shared_ptr<const NvmlLibrary> lib);
    NvmlSession(NvmlSession&& o) noexcept;
    NvmlSession& operator=(NvmlSession&&) = delete;
    NvmlSession(const NvmlSession&) = delete;
    ~NvmlSession();

    Result<unsigned> device_count() const;
    Result<DeviceRef> device(unsigned index) const;
    // nullopt: NOT_SUPPORTED (the GPU is not MIG-capable).
    Result<std::optional<MigMode>> mig_mode(const DeviceRef& d) const;
    Result<unsigned> max_mig_device_count(const DeviceRef& d) const;
    // nullopt: NOT_FOUND or INVALID_ARGUMENT, a hole in the MIG index range.
    Result<std::optional<DeviceRef>> mig_device(const DeviceRef& parent, unsigned index) const;
    Result<unsigned> gpu_instance_id(const DeviceRef& d) const;
    Result<unsigned> compute_instance_id(const DeviceRef& d) const;
    Result<std::string> uuid(const DeviceRef& d) const;
    Result<DeviceAttributes> attributes(const DeviceRef& d) const;
    Result<unsigned> minor_number(const DeviceRef& d) const;
    Result<PciInfo> pci_info(const DeviceRef& d) const;
    Result<std::string> name(const DeviceRef& d) const;
    Result<Memory> memory_info(const DeviceRef& d) const;
    // CPUs set in the affinity mask (ascending).
    Result<std::vector<unsigned>> cpu_affinity(const DeviceRef& d) const;
    // The NUMA node of the GPU's memory; nullopt when NVML does not support the query.
    Result<std::optional<int>> numa_node(const DeviceRef& d) const;

private:
    explicit NvmlSession(std::shared_ptr<const NvmlLibrary> lib) : lib_(std::move(lib)) {}
    std::shared_ptr<const NvmlLibrary> lib_;
};

// "nvmlDeviceGetUUID(gpu 2, mig 3): NVML_ERROR_UNKNOWN (999)"
Error call_error(const char* call, const DeviceRef* d, int code);

}  // namespace xpart::nvml
