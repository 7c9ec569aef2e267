// The fake NVML's MIG management entry points: GPU/compute instance profile info, placements
// and capacity, creating, listing, describing and destroying GPU and compute instances, the
// processes running on a GPU or MIG device, and setting the MIG mode. Every reshaping call goes
// through mutate() (fake_state.cpp), so other processes see the same node.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/fake_nvml/fake_state.hpp"
#include "sim/fake_nvml/nvml_abi.hpp"

using namespace xpart::sim::fake_nvml;

// The processes the state file holds on this GPU (or MIG device), with the real count protocol.
NVML_API int nvmlDeviceGetComputeRunningProcesses_v3(void* device, unsigned* count,
                                                     nvmlProcessInfo_st* infos) {
    return device_call("nvmlDeviceGetComputeRunningProcesses_v3", device,
                       [&](State& s, const FakeDevice& d) {
        if (!count) return int(kInvalidArgument);
        refresh_processes(s);
        std::vector<const HeldProcess*> list;
        for (const HeldProcess& p : s.processes)
            if (p.gpu == d.spec->uuid && alive(p.pid) &&
                (!d.is_mig || (p.mig && p.gi == d.mig.gpu_instance->gi &&
                               p.ci == d.mig.compute_instance->ci)))
                list.push_back(&p);
        const unsigned n = static_cast<unsigned>(list.size());
        if (n > 0 && (!infos || *count < n)) {
            *count = n;
            return int(kInsufficientSize);
        }
        const bool mig = mig_on(*d.spec);
        for (unsigned i = 0; i < n; ++i) {
            infos[i] = {};
            infos[i].pid = static_cast<unsigned>(list[i]->pid);
            infos[i].usedGpuMemory = 512ULL << 20;  // a CUDA context, roughly
            infos[i].gpuInstanceId = mig && list[i]->mig ? list[i]->gi : kNoInstance;
            infos[i].computeInstanceId = mig && list[i]->mig ? list[i]->ci : kNoInstance;
        }
        *count = n;
        return int(kSuccess);
    });
}

// ---- MIG reconfiguration ----

namespace xpart::sim::fake_nvml {
namespace {

// Only a MIG-capable GPU (not a MIG device) with MIG on has instance profiles.
int check_mig_gpu(const FakeDevice& d) {
    if (d.is_mig) return kInvalidArgument;
    if (!d.product || !d.product->mig_capable || !mig_on(*d.spec)) return kNotSupported;
    return kSuccess;
}

template <class Info>
void fill_gi_profile(Info& out, const MigProfileSpec& p) {
    out.id = p.id;
    out.isP2pSupported = 0;
    out.sliceCount = p.slices;
    out.instanceCount = p.max_count;
    out.multiprocessorCount = p.sms;
    out.copyEngineCount = p.copy_engines;
    out.decoderCount = p.decoders;
    out.encoderCount = p.encoders;
    out.jpegCount = p.jpegs;
    out.ofaCount = p.ofas;
    out.memorySizeMB = p.memory_mib;
}

// A compute-instance profile of a GPU instance; NOT_SUPPORTED for sizes it cannot hold.
template <class Info>
int fill_ci_profile(Info& out, const GpuProductSpec& product, const MigProfileSpec& gi,
                    unsigned index) {
    // The real H100 (r580): indices past the header's range are INVALID_ARGUMENT.
    if (index >= 8) return kInvalidArgument;
    const unsigned slices = ci_slices_of(index);
    if (!slices || slices > gi.slices) return kNotSupported;
    out.id = index;
    out.sliceCount = slices;
    out.instanceCount = gi.slices / slices;
    // Smaller than its GI: whole 1-slice SM groups (as nvmlDeviceGetAttributes_v2 says).
    out.multiprocessorCount = slices == gi.slices ? gi.sms : slices * product.profiles.front().sms;
    out.sharedCopyEngineCount = gi.copy_engines;
    out.sharedDecoderCount = gi.decoders;
    out.sharedEncoderCount = gi.encoders;
    out.sharedJpegCount = gi.jpegs;
    out.sharedOfaCount = gi.ofas;
    return kSuccess;
}

struct GiView {  // a GI handle resolved against the current state
    NvidiaGpuSpec* gpu = nullptr;
    GpuInstanceSpec* gi = nullptr;
    const MigProfileSpec* profile = nullptr;
    const GpuProductSpec* product = nullptr;
};
GiView resolve(State& s, unsigned gpu, unsigned gi) {
    GiView v;
    if (gpu >= s.gpus.size()) return v;
    v.gpu = &s.spec.nvidia.gpus[gpu];
    v.product = s.gpus[gpu]->product;
    v.gi = find_gi(*v.gpu, gi);
    if (v.gi && v.product) v.profile = v.product->find_profile(v.gi->profile);
    if (!v.profile) v.gi = nullptr;
    return v;
}

// placement: null for the first free one. A size not the profile's fits nowhere.
int create_gi(State& s, const FakeDevice& d, unsigned profile_id,
              const nvmlGpuInstancePlacement_st* placement, void** out) {
    if (!out) return kInvalidArgument;
    if (int rc = check_mig_gpu(d)) return rc;
    const MigProfileSpec* p = profile_by_id(*d.product, profile_id);
    if (!p) return kInvalidArgument;
    if (placement && placement->size != p->memory_slices) return kInsufficientResources;
    const unsigned* start = placement ? &placement->start : nullptr;
    const unsigned i = d.gpu;
    unsigned id = 0;
    int rc = mutate(s, i, [&]() -> int {
        NvidiaGpuSpec& g = s.spec.nvidia.gpus[i];
        if (!mig_on(g)) return kNotSupported;
        unsigned at = 0;
        if (start) {
            if (int r = can_place(*d.product, g, *p, *start)) return r;
            at = *start;
        } else {  // the first placement that fits
            auto it = std::find_if(p->starts.begin(), p->starts.end(),
                                   [&](unsigned st) { return can_place(*d.product, g, *p, st) == 0; });
            if (it == p->starts.end()) return kInsufficientResources;
            at = *it;
        }
        GpuInstanceSpec gi;
        gi.profile = p->name;
        gi.start = at;
        gi.gi = id = p->gi_base + at / p->memory_slices;
        g.instances.push_back(std::move(gi));
        return kSuccess;
    });
    if (rc == kSuccess) *out = s.gi_handles.at({i, id}).get();
    return rc;
}

}  // namespace
}  // namespace xpart::sim::fake_nvml

