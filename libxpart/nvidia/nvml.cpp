#include "libxpart/nvidia/nvml.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstddef>
#include <cstdlib>
#include <map>
#include <mutex>

namespace xpart::nvml {

// Layouts of nvml.h on x86-64 (see hardware-interfaces.md); a mismatch corrupts memory.
static_assert(sizeof(PciInfo) == 68, "nvmlPciInfo_t is 68 bytes");
static_assert(offsetof(PciInfo, domain) == 16 && offsetof(PciInfo, bus) == 20 &&
                  offsetof(PciInfo, device) == 24 && offsetof(PciInfo, pciDeviceId) == 28 &&
                  offsetof(PciInfo, pciSubSystemId) == 32 && offsetof(PciInfo, busId) == 36,
              "nvmlPciInfo_t field offsets");
static_assert(sizeof(DeviceAttributes) == 40, "nvmlDeviceAttributes_t is 40 bytes");
static_assert(offsetof(DeviceAttributes, gpuInstanceSliceCount) == 24 &&
                  offsetof(DeviceAttributes, computeInstanceSliceCount) == 28 &&
                  offsetof(DeviceAttributes, memorySizeMB) == 32,
              "nvmlDeviceAttributes_t field offsets");
static_assert(sizeof(Memory) == 24, "nvmlMemory_t is 24 bytes");

std::string return_code_name(int code) {
    switch (code) {
        case kSuccess: return "NVML_SUCCESS";
        case kErrorUninitialized: return "NVML_ERROR_UNINITIALIZED";
        case kErrorInvalidArgument: return "NVML_ERROR_INVALID_ARGUMENT";
        case kErrorNotSupported: return "NVML_ERROR_NOT_SUPPORTED";
        case kErrorNoPermission: return "NVML_ERROR_NO_PERMISSION";
        case kErrorAlreadyInitialized: return "NVML_ERROR_ALREADY_INITIALIZED";
        case kErrorNotFound: return "NVML_ERROR_NOT_FOUND";
        case kErrorInsufficientSize: return "NVML_ERROR_INSUFFICIENT_SIZE";
        case 8: return "NVML_ERROR_INSUFFICIENT_POWER";
        case kErrorDriverNotLoaded: return "NVML_ERROR_DRIVER_NOT_LOADED";
        case 10: return "NVML_ERROR_TIMEOUT";
        case 11: return "NVML_ERROR_IRQ_ISSUE";
        case kErrorLibraryNotFound: return "NVML_ERROR_LIBRARY_NOT_FOUND";
        case kErrorFunctionNotFound: return "NVML_ERROR_FUNCTION_NOT_FOUND";
        case 14: return "NVML_ERROR_CORRUPTED_INFOROM";
        case kErrorGpuIsLost: return "NVML_ERROR_GPU_IS_LOST";
        case 16: return "NVML_ERROR_RESET_REQUIRED";
        case 17: return "NVML_ERROR_OPERATING_SYSTEM";
        case 18: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
        case kErrorInUse: return "NVML_ERROR_IN_USE";
        case 20: return "NVML_ERROR_MEMORY";
        case 21: return "NVML_ERROR_NO_DATA";
        case 22: return "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED";
        case kErrorInsufficientResources: return "NVML_ERROR_INSUFFICIENT_RESOURCES";
        case 24: return "NVML_ERROR_FREQ_NOT_SUPPORTED";
        case 25: return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
        case kErrorUnknown: return "NVML_ERROR_UNKNOWN";
        default: return "NVML_ERROR_" + std::to_string(code);
    }
}

Error call_error(const char* call, const DeviceRef* d, int code) {
    std::string where;
    if (d) {
        where = "gpu " + std::to_string(d->gpu);
        if (d->mig >= 0) where += ", mig " + std::to_string(d->mig);
    }
    return Error{std::string(call) + "(" + where + "): " + return_code_name(code) + " (" +
                 std::to_string(code) + ")"};
}

std::string NvmlLibrary::resolve_path(const std::string& configured) {
    if (!configured.empty()) return configured;
    const char* env = std::getenv("XPART_NVML_LIBRARY");
    return env && *env ? env : "libnvidia-ml.so.1";
}

std::string NvmlLibrary::describe(int code) const {
    std::string text = return_code_name(code) + " (" + std::to_string(code) + ")";
    const char* words = api_.error_string ? api_.error_string(code) : nullptr;
    if (words && *words) text += std::string(" \"") + words + "\"";
    return text;
}

namespace {

// The absolute file behind a handle (dlopen by soname searches the linker path).
std::string loaded_file(void* handle, const std::string& fallback) {
    struct link_map* map = nullptr;
    if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
        return map->l_name;
    return fallback;
}

template <class Fn>
bool resolve(void* handle, const char* symbol, Fn& out) {
    void* p = ::dlsym(handle, symbol);
    out = reinterpret_cast<Fn>(p);
    return p != nullptr;
}

}  // namespace

Result<std::shared_ptr<const NvmlLibrary>> NvmlLibrary::load(const std::string& path) {
    // One instance per path for the whole process: dlopen once, never dlclose.
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<const NvmlLibrary>> loaded;
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = loaded.find(path); it != loaded.end()) return it->second;

    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = ::dlerror();
        return Error{"NVML library '" + path + "' could not be loaded: " +
                     (why ? why : "unknown dlopen error")};
    }
    std::shared_ptr<NvmlLibrary> lib(new NvmlLibrary());
    lib->path_ = path;
    lib->file_ = loaded_file(handle, path);
    lib->handle_ = handle;
    Api& a = lib->api_;
    struct Required {
        const char* symbol;
        bool found;
    };
    const Required required[] = {
        {"nvmlInit_v2", resolve(handle, "nvmlInit_v2", a.init_v2)},
        {"nvmlShutdown", resolve(handle, "nvmlShutdown", a.shutdown)},
        {"nvmlDeviceGetCount_v2", resolve(handle, "nvmlDeviceGetCount_v2", a.device_get_count_v2)},
        {"nvmlDeviceGetHandleByIndex_v2",
         resolve(handle, "nvmlDeviceGetHandleByIndex_v2", a.device_get_handle_by_index_v2)},
        {"nvmlDeviceGetMigMode", resolve(handle, "nvmlDeviceGetMigMode", a.device_get_mig_mode)},
        {"nvmlDeviceGetMaxMigDeviceCount",
         resolve(handle, "nvmlDeviceGetMaxMigDeviceCount", a.device_get_max_mig_device_count)},
        {"nvmlDeviceGetMigDeviceHandleByIndex",
         resolve(handle, "nvmlDeviceGetMigDeviceHandleByIndex",
                 a.device_get_mig_device_handle_by_index)},
        {"nvmlDeviceGetGpuInstanceId",
         resolve(handle, "nvmlDeviceGetGpuInstanceId", a.device_get_gpu_instance_id)},
        {"nvmlDeviceGetComputeInstanceId",
         resolve(handle, "nvmlDeviceGetComputeInstanceId", a.device_get_compute_instance_id)},
        {"nvmlDeviceGetUUID", resolve(handle, "nvmlDeviceGetUUID", a.device_get_uuid)},
        {"nvmlDeviceGetAttributes_v2",
         resolve(handle, "nvmlDeviceGetAttributes_v2", a.device_get_attributes_v2)},
        {"nvmlDeviceGetMinorNumber",
         resolve(handle, "nvmlDeviceGetMinorNumber", a.device_get_minor_number)},
        {"nvmlDeviceGetPciInfo_v3",
         resolve(handle, "nvmlDeviceGetPciInfo_v3", a.device_get_pci_info_v3)},
        {"nvmlDeviceGetName", resolve(handle, "nvmlDeviceGetName", a.device_get_name)},
        {"nvmlDeviceGetMemoryInfo",
         resolve(handle, "nvmlDeviceGetMemoryInfo", a.device_get_memory_info)},
        {"nvmlDeviceGetCpuAffinity",
         resolve(handle, "nvmlDeviceGetCpuAffinity", a.device_get_cpu_affinity)},
        {"nvmlDeviceGetMemoryAffinity",
         resolve(handle, "nvmlDeviceGetMemoryAffinity", a.device_get_memory_affinity)},
    };
    resolve(handle, "nvmlErrorString", a.error_string);  // optional: only for messages
    for (const Required& r : required) {
        if (!r.found) {
            ::dlclose(handle);
            return Error{"NVML library '" + path + "' lacks " + r.symbol +
                         " (driver too old for MIG discovery?)"};
        }
    }
    loaded.emplace(path, lib);
    return std::shared_ptr<const NvmlLibrary>(lib);
}

