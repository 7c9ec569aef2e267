// Internals shared by the files of the fake libnvidia-ml.so.1: the simulated node's state (the
// devices, GPU/compute instance handles, held processes), the reshaping and fault hooks, and
// the templates every entry point runs its body through. All in namespace xpart::sim::fake_nvml: only the
// nvml* C symbols leave the library (libnvidia-ml.map).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sim/nvidia_model.hpp"
#include "sim/spec.hpp"

namespace xpart::sim::fake_nvml {

using namespace xpart::sim;

enum : int {
    kSuccess = 0, kUninitialized = 1, kInvalidArgument = 2, kNotSupported = 3, kNotFound = 6,
    kInsufficientSize = 7, kDriverNotLoaded = 9, kInUse = 19, kInsufficientResources = 23,
    kArgumentVersionMismatch = 25, kUnknown = 999,
};
constexpr unsigned kNoInstance = 0xFFFFFFFF;  // gpuInstanceId/computeInstanceId with MIG off

struct FakeDevice {
    unsigned gpu = 0;                 // NVML index of the GPU (or of the MIG device's parent)
    const NvidiaGpuSpec* spec = nullptr;
    const GpuProductSpec* product = nullptr;
    bool is_mig = false;
    SimMigDevice mig;                 // valid when is_mig
    std::vector<std::unique_ptr<FakeDevice>> migs;  // parent only: by position, not index
};

// GPU and compute instance handles name their instance by ids and are never freed, so a
// client's handle stays valid across other instances' changes (and after its own destroy it is
// merely no longer in the valid set).
struct FakeGi {
    unsigned gpu = 0, gi = 0;
};
struct FakeCi {
    unsigned gpu = 0, gi = 0, ci = 0;
};

// A process the state file says runs on a GPU (tests and tools "hold" instances with it).
struct HeldProcess {
    long pid = 0;
    std::string gpu;  // GPU uuid
    bool mig = false;  // gi/ci given
    unsigned gi = 0, ci = 0;
};

struct State {
    std::mutex mutex;
    unsigned init_count = 0;
    NodeSpec spec;  // its GPUs' mig and instances are the current ones (spec or state file)
    std::map<std::string, int> faults;
    mutable std::map<std::string, unsigned> calls_seen;  // per call name, for "<call>#<n>" faults
    std::vector<std::unique_ptr<FakeDevice>> gpus;
    std::unordered_set<const void*> valid;
    std::map<std::pair<unsigned, unsigned>, std::unique_ptr<FakeGi>> gi_handles;
    std::map<std::tuple<unsigned, unsigned, unsigned>, std::unique_ptr<FakeCi>> ci_handles;
    std::unordered_set<const void*> valid_gi, valid_ci;
    // (gpu, gi, CI profile index) this process asked the profile info of, or created: the real
    // driver (H100, r580) lists a GI's compute instances of a profile only after that
    // (tests/fixtures/real/nvml/h100-80gb-hbm3-r580-ci-listing.txt).
    std::set<std::tuple<unsigned, unsigned, unsigned>> ci_profiles_known;
    std::vector<HeldProcess> processes;
    unsigned long long uuid_counter = 0;
    std::string state_dir;  // the spec's directory: nvml-state.json and nvml-state.lock
    std::string root;       // the simulated root holding this library, "" when outside one
};

// The library's one state (fake_state.cpp), never destroyed.
State& state();

void complain(const std::string& what);

inline bool mig_on(const NvidiaGpuSpec& g) {
    return g.mig == MigState::Enabled || g.mig == MigState::DisablePending;
}

// Loads spec and faults into s (mutex held). Returns an nvmlReturn_t.
int load(State& s);

// The fault configured for this call (on GPU gpu, -1 for none), counting the call; SUCCESS
// when none.
int fault(const State& s, const char* call, int gpu);

// ---- persistent state (nvml-state.json, fake_state.cpp) ----

// A reshaping call on GPU i: exclusive lock, re-read what another process may have written,
// apply(), and when it succeeds write the state back and update handles and the tree.
int mutate(State& s, unsigned i, const std::function<int()>& apply);

// Re-reads only the held processes (a read call must not move any handle).
void refresh_processes(State& s);

bool alive(long pid);
bool held(const State& s, const std::string& gpu, int gi, int ci);

// ---- MIG geometry (fake_mig_geometry.cpp) ----

// NVML_GPU_INSTANCE_PROFILE_* index -> the product table's row; null when not simulated.
const MigProfileSpec* profile_by_index(const GpuProductSpec& p, unsigned index);
const MigProfileSpec* profile_by_id(const GpuProductSpec& p, unsigned id);
// NVML_COMPUTE_INSTANCE_PROFILE_* index -> compute slices (0: not simulated), and back.
unsigned ci_slices_of(unsigned index);
unsigned ci_index_of(unsigned slices);
GpuInstanceSpec* find_gi(NvidiaGpuSpec& g, unsigned id);
// SUCCESS when p fits at start now, else INSUFFICIENT_RESOURCES.
int can_place(const GpuProductSpec& product, const NvidiaGpuSpec& g, const MigProfileSpec& p,
              unsigned start);
// A fresh MIG uuid for a compute instance on the GPU of uuid gpu_uuid.
std::string new_mig_uuid(State& s, const std::string& gpu_uuid);

// ---- the entry points' common checks ----

// Runs body(state) under the lock after the common checks; exceptions become UNKNOWN.
template <class Body>
int call(const char* name, Body body) {
    try {
        State& s = state();
        std::lock_guard<std::mutex> lock(s.mutex);
        if (s.init_count == 0) return kUninitialized;
        return body(s, name);
    } catch (...) {
        return kUnknown;
    }
}

// A device call: validates the handle and applies faults for its GPU.
template <class Body>
int device_call(const char* name, void* handle, Body body) {
    return call(name, [&](State& s, const char* n) {
        if (!handle || !s.valid.count(handle)) return int(kInvalidArgument);
        const FakeDevice& d = *static_cast<const FakeDevice*>(handle);
        if (int f = fault(s, n, static_cast<int>(d.gpu))) return f;
        return body(s, d);
    });
}

// A GPU-instance call: validates the handle and applies faults for its GPU.
template <class Body>
int gi_call(const char* name, void* handle, Body body) {
    return call(name, [&](State& s, const char* n) {
        if (!handle || !s.valid_gi.count(handle)) return int(kInvalidArgument);
        const FakeGi& h = *static_cast<const FakeGi*>(handle);
        if (int f = fault(s, n, static_cast<int>(h.gpu))) return f;
        return body(s, h);
    });
}

// A compute-instance call, likewise.
template <class Body>
int ci_call(const char* name, void* handle, Body body) {
    return call(name, [&](State& s, const char* n) {
        if (!handle || !s.valid_ci.count(handle)) return int(kInvalidArgument);
        const FakeCi& h = *static_cast<const FakeCi*>(handle);
        if (int f = fault(s, n, static_cast<int>(h.gpu))) return f;
        return body(s, h);
    });
}

}  // namespace xpart::sim::fake_nvml