NVML_API int nvmlDeviceSetMigMode(void* device, unsigned mode, int* activation) {
    return device_call("nvmlDeviceSetMigMode", device, [&](State& s, const FakeDevice& d) {
        if (!activation || d.is_mig || mode > 1) return int(kInvalidArgument);
        if (!d.product || !d.product->mig_capable) return int(kNotSupported);
        const unsigned i = d.gpu;
        int rc = mutate(s, i, [&]() -> int {
            NvidiaGpuSpec& g = s.spec.nvidia.gpus[i];
            if (mode == 0 && (!g.instances.empty() || held(s, g.uuid, -1, -1))) return kInUse;
            // The real H100 (r580) switched at once, with no reset pending.
            g.mig = mode ? MigState::Enabled : MigState::Disabled;
            return kSuccess;
        });
        if (rc == kSuccess) *activation = kSuccess;
        return rc;
    });
}

NVML_API int nvmlDeviceGetGpuInstanceProfileInfo(void* device, unsigned index,
                                                 nvmlGpuInstanceProfileInfo_st* info) {
    return device_call("nvmlDeviceGetGpuInstanceProfileInfo", device, [&](State&, const FakeDevice& d) {
        if (!info) return int(kInvalidArgument);
        if (int rc = check_mig_gpu(d)) return rc;
        const MigProfileSpec* p = profile_by_index(*d.product, index);
        if (!p) return int(kNotSupported);
        *info = {};
        fill_gi_profile(*info, *p);
        return int(kSuccess);
    });
}

NVML_API int nvmlDeviceGetGpuInstanceProfileInfoV(void* device, unsigned index,
                                                  nvmlGpuInstanceProfileInfo_v2_st* info) {
    return device_call("nvmlDeviceGetGpuInstanceProfileInfoV", device, [&](State&, const FakeDevice& d) {
        if (!info) return int(kInvalidArgument);
        if (info->version != ((2u << 24) | sizeof(nvmlGpuInstanceProfileInfo_v2_st)))
            return int(kArgumentVersionMismatch);
        if (int rc = check_mig_gpu(d)) return rc;
        const MigProfileSpec* p = profile_by_index(*d.product, index);
        if (!p) return int(kNotSupported);
        const unsigned version = info->version;
        *info = {};
        info->version = version;
        fill_gi_profile(*info, *p);
        std::snprintf(info->name, sizeof info->name, "MIG %s", p->name.c_str());
        return int(kSuccess);
    });
}

