// The fake libnvidia-ml.so.1: answers the NVML calls of the enumeration sequence for a node
// spec, with the real return codes (UNINITIALIZED before init, INSUFFICIENT_SIZE for short
// buffers, INVALID_ARGUMENT for bad handles, NOT_FOUND for MIG index holes).
// Spec: $XPART_SIM_SPEC, else nvml-spec.json beside this library; re-read at every
// nvmlInit_v2 that initializes, so a test can change the node between discoveries.
// Faults: the spec's nvidia.faults and $XPART_SIM_NVML_FAULTS ("call[@gpu][#n]=code,...").
// Reshaping (GPU/compute instance create/destroy, MIG mode) goes to nvml-state.json beside the
// spec, under an flock on nvml-state.lock, so the next process sees the same node; the spec
// stays read-only. Inside a simulated root the MIG capability files follow the instances.
// No exception leaves a C entry point.
// This file: the enumeration/discovery entry points and the stubs Slurm's gpu/nvml plugin
// binds; fake_nvml_mig.cpp has the MIG management ones, fake_state.* the shared state.
#include <cstdio>
#include <cstring>

#include "sim/fake_nvml/fake_state.hpp"
#include "sim/fake_nvml/nvml_abi.hpp"

namespace xpart::sim::fake_nvml {
namespace {

int copy_string(const std::string& value, char* buf, unsigned len) {
    if (!buf) return kInvalidArgument;
    if (len < value.size() + 1) return kInsufficientSize;
    std::memcpy(buf, value.c_str(), value.size() + 1);
    return kSuccess;
}

void set_bit(unsigned long* mask, unsigned words, unsigned bit) {
    const unsigned per = sizeof(unsigned long) * 8;
    if (bit / per < words) mask[bit / per] |= 1UL << (bit % per);
}

}  // namespace
}  // namespace xpart::sim::fake_nvml

using namespace xpart::sim::fake_nvml;

NVML_API int nvmlInit_v2() {
    try {
        State& s = state();
        std::lock_guard<std::mutex> lock(s.mutex);
        if (s.init_count == 0) {
            if (int rc = load(s)) return rc;
            if (int f = fault(s, "nvmlInit_v2", -1)) return f;
        }
        ++s.init_count;
        return kSuccess;
    } catch (...) {
        return kUnknown;
    }
}

NVML_API int nvmlShutdown() {
    return call("nvmlShutdown", [](State& s, const char*) {
        --s.init_count;
        return int(kSuccess);
    });
}

NVML_API const char* nvmlErrorString(int code) {
    switch (code) {
        case kSuccess: return "Success";
        case kUninitialized: return "Uninitialized";
        case kInvalidArgument: return "Invalid Argument";
        case kNotSupported: return "Not Supported";
        case kNotFound: return "Not Found";
        case kInsufficientSize: return "Insufficient Size";
        case kDriverNotLoaded: return "Driver Not Loaded";
        case kInUse: return "In use by another client";
        case kInsufficientResources: return "Insufficient Resources";
        case kArgumentVersionMismatch: return "Argument version mismatch";
        default: return "Unknown Error";
    }
}

NVML_API int nvmlDeviceGetCount_v2(unsigned* count) {
    return call("nvmlDeviceGetCount_v2", [&](State& s, const char* n) {
        if (int f = fault(s, n, -1)) return f;
        if (!count) return int(kInvalidArgument);
        *count = static_cast<unsigned>(s.gpus.size());
        return int(kSuccess);
    });
}

NVML_API int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
    return call("nvmlDeviceGetHandleByIndex_v2", [&](State& s, const char* n) {
        if (int f = fault(s, n, static_cast<int>(index))) return f;
        if (!device || index >= s.gpus.size()) return int(kInvalidArgument);
        *device = s.gpus[index].get();
        return int(kSuccess);
    });
}