void* NvmlLibrary::symbol(const char* name) const { return ::dlsym(handle_, name); }

// --- NvmlSession ------------------------------------------------------------------------------

Result<NvmlSession> NvmlSession::open(std::shared_ptr<const NvmlLibrary> lib) {
    int rc = lib->api().init_v2();
    if (rc != kSuccess) return Error{"nvmlInit_v2: " + lib->describe(rc)};
    return NvmlSession(std::move(lib));
}

NvmlSession::NvmlSession(NvmlSession&& o) noexcept : lib_(std::move(o.lib_)) {}

NvmlSession::~NvmlSession() {
    if (lib_) lib_->api().shutdown();
}

Result<unsigned> NvmlSession::device_count() const {
    unsigned n = 0;
    int rc = lib_->api().device_get_count_v2(&n);
    if (rc != kSuccess) return call_error("nvmlDeviceGetCount_v2", nullptr, rc);
    return n;
}

Result<DeviceRef> NvmlSession::device(unsigned index) const {
    DeviceRef d{nullptr, index, -1};
    int rc = lib_->api().device_get_handle_by_index_v2(index, &d.handle);
    if (rc != kSuccess) return call_error("nvmlDeviceGetHandleByIndex_v2", &d, rc);
    if (!d.handle) return call_error("nvmlDeviceGetHandleByIndex_v2", &d, kErrorUnknown);
    return d;
}

