// MIG geometry of the fake NVML: the NVML profile indices mapped onto the product tables
// (sim/nvidia_profiles), where a GPU instance may be placed, and fresh MIG uuids for new
// compute instances.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>

#include "sim/fake_nvml/fake_state.hpp"

namespace xpart::sim::fake_nvml {

// NVML_GPU_INSTANCE_PROFILE_* index -> the product table's row (seven_shapes order:
// 1g, 1g+me, 1g double memory, 2g, 3g, 4g, 7g).
const MigProfileSpec* profile_by_index(const GpuProductSpec& p, unsigned index) {
    static const std::map<unsigned, std::size_t> rows = {{0, 0}, {1, 3}, {2, 4}, {3, 5},
                                                          {4, 6}, {7, 1}, {9, 2}};
    auto it = rows.find(index);
    return it == rows.end() || it->second >= p.profiles.size() ? nullptr : &p.profiles[it->second];
}

const MigProfileSpec* profile_by_id(const GpuProductSpec& p, unsigned id) {
    for (const auto& q : p.profiles)
        if (q.id == id) return &q;
    return nullptr;
}

// NVML_COMPUTE_INSTANCE_PROFILE_* index -> compute slices (0: not simulated).
unsigned ci_slices_of(unsigned index) {
    static const unsigned slices[] = {1, 2, 3, 4, 7};
    return index < 5 ? slices[index] : 0;
}
unsigned ci_index_of(unsigned slices) { return slices == 7 ? 4 : slices - 1; }

GpuInstanceSpec* find_gi(NvidiaGpuSpec& g, unsigned id) {
    for (auto& gi : g.instances)
        if (gi.gi == id) return &gi;
    return nullptr;
}

// SUCCESS when p fits at start now; INSUFFICIENT_RESOURCES for a start not the profile's,
// memory slices taken, too few compute slices left or the profile's count reached.
int can_place(const GpuProductSpec& product, const NvidiaGpuSpec& g, const MigProfileSpec& p,
              unsigned start) {
    if (std::find(p.starts.begin(), p.starts.end(), start) == p.starts.end())
        return kInsufficientResources;
    unsigned memory = 0, compute = 0, same = 0, total = 0;
    for (const auto& q : product.profiles) total = std::max(total, q.slices);
    for (const GpuInstanceSpec& gi : g.instances) {
        const MigProfileSpec* q = product.find_profile(gi.profile);
        if (!q) continue;
        memory |= ((1u << q->memory_slices) - 1) << gi.start;
        compute += q->slices;
        same += gi.profile == p.name;
    }
    if ((memory & (((1u << p.memory_slices) - 1) << start)) || compute + p.slices > total ||
        same >= p.max_count)
        return kInsufficientResources;
    return kSuccess;
}

std::uint64_t mix64(std::uint64_t x) {  // splitmix64
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// A fresh version-5-looking MIG uuid from the GPU uuid and the persisted counter: the same
// sequence for the same node, never one in use.
std::string new_mig_uuid(State& s, const std::string& gpu_uuid) {
    std::uint64_t seed = 0xcbf29ce484222325ULL;  // FNV-1a of the GPU uuid
    for (unsigned char c : gpu_uuid) seed = (seed ^ c) * 0x100000001b3ULL;
    for (;;) {
        const std::uint64_t a = mix64(seed ^ mix64(++s.uuid_counter));
        const std::uint64_t b = mix64(a);
        char buf[48];
        std::snprintf(buf, sizeof buf, "MIG-%08x-%04x-5%03x-%04x-%012llx", unsigned(a >> 32),
                      unsigned(a >> 16) & 0xffff, unsigned(a) & 0xfff,
                      (unsigned(b >> 48) & 0x3fff) | 0x8000,
                      static_cast<unsigned long long>(b & 0xffffffffffffULL));
        bool used = false;
        for (const auto& g : s.spec.nvidia.gpus)
            for (const auto& gi : g.instances)
                for (const auto& ci : gi.compute_instances) used = used || ci.uuid == buf;
        if (!used) return buf;
    }
}

}  // namespace xpart::sim::fake_nvml