NVML_API int nvmlDeviceGetMigMode(void* device, unsigned* current, unsigned* pending) {
    return device_call("nvmlDeviceGetMigMode", device, [&](State&, const FakeDevice& d) {
        if (!current || !pending) return int(kInvalidArgument);
        if (d.is_mig || !d.product->mig_capable) return int(kNotSupported);
        const MigState m = d.spec->mig;
        *current = m == MigState::Enabled || m == MigState::DisablePending ? 1 : 0;
        *pending = m == MigState::Enabled || m == MigState::EnablePending ? 1 : 0;
        return int(kSuccess);
    });
}

NVML_API int nvmlDeviceGetMaxMigDeviceCount(void* device, unsigned* count) {
    return device_call("nvmlDeviceGetMaxMigDeviceCount", device, [&](State&, const FakeDevice& d) {
        if (!count || d.is_mig) return int(kInvalidArgument);
        if (!d.product->mig_capable) return int(kNotSupported);
        *count = d.product->max_mig_devices;
        return int(kSuccess);
    });
}

NVML_API int nvmlDeviceGetMigDeviceHandleByIndex(void* device, unsigned index, void** mig) {
    return device_call("nvmlDeviceGetMigDeviceHandleByIndex", device, [&](State&, const FakeDevice& d) {
        if (!mig || d.is_mig || !mig_on(*d.spec) || index >= d.product->max_mig_devices)
            return int(kInvalidArgument);
        for (const auto& m : d.migs)
            if (m->mig.index == index) {
                *mig = m.get();
                return int(kSuccess);
            }
        return int(kNotFound);
    });
}

NVML_API int nvmlDeviceGetGpuInstanceId(void* device, unsigned* id) {
    return device_call("nvmlDeviceGetGpuInstanceId", device, [&](State&, const FakeDevice& d) {
        if (!id) return int(kInvalidArgument);
        if (!d.is_mig) return int(kNotSupported);
        *id = d.mig.gpu_instance->gi;
        return int(kSuccess);
    });
}

NVML_API int nvmlDeviceGetComputeInstanceId(void* device, unsigned* id) {
    return device_call("nvmlDeviceGetComputeInstanceId", device, [&](State&, const FakeDevice& d) {
        if (!id) return int(kInvalidArgument);
        if (!d.is_mig) return int(kNotSupported);
        *id = d.mig.compute_instance->ci;
        return int(kSuccess);
    });
}

NVML_API int nvmlDeviceGetUUID(void* device, char* buf, unsigned len) {
    return device_call("nvmlDeviceGetUUID", device, [&](State&, const FakeDevice& d) {
        if (!d.is_mig) return copy_string(d.spec->uuid, buf, len);
        if (d.spec->legacy_mig_uuids)  // R450/R460: MIG-GPU-<uuid>/<gi>/<ci>
            return copy_string("MIG-" + d.spec->uuid + "/" + std::to_string(d.mig.gpu_instance->gi) +
                                   "/" + std::to_string(d.mig.compute_instance->ci),
                               buf, len);
        return copy_string(d.mig.compute_instance->uuid, buf, len);
    });
}

NVML_API int nvmlDeviceGetAttributes_v2(void* device, nvmlDeviceAttributes_st* attr) {
    return device_call("nvmlDeviceGetAttributes_v2", device, [&](State&, const FakeDevice& d) {
        if (!attr) return int(kInvalidArgument);
        *attr = {};
        if (!d.is_mig) {
            attr->multiprocessorCount = d.product->sms;
            attr->memorySizeMB = d.product->memory_mib;
            return int(kSuccess);
        }
        const MigProfileSpec& p = *d.mig.profile;
        const unsigned ci_slices = d.mig.compute_instance->slices;
        // A compute instance smaller than its GPU instance gets whole 1-slice SM groups.
        attr->multiprocessorCount =
            ci_slices == p.slices ? p.sms : ci_slices * d.product->profiles.front().sms;
        attr->sharedCopyEngineCount = p.copy_engines;
        attr->sharedDecoderCount = p.decoders;
        attr->sharedEncoderCount = p.encoders;
        attr->sharedJpegCount = p.jpegs;
        attr->sharedOfaCount = p.ofas;
        attr->gpuInstanceSliceCount = p.slices;
        attr->computeInstanceSliceCount = ci_slices;
        attr->memorySizeMB = p.memory_mib;
        return int(kSuccess);
    });
}