Result<std::optional<MigMode>> NvmlSession::mig_mode(const DeviceRef& d) const {
    MigMode m;
    int rc = lib_->api().device_get_mig_mode(d.handle, &m.current, &m.pending);
    if (rc == kErrorNotSupported) return std::optional<MigMode>();
    if (rc != kSuccess) return call_error("nvmlDeviceGetMigMode", &d, rc);
    return std::optional<MigMode>(m);
}

namespace {
// A call whose only output is one unsigned (ids, counts, the minor number).
template <class Fn>
Result<unsigned> unsigned_call(Fn fn, const char* name, const DeviceRef& d) {
    unsigned value = 0;
    int rc = fn(d.handle, &value);
    if (rc != kSuccess) return call_error(name, &d, rc);
    return value;
}
}  // namespace

Result<unsigned> NvmlSession::max_mig_device_count(const DeviceRef& d) const {
    return unsigned_call(lib_->api().device_get_max_mig_device_count, "nvmlDeviceGetMaxMigDeviceCount", d);
}

Result<std::optional<DeviceRef>> NvmlSession::mig_device(const DeviceRef& parent,
                                                         unsigned index) const {
    DeviceRef m{nullptr, parent.gpu, static_cast<int>(index)};
    int rc = lib_->api().device_get_mig_device_handle_by_index(parent.handle, index, &m.handle);
    if (rc == kErrorNotFound || rc == kErrorInvalidArgument) return std::optional<DeviceRef>();
    if (rc != kSuccess) return call_error("nvmlDeviceGetMigDeviceHandleByIndex", &m, rc);
    if (!m.handle) return call_error("nvmlDeviceGetMigDeviceHandleByIndex", &m, kErrorUnknown);
    return std::optional<DeviceRef>(m);
}

Result<unsigned> NvmlSession::gpu_instance_id(const DeviceRef& d) const {
    return unsigned_call(lib_->api().device_get_gpu_instance_id, "nvmlDeviceGetGpuInstanceId", d);
}