// Every placement of the profile, free or not, as the real driver lists them.
NVML_API int nvmlDeviceGetGpuInstancePossiblePlacements_v2(void* device, unsigned profile_id,
                                                           nvmlGpuInstancePlacement_st* placements,
                                                           unsigned* count) {
    return device_call("nvmlDeviceGetGpuInstancePossiblePlacements_v2", device,
                       [&](State&, const FakeDevice& d) {
        if (!count) return int(kInvalidArgument);
        if (int rc = check_mig_gpu(d)) return rc;
        const MigProfileSpec* p = profile_by_id(*d.product, profile_id);
        if (!p) return int(kInvalidArgument);
        const unsigned n = static_cast<unsigned>(p->starts.size());
        if (!placements) {
            *count = n;
            return int(kSuccess);
        }
        if (*count < n) {
            *count = n;
            return int(kInsufficientSize);
        }
        for (unsigned k = 0; k < n; ++k) placements[k] = {p->starts[k], p->memory_slices};
        *count = n;
        return int(kSuccess);
    });
}

NVML_API int nvmlDeviceGetGpuInstanceRemainingCapacity(void* device, unsigned profile_id,
                                                       unsigned* count) {
    return device_call("nvmlDeviceGetGpuInstanceRemainingCapacity", device,
                       [&](State& s, const FakeDevice& d) {
        if (!count) return int(kInvalidArgument);
        if (int rc = check_mig_gpu(d)) return rc;
        const MigProfileSpec* p = profile_by_id(*d.product, profile_id);
        if (!p) return int(kInvalidArgument);
        // Place greedily on a copy: the placements are aligned, so first fit is the most.
        NvidiaGpuSpec g = s.spec.nvidia.gpus[d.gpu];
        unsigned n = 0;
        for (bool placed = true; placed;) {
            placed = false;
            for (unsigned st : p->starts)
                if (can_place(*d.product, g, *p, st) == kSuccess) {
                    g.instances.push_back({p->name, st, 0, {}});
                    ++n;
                    placed = true;
                    break;
                }
        }
        *count = n;
        return int(kSuccess);
    });
}

NVML_API int nvmlDeviceCreateGpuInstance(void* device, unsigned profile_id, void** gi) {
    return device_call("nvmlDeviceCreateGpuInstance", device, [&](State& s, const FakeDevice& d) {
        return create_gi(s, d, profile_id, nullptr, gi);
    });
}

NVML_API int nvmlDeviceCreateGpuInstanceWithPlacement(void* device, unsigned profile_id,
                                                      const nvmlGpuInstancePlacement_st* placement,
                                                      void** gi) {
    return device_call("nvmlDeviceCreateGpuInstanceWithPlacement", device,
                       [&](State& s, const FakeDevice& d) {
        if (!placement) return int(kInvalidArgument);
        return create_gi(s, d, profile_id, placement, gi);
    });
}

NVML_API int nvmlDeviceGetGpuInstances(void* device, unsigned profile_id, void** out,
                                       unsigned* count) {
    return device_call("nvmlDeviceGetGpuInstances", device, [&](State& s, const FakeDevice& d) {
        if (!out || !count) return int(kInvalidArgument);
        if (int rc = check_mig_gpu(d)) return rc;
        const MigProfileSpec* p = profile_by_id(*d.product, profile_id);
        if (!p) return int(kInvalidArgument);
        // Like the real call, the buffer holds the profile's instanceCount entries.
        std::vector<unsigned> ids;
        for (const GpuInstanceSpec& gi : d.spec->instances)
            if (gi.profile == p->name) ids.push_back(gi.gi);
        std::sort(ids.begin(), ids.end());
        for (std::size_t k = 0; k < ids.size(); ++k) out[k] = s.gi_handles.at({d.gpu, ids[k]}).get();
        *count = static_cast<unsigned>(ids.size());
        return int(kSuccess);
    });
}