NVML_API int nvmlDeviceGetMinorNumber(void* device, unsigned* minor) {
    return device_call("nvmlDeviceGetMinorNumber", device, [&](State&, const FakeDevice& d) {
        if (!minor) return int(kInvalidArgument);
        if (d.is_mig) return int(kNotSupported);
        *minor = d.spec->minor;
        return int(kSuccess);
    });
}

NVML_API int nvmlDeviceGetPciInfo_v3(void* device, nvmlPciInfo_st* pci) {
    return device_call("nvmlDeviceGetPciInfo_v3", device, [&](State&, const FakeDevice& d) {
        if (!pci) return int(kInvalidArgument);
        *pci = {};
        unsigned domain = 0, bus = 0, dev = 0, fn = 0;
        if (std::sscanf(d.spec->pci_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4)
            return int(kUnknown);
        pci->domain = domain;
        pci->bus = bus;
        pci->device = dev;
        pci->pciDeviceId = d.product->pci_device_id;
        pci->pciSubSystemId = 0x134F10DE;
        std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", domain, bus, dev);
        std::snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", domain, bus, dev);
        return int(kSuccess);
    });
}

// A MIG device is named as the driver names it: "<GPU name> MIG <profile>", the profile with
// its "<ci>c." prefix when the compute instance is smaller than its GPU instance
// ("NVIDIA A100-SXM4-40GB MIG 1c.3g.20gb"). Longer than NVML_DEVICE_NAME_BUFFER_SIZE (64)
// for some GPUs: a 64-byte buffer then gets INSUFFICIENT_SIZE, as from the real library.
NVML_API int nvmlDeviceGetName(void* device, char* buf, unsigned len) {
    return device_call("nvmlDeviceGetName", device, [&](State&, const FakeDevice& d) {
        if (!d.is_mig) return copy_string(d.spec->name, buf, len);
        const unsigned ci = d.mig.compute_instance->slices;
        const std::string prefix = ci < d.mig.profile->slices ? std::to_string(ci) + "c." : "";
        return copy_string(d.spec->name + " MIG " + prefix + d.mig.profile->name, buf, len);
    });
}

NVML_API int nvmlDeviceGetMemoryInfo(void* device, nvmlMemory_st* mem) {
    return device_call("nvmlDeviceGetMemoryInfo", device, [&](State&, const FakeDevice& d) {
        if (!mem) return int(kInvalidArgument);
        const unsigned long long mib = d.is_mig ? d.mig.profile->memory_mib : d.product->memory_mib;
        mem->total = mib << 20;
        mem->used = 4ULL << 20;  // what the driver reserves on an idle GPU, roughly
        mem->free = mem->total - mem->used;
        return int(kSuccess);
    });
}

NVML_API int nvmlDeviceGetCpuAffinity(void* device, unsigned words, unsigned long* mask) {
    return device_call("nvmlDeviceGetCpuAffinity", device, [&](State& s, const FakeDevice& d) {
        if (!mask || words == 0 || d.is_mig) return int(kInvalidArgument);
        std::memset(mask, 0, words * sizeof(unsigned long));
        const std::vector<unsigned>* cpus = &s.spec.cpus;
        for (const auto& n : s.spec.numa)
            if (n.node == d.spec->numa_node) cpus = &n.cpus;
        for (unsigned c : *cpus) set_bit(mask, words, c);
        return int(kSuccess);
    });
}

NVML_API int nvmlDeviceGetMemoryAffinity(void* device, unsigned words, unsigned long* mask,
                                         int scope) {
    return device_call("nvmlDeviceGetMemoryAffinity", device, [&](State&, const FakeDevice& d) {
        if (!mask || words == 0 || d.is_mig || (scope != 0 && scope != 1))
            return int(kInvalidArgument);
        std::memset(mask, 0, words * sizeof(unsigned long));
        set_bit(mask, words, static_cast<unsigned>(d.spec->numa_node));
        return int(kSuccess);
    });
}

// Calls Slurm's gpu/nvml plugin makes besides the enumeration (22.05, and 24.11, which loads
// it with every symbol bound), so that its AutoDetect=nvml runs against a simulated node. The
// simulated GPUs have no NVLink, no settable clocks and no process accounting: those answer
// NOT_SUPPORTED, as a GPU without them does.
NVML_API int nvmlSystemGetDriverVersion(char* buf, unsigned len) {
    return call("nvmlSystemGetDriverVersion",
                [&](State& s, const char*) { return copy_string(s.spec.nvidia.driver_version, buf, len); });
}

// "<CUDA major>.<driver version>" as NVML prints it; the simulator's CUDA major is 12.
NVML_API int nvmlSystemGetNVMLVersion(char* buf, unsigned len) {
    return call("nvmlSystemGetNVMLVersion", [&](State& s, const char*) {
        return copy_string("12." + s.spec.nvidia.driver_version, buf, len);
    });
}

NVML_API int nvmlDeviceGetNvLinkState(void* device, unsigned, unsigned*) {
    return device_call("nvmlDeviceGetNvLinkState", device,
                       [&](State&, const FakeDevice&) { return int(kNotSupported); });
}

NVML_API int nvmlDeviceGetNvLinkRemotePciInfo_v2(void* device, unsigned, nvmlPciInfo_st*) {
    return device_call("nvmlDeviceGetNvLinkRemotePciInfo_v2", device,
                       [&](State&, const FakeDevice&) { return int(kNotSupported); });
}

NVML_API int nvmlDeviceGetSupportedMemoryClocks(void* device, unsigned*, unsigned*) {
    return device_call("nvmlDeviceGetSupportedMemoryClocks", device,
                       [&](State&, const FakeDevice&) { return int(kNotSupported); });
}

NVML_API int nvmlDeviceGetSupportedGraphicsClocks(void* device, unsigned, unsigned*, unsigned*) {
    return device_call("nvmlDeviceGetSupportedGraphicsClocks", device,
                       [&](State&, const FakeDevice&) { return int(kNotSupported); });
}

NVML_API int nvmlDeviceGetApplicationsClock(void* device, int, unsigned*) {
    return device_call("nvmlDeviceGetApplicationsClock", device,
                       [&](State&, const FakeDevice&) { return int(kNotSupported); });
}

NVML_API int nvmlDeviceSetApplicationsClocks(void* device, unsigned, unsigned) {
    return device_call("nvmlDeviceSetApplicationsClocks", device,
                       [&](State&, const FakeDevice&) { return int(kNotSupported); });
}

NVML_API int nvmlDeviceResetApplicationsClocks(void* device) {
    return device_call("nvmlDeviceResetApplicationsClocks", device,
                       [&](State&, const FakeDevice&) { return int(kNotSupported); });
}

NVML_API int nvmlDeviceGetGraphicsRunningProcesses_v3(void* device, unsigned*, void*) {
    return device_call("nvmlDeviceGetGraphicsRunningProcesses_v3", device,
                       [&](State&, const FakeDevice&) { return int(kNotSupported); });
}

NVML_API int nvmlDeviceGetProcessUtilization(void* device, void*, unsigned*, unsigned long long) {
    return device_call("nvmlDeviceGetProcessUtilization", device,
                       [&](State&, const FakeDevice&) { return int(kNotSupported); });
}