Result<unsigned> NvmlSession::compute_instance_id(const DeviceRef& d) const {
    return unsigned_call(lib_->api().device_get_compute_instance_id, "nvmlDeviceGetComputeInstanceId", d);
}

namespace {
// A C string from a fixed buffer that the library may not have terminated.
std::string bounded(const char* buf, std::size_t size) {
    std::size_t n = 0;
    while (n < size && buf[n] != '\0') ++n;
    return std::string(buf, n);
}
}  // namespace

Result<std::string> NvmlSession::uuid(const DeviceRef& d) const {
    char buf[kUuidBufferSize] = {};
    int rc = lib_->api().device_get_uuid(d.handle, buf, sizeof buf);
    if (rc != kSuccess) return call_error("nvmlDeviceGetUUID", &d, rc);
    return bounded(buf, sizeof buf);
}

Result<DeviceAttributes> NvmlSession::attributes(const DeviceRef& d) const {
    DeviceAttributes a{};
    int rc = lib_->api().device_get_attributes_v2(d.handle, &a);
    if (rc != kSuccess) return call_error("nvmlDeviceGetAttributes_v2", &d, rc);
    return a;
}

Result<unsigned> NvmlSession::minor_number(const DeviceRef& d) const {
    return unsigned_call(lib_->api().device_get_minor_number, "nvmlDeviceGetMinorNumber", d);
}

Result<PciInfo> NvmlSession::pci_info(const DeviceRef& d) const {
    PciInfo p{};
    int rc = lib_->api().device_get_pci_info_v3(d.handle, &p);
    if (rc != kSuccess) return call_error("nvmlDeviceGetPciInfo_v3", &d, rc);
    return p;
}

Result<std::string> NvmlSession::name(const DeviceRef& d) const {
    char buf[kNameBufferSize] = {};
    int rc = lib_->api().device_get_name(d.handle, buf, sizeof buf);
    if (rc != kSuccess) return call_error("nvmlDeviceGetName", &d, rc);
    return bounded(buf, sizeof buf);
}

Result<Memory> NvmlSession::memory_info(const DeviceRef& d) const {
    Memory m{};
    int rc = lib_->api().device_get_memory_info(d.handle, &m);
    if (rc != kSuccess) return call_error("nvmlDeviceGetMemoryInfo", &d, rc);
    return m;
}

namespace {
constexpr unsigned kMaskWords = 64;  // 4096 CPUs
constexpr unsigned kBitsPerWord = sizeof(unsigned long) * 8;
}  // namespace

Result<std::vector<unsigned>> NvmlSession::cpu_affinity(const DeviceRef& d) const {
    unsigned long mask[kMaskWords] = {};
    int rc = lib_->api().device_get_cpu_affinity(d.handle, kMaskWords, mask);
    if (rc != kSuccess) return call_error("nvmlDeviceGetCpuAffinity", &d, rc);
    std::vector<unsigned> cpus;
    for (unsigned w = 0; w < kMaskWords; ++w)
        for (unsigned b = 0; b < kBitsPerWord; ++b)
            if (mask[w] & (1UL << b)) cpus.push_back(w * kBitsPerWord + b);
    return cpus;
}

Result<std::optional<int>> NvmlSession::numa_node(const DeviceRef& d) const {
    unsigned long mask[kMaskWords] = {};
    int rc = lib_->api().device_get_memory_affinity(d.handle, kMaskWords, mask,
                                                    kAffinityScopeNode);
    if (rc == kErrorNotSupported) return std::optional<int>();
    if (rc != kSuccess) return call_error("nvmlDeviceGetMemoryAffinity", &d, rc);
    for (unsigned w = 0; w < kMaskWords; ++w)
        for (unsigned b = 0; b < kBitsPerWord; ++b)
            if (mask[w] & (1UL << b)) return std::optional<int>(static_cast<int>(w * kBitsPerWord + b));
    return std::optional<int>();  // an empty mask: no NUMA information
}

}  // namespace xpart::nvml
