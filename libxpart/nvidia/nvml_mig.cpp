#include "libxpart/nvidia/nvml_mig.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace xpart::nvml {

static_assert(sizeof(GiProfileInfoV2) == 152 && offsetof(GiProfileInfoV2, memorySizeMB) == 48 &&
                  offsetof(GiProfileInfoV2, name) == 56,
              "nvmlGpuInstanceProfileInfo_v2_t layout");
static_assert(sizeof(GiPlacement) == 8, "nvmlGpuInstancePlacement_t layout");
static_assert(sizeof(GiInfo) == 24 && offsetof(GiInfo, placement) == 16, "nvmlGpuInstanceInfo_t layout");
static_assert(sizeof(CiProfileInfo) == 36, "nvmlComputeInstanceProfileInfo_t layout");
static_assert(sizeof(ProcessInfo) == 24 && offsetof(ProcessInfo, gpuInstanceId) == 16,
              "nvmlProcessInfo_t layout");

struct MigControl::Calls {
    int (*gi_profile_info_v)(Device, unsigned, GiProfileInfoV2*);
    int (*gi_possible_placements_v2)(Device, unsigned, GiPlacement*, unsigned*);
    int (*gi_list)(Device, unsigned, GpuInstance*, unsigned*);
    int (*gi_info)(GpuInstance, GiInfo*);
    int (*gi_create_with_placement)(Device, unsigned, const GiPlacement*, GpuInstance*);
    int (*gi_destroy)(GpuInstance);
    int (*ci_profile_info)(GpuInstance, unsigned, unsigned, CiProfileInfo*);
    int (*ci_create)(GpuInstance, unsigned, ComputeInstance*);
    int (*ci_list)(GpuInstance, unsigned, ComputeInstance*, unsigned*);
    int (*ci_destroy)(ComputeInstance);
    int (*processes_v3)(Device, unsigned*, ProcessInfo*);
};

namespace {

template <class Fn>
bool bind_one(const NvmlLibrary& lib, const char* name, Fn& out, std::string& missing) {
    out = reinterpret_cast<Fn>(lib.symbol(name));
    if (!out && missing.empty()) missing = name;
    return out != nullptr;
}

constexpr unsigned kMaxInstances = 8;   // GIs of one profile, CIs of one GI: 7 at most today
constexpr unsigned kMaxProcesses = 1024;

}  // namespace

Result<MigControl> MigControl::bind(std::shared_ptr<const NvmlLibrary> lib) {
    auto c = std::make_shared<Calls>();
    std::string missing;
    const NvmlLibrary& l = *lib;
    bind_one(l, "nvmlDeviceGetGpuInstanceProfileInfoV", c->gi_profile_info_v, missing);
    bind_one(l, "nvmlDeviceGetGpuInstancePossiblePlacements_v2", c->gi_possible_placements_v2, missing);
    bind_one(l, "nvmlDeviceGetGpuInstances", c->gi_list, missing);
    bind_one(l, "nvmlGpuInstanceGetInfo", c->gi_info, missing);
    bind_one(l, "nvmlDeviceCreateGpuInstanceWithPlacement", c->gi_create_with_placement, missing);
    bind_one(l, "nvmlGpuInstanceDestroy", c->gi_destroy, missing);
    bind_one(l, "nvmlGpuInstanceGetComputeInstanceProfileInfo", c->ci_profile_info, missing);
    bind_one(l, "nvmlGpuInstanceCreateComputeInstance", c->ci_create, missing);
    bind_one(l, "nvmlGpuInstanceGetComputeInstances", c->ci_list, missing);
    bind_one(l, "nvmlComputeInstanceDestroy", c->ci_destroy, missing);
    bind_one(l, "nvmlDeviceGetComputeRunningProcesses_v3", c->processes_v3, missing);
    if (!missing.empty())
        return Error{"NVML library '" + l.file() + "' lacks " + missing +
                     " (MIG management needs driver R470 or later)"};
    return MigControl(std::move(lib), std::move(c));
}

Result<std::vector<GiProfile>> MigControl::profiles(const DeviceRef& gpu) const {
    std::vector<GiProfile> out;
    for (unsigned index = 0; index < kGiProfileIndexes; ++index) {
        GiProfileInfoV2 info{};
        info.version = kGiProfileInfoV2;
        int rc = calls_->gi_profile_info_v(gpu.handle, index, &info);
        if (rc == kErrorNotSupported || rc == kErrorInvalidArgument) continue;
        if (rc != kSuccess) return call_error("nvmlDeviceGetGpuInstanceProfileInfoV", &gpu, rc);
        GiProfile p;
        p.index = index;
        p.id = info.id;
        std::string name(info.name, ::strnlen(info.name, sizeof info.name));
        p.name = name.rfind("MIG ", 0) == 0 ? name.substr(4) : name;
        p.slices = info.sliceCount;
        p.max_count = info.instanceCount;
        p.memory_mib = info.memorySizeMB;
        GiPlacement places[kMaxInstances * 2] = {};
        unsigned n = sizeof places / sizeof places[0];
        rc = calls_->gi_possible_placements_v2(gpu.handle, info.id, places, &n);
        if (rc != kSuccess)
            return call_error("nvmlDeviceGetGpuInstancePossiblePlacements_v2", &gpu, rc);
        p.placements.assign(places, places + n);
        out.push_back(std::move(p));
    }
    return out;
}