NVML_API int nvmlDeviceGetGpuInstanceById(void* device, unsigned id, void** out) {
    return device_call("nvmlDeviceGetGpuInstanceById", device, [&](State& s, const FakeDevice& d) {
        if (!out) return int(kInvalidArgument);
        if (int rc = check_mig_gpu(d)) return rc;
        auto it = s.gi_handles.find({d.gpu, id});
        if (it == s.gi_handles.end() || !s.valid_gi.count(it->second.get())) return int(kNotFound);
        *out = it->second.get();
        return int(kSuccess);
    });
}

NVML_API int nvmlGpuInstanceGetInfo(void* gpu_instance, nvmlGpuInstanceInfo_st* info) {
    return gi_call("nvmlGpuInstanceGetInfo", gpu_instance, [&](State& s, const FakeGi& h) {
        if (!info) return int(kInvalidArgument);
        GiView v = resolve(s, h.gpu, h.gi);
        if (!v.gi) return int(kInvalidArgument);
        *info = {};
        info->device = s.gpus[h.gpu].get();
        info->id = v.gi->gi;
        info->profileId = v.profile->id;
        info->placement = {v.gi->start, v.profile->memory_slices};
        return int(kSuccess);
    });
}

NVML_API int nvmlGpuInstanceDestroy(void* gpu_instance) {
    return gi_call("nvmlGpuInstanceDestroy", gpu_instance, [&](State& s, const FakeGi& h) {
        const FakeGi key = h;  // h outlives the call, but copy: mutate rebuilds the sets
        return mutate(s, key.gpu, [&]() -> int {
            NvidiaGpuSpec& g = s.spec.nvidia.gpus[key.gpu];
            auto it = std::find_if(g.instances.begin(), g.instances.end(),
                                   [&](const GpuInstanceSpec& gi) { return gi.gi == key.gi; });
            if (it == g.instances.end()) return kInvalidArgument;
            if (!it->compute_instances.empty() || held(s, g.uuid, int(key.gi), -1)) return kInUse;
            g.instances.erase(it);
            return kSuccess;
        });
    });
}

NVML_API int nvmlGpuInstanceGetComputeInstanceProfileInfo(void* gpu_instance, unsigned profile,
                                                          unsigned eng_profile,
                                                          nvmlComputeInstanceProfileInfo_st* info) {
    return gi_call("nvmlGpuInstanceGetComputeInstanceProfileInfo", gpu_instance,
                   [&](State& s, const FakeGi& h) {
        if (!info || eng_profile != 0) return int(kInvalidArgument);
        GiView v = resolve(s, h.gpu, h.gi);
        if (!v.gi) return int(kInvalidArgument);
        nvmlComputeInstanceProfileInfo_st out{};
        if (int rc = fill_ci_profile(out, *v.product, *v.profile, profile)) return rc;
        s.ci_profiles_known.insert({h.gpu, h.gi, profile});
        *info = out;
        return int(kSuccess);
    });
}

NVML_API int nvmlGpuInstanceGetComputeInstanceProfileInfoV(void* gpu_instance, unsigned profile,
                                                           unsigned eng_profile,
                                                           nvmlComputeInstanceProfileInfo_v2_st* info) {
    return gi_call("nvmlGpuInstanceGetComputeInstanceProfileInfoV", gpu_instance,
                   [&](State& s, const FakeGi& h) {
        if (!info || eng_profile != 0) return int(kInvalidArgument);
        if (info->version != ((2u << 24) | sizeof(nvmlComputeInstanceProfileInfo_v2_st)))
            return int(kArgumentVersionMismatch);
        GiView v = resolve(s, h.gpu, h.gi);
        if (!v.gi) return int(kInvalidArgument);
        nvmlComputeInstanceProfileInfo_v2_st out{};
        if (int rc = fill_ci_profile(out, *v.product, *v.profile, profile)) return rc;
        s.ci_profiles_known.insert({h.gpu, h.gi, profile});
        out.version = info->version;
        const std::string prefix =
            out.sliceCount < v.profile->slices ? std::to_string(out.sliceCount) + "c." : "";
        std::snprintf(out.name, sizeof out.name, "MIG %s%s", prefix.c_str(), v.profile->name.c_str());
        *info = out;
        return int(kSuccess);
    });
}