Result<GiInfo> MigControl::gpu_instance_info(const DeviceRef& gpu, GpuInstance gi) const {
    GiInfo info{};
    int rc = calls_->gi_info(gi, &info);
    if (rc != kSuccess) return call_error("nvmlGpuInstanceGetInfo", &gpu, rc);
    return info;
}

Result<std::vector<GiState>> MigControl::gpu_instances(const DeviceRef& gpu,
                                                       const std::vector<GiProfile>& profiles) const {
    std::vector<GiState> out;
    for (const GiProfile& p : profiles) {
        GpuInstance list[kMaxInstances] = {};
        unsigned n = kMaxInstances;
        int rc = calls_->gi_list(gpu.handle, p.id, list, &n);
        if (rc != kSuccess) return call_error("nvmlDeviceGetGpuInstances", &gpu, rc);
        for (unsigned i = 0; i < n && i < kMaxInstances; ++i) {
            auto info = gpu_instance_info(gpu, list[i]);
            if (!info) return info.error();
            GiState g;
            g.handle = list[i];
            g.id = info->id;
            g.profile_id = info->profileId;
            g.placement = info->placement;
            // The real driver (R580, H100) answers NOT_SUPPORTED for a CI profile until this
            // process has asked for that profile's info: ask first, then list by its id.
            for (unsigned index = 0; index < kCiProfileIndexes; ++index) {
                CiProfileInfo ci_profile{};
                if (calls_->ci_profile_info(list[i], index, 0, &ci_profile) != kSuccess) continue;
                ComputeInstance cis[kMaxInstances] = {};
                unsigned m = kMaxInstances;
                int crc = calls_->ci_list(list[i], ci_profile.id, cis, &m);
                if (crc != kSuccess) return call_error("nvmlGpuInstanceGetComputeInstances", &gpu, crc);
                for (unsigned c = 0; c < m && c < kMaxInstances; ++c)
                    g.compute_instances.push_back({cis[c], ci_profile.id, ci_profile.sliceCount});
            }
            out.push_back(std::move(g));
        }
    }
    std::sort(out.begin(), out.end(), [](const GiState& a, const GiState& b) {
        return a.placement.start < b.placement.start;
    });
    return out;
}

Result<std::vector<ProcessInfo>> MigControl::processes(const DeviceRef& gpu) const {
    std::vector<ProcessInfo> list(kMaxProcesses);
    unsigned n = kMaxProcesses;
    int rc = calls_->processes_v3(gpu.handle, &n, list.data());
    if (rc != kSuccess) return call_error("nvmlDeviceGetComputeRunningProcesses_v3", &gpu, rc);
    list.resize(std::min(n, kMaxProcesses));
    return list;
}

Result<GpuInstance> MigControl::create_gpu_instance(const DeviceRef& gpu, const GiProfile& profile,
                                                    unsigned start, int* code) const {
    GiPlacement where{start, 0};
    for (const GiPlacement& p : profile.placements)
        if (p.start == start) where.size = p.size;
    GpuInstance gi = nullptr;
    int rc = calls_->gi_create_with_placement(gpu.handle, profile.id, &where, &gi);
    if (code) *code = rc;
    if (rc != kSuccess) {
        Error e = call_error("nvmlDeviceCreateGpuInstanceWithPlacement", &gpu, rc);
        e.message += " (" + profile.name + " at " + std::to_string(start) + ")";
        return e;
    }
    return gi;
}

Status MigControl::create_full_compute_instance(const DeviceRef& gpu, GpuInstance gi) const {
    int best = -1;  // the CI profile's id (equal to its index on every driver seen)
    unsigned best_slices = 0;
    for (unsigned index = 0; index < kCiProfileIndexes; ++index) {
        CiProfileInfo info{};
        int rc = calls_->ci_profile_info(gi, index, 0, &info);
        if (rc != kSuccess) continue;
        if (info.sliceCount > best_slices) {
            best = static_cast<int>(info.id);
            best_slices = info.sliceCount;
        }
    }
    if (best < 0) return call_error("nvmlGpuInstanceGetComputeInstanceProfileInfo", &gpu, kErrorNotSupported);
    return create_compute_instance(gpu, gi, static_cast<unsigned>(best));
}

Status MigControl::create_compute_instance(const DeviceRef& gpu, GpuInstance gi, unsigned profile_id) const {
    // The driver knows a CI profile in this process only once its info was asked for.
    CiProfileInfo info{};
    (void)calls_->ci_profile_info(gi, profile_id, 0, &info);
    ComputeInstance ci = nullptr;
    int rc = calls_->ci_create(gi, profile_id, &ci);
    if (rc != kSuccess) return call_error("nvmlGpuInstanceCreateComputeInstance", &gpu, rc);
    return ok_status();
}

Status MigControl::destroy_compute_instance(const DeviceRef& gpu, ComputeInstance ci) const {
    int rc = calls_->ci_destroy(ci);
    if (rc != kSuccess) return call_error("nvmlComputeInstanceDestroy", &gpu, rc);
    return ok_status();
}

Status MigControl::destroy_gpu_instance(const DeviceRef& gpu, GpuInstance gi, int* code) const {
    int rc = calls_->gi_destroy(gi);
    if (code) *code = rc;
    if (rc != kSuccess) return call_error("nvmlGpuInstanceDestroy", &gpu, rc);
    return ok_status();
}

}  // namespace xpart::nvml