NVML_API int nvmlGpuInstanceCreateComputeInstance(void* gpu_instance, unsigned profile, void** out) {
    return gi_call("nvmlGpuInstanceCreateComputeInstance", gpu_instance,
                   [&](State& s, const FakeGi& h) {
        if (!out) return int(kInvalidArgument);
        const FakeGi key = h;
        unsigned id = 0;
        int rc = mutate(s, key.gpu, [&]() -> int {
            GiView v = resolve(s, key.gpu, key.gi);
            if (!v.gi) return kInvalidArgument;
            const unsigned slices = ci_slices_of(profile);
            if (!slices || slices > v.profile->slices) return kNotSupported;
            unsigned used = 0;
            for (const auto& ci : v.gi->compute_instances) used += ci.slices;
            if (used + slices > v.profile->slices) return kInsufficientResources;
            auto taken = [&](unsigned c) {
                return std::any_of(v.gi->compute_instances.begin(), v.gi->compute_instances.end(),
                                   [&](const ComputeInstanceSpec& ci) { return ci.ci == c; });
            };
            while (taken(id)) ++id;
            v.gi->compute_instances.push_back({id, slices, new_mig_uuid(s, v.gpu->uuid)});
            return kSuccess;
        });
        if (rc == kSuccess) {
            s.ci_profiles_known.insert({key.gpu, key.gi, profile});
            *out = s.ci_handles.at({key.gpu, key.gi, id}).get();
        }
        return rc;
    });
}

NVML_API int nvmlGpuInstanceGetComputeInstances(void* gpu_instance, unsigned profile, void** out,
                                                unsigned* count) {
    return gi_call("nvmlGpuInstanceGetComputeInstances", gpu_instance,
                   [&](State& s, const FakeGi& h) {
        if (!out || !count) return int(kInvalidArgument);
        GiView v = resolve(s, h.gpu, h.gi);
        if (!v.gi) return int(kInvalidArgument);
        const unsigned slices = ci_slices_of(profile);
        if (!slices || slices > v.profile->slices) return int(kNotSupported);
        if (!s.ci_profiles_known.count({h.gpu, h.gi, profile})) return int(kNotSupported);
        std::vector<unsigned> ids;
        for (const auto& ci : v.gi->compute_instances)
            if (ci.slices == slices) ids.push_back(ci.ci);
        std::sort(ids.begin(), ids.end());
        for (std::size_t k = 0; k < ids.size(); ++k)
            out[k] = s.ci_handles.at({h.gpu, h.gi, ids[k]}).get();
        *count = static_cast<unsigned>(ids.size());
        return int(kSuccess);
    });
}

NVML_API int nvmlComputeInstanceGetInfo_v2(void* compute_instance, nvmlComputeInstanceInfo_st* info) {
    return ci_call("nvmlComputeInstanceGetInfo_v2", compute_instance, [&](State& s, const FakeCi& h) {
        if (!info) return int(kInvalidArgument);
        GiView v = resolve(s, h.gpu, h.gi);
        if (!v.gi) return int(kInvalidArgument);
        // Placement: the compute instances packed in id order within the GI's slices.
        unsigned start = 0;
        const ComputeInstanceSpec* me = nullptr;
        for (const auto& ci : v.gi->compute_instances) {
            if (ci.ci == h.ci) me = &ci;
            else if (ci.ci < h.ci) start += ci.slices;
        }
        if (!me) return int(kInvalidArgument);
        *info = {};
        info->device = s.gpus[h.gpu].get();
        info->gpuInstance = s.gi_handles.at({h.gpu, h.gi}).get();
        info->id = me->ci;
        info->profileId = ci_index_of(me->slices);
        info->placement = {start, me->slices};
        return int(kSuccess);
    });
}

NVML_API int nvmlComputeInstanceDestroy(void* compute_instance) {
    return ci_call("nvmlComputeInstanceDestroy", compute_instance, [&](State& s, const FakeCi& h) {
        const FakeCi key = h;
        return mutate(s, key.gpu, [&]() -> int {
            GiView v = resolve(s, key.gpu, key.gi);
            if (!v.gi) return kInvalidArgument;
            auto& cis = v.gi->compute_instances;
            auto it = std::find_if(cis.begin(), cis.end(),
                                   [&](const ComputeInstanceSpec& ci) { return ci.ci == key.ci; });
            if (it == cis.end()) return kInvalidArgument;
            if (held(s, v.gpu->uuid, int(key.gi), int(key.ci))) return kInUse;
            cis.erase(it);
            return kSuccess;
        });
    });
}
