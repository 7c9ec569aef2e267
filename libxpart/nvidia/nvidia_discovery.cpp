// NVIDIA discovery: NVML (the enumeration sequence of hardware-interfaces.md) for what exists,
// procfs for what the device nodes are, each cross-checked against the other.
#include <map>

#include "libxpart/discovery.hpp"
#include "libxpart/nvidia/mig_naming.hpp"
#include "libxpart/nvidia/nvidia_presence.hpp"
#include "libxpart/nvidia/nvidia_procfs.hpp"
#include "libxpart/nvidia/nvml.hpp"
#include "libxpart/proc_devices.hpp"
#include "libxpart/slurm_type_naming.hpp"
#include "libxpart/text.hpp"

namespace xpart {

namespace {

using nvml::DeviceRef;
using nvml::NvmlSession;

// What NVML says about one MIG device.
struct MigRecord {
    unsigned index = 0;
    unsigned gi = 0;
    unsigned ci = 0;
    std::string uuid;
    std::string name;  // nvmlDeviceGetName of the MIG device: read for TypeNaming=slurm only
    nvml::DeviceAttributes attr{};
};

// What NVML says about one GPU.
struct GpuRecord {
    unsigned index = 0;
    unsigned minor = 0;
    std::string uuid;
    std::string model;
    std::string bdf;
    std::uint64_t memory_mb = 0;
    std::vector<unsigned> cpus;
    int numa_node = -1;
    PartitionMode mode = PartitionMode::Full;
    unsigned full_sms = 0;
    std::vector<MigRecord> migs;
};

// busId "00000000:07:00.0" -> sysfs "0000:07:00.0".
Result<std::string> sysfs_bus_id(const nvml::PciInfo& pci, const DeviceRef& d) {
    std::string id;
    for (char c : pci.busId) {
        if (c == '\0') break;
        id += c;
    }
    id = to_lower(id);
    if (id.size() == 16 && id.compare(0, 4, "0000") == 0) id.erase(0, 4);
    if (id.size() != 12 || id[4] != ':' || id[7] != ':' || id[10] != '.')
        return Error{"nvmlDeviceGetPciInfo_v3(gpu " + std::to_string(d.gpu) +
                     "): unexpected busId '" + id + "'"};
    return id;
}

// "MIG-<uuid>" (R470+) or the legacy "MIG-GPU-<uuid>/<gi>/<ci>" (R450/R460), whose ids must
// name this device.
Status check_mig_uuid(const MigRecord& m, const DeviceRef& d) {
    auto bad = [&](const std::string& why) {
        return Error{"nvmlDeviceGetUUID(gpu " + std::to_string(d.gpu) + ", mig " +
                     std::to_string(m.index) + "): " + why + " '" + m.uuid + "'"};
    };
    if (m.uuid.rfind("MIG-", 0) != 0 || m.uuid.size() < 8) return bad("not a MIG UUID");
    if (m.uuid.rfind("MIG-GPU-", 0) != 0) {
        if (m.uuid.find('/') != std::string::npos) return bad("not a MIG UUID");
        return ok_status();
    }
    std::vector<std::string> parts = split(m.uuid, '/');
    if (parts.size() != 3) return bad("malformed legacy MIG UUID");
    auto gi = parse_u64(parts[1]);
    auto ci = parse_u64(parts[2]);
    if (!gi || !ci || *gi != m.gi || *ci != m.ci)
        return bad("legacy MIG UUID does not name GPU instance " + std::to_string(m.gi) +
                   ", compute instance " + std::to_string(m.ci));
    return ok_status();
}

Status read_mig_devices(const NvmlSession& s, const DeviceRef& gpu, GpuRecord& rec,
                        bool want_names) {
    auto max = s.max_mig_device_count(gpu);
    if (!max) return max.error();
    for (unsigned j = 0; j < *max; ++j) {
        auto handle = s.mig_device(gpu, j);
        if (!handle) return handle.error();
        if (!*handle) continue;  // a hole in the index range
        const DeviceRef& m = **handle;
        MigRecord r;
        r.index = j;
        auto gi = s.gpu_instance_id(m);
        if (!gi) return gi.error();
        auto ci = s.compute_instance_id(m);
        if (!ci) return ci.error();
        auto uuid = s.uuid(m);
        if (!uuid) return uuid.error();
        auto attr = s.attributes(m);
        if (!attr) return attr.error();
        r.gi = *gi;
        r.ci = *ci;
        r.uuid = std::move(*uuid);
        r.attr = *attr;
        if (want_names) {
            // Slurm 24.11 names the device from this, and falls back to the attributes
            // when the call fails: so does TypeNaming=slurm.
            auto name = s.name(m);
            if (name) r.name = std::move(*name);
        }
        if (auto st = check_mig_uuid(r, m); !st) return st;
        rec.migs.push_back(std::move(r));
    }
    return ok_status();
}

Result<GpuRecord> read_gpu(const NvmlSession& s, unsigned index, bool want_mig_names) {
    auto d = s.device(index);
    if (!d) return d.error();
    GpuRecord rec;
    rec.index = index;
    auto mode = s.mig_mode(*d);
    if (!mode) return mode.error();
    if (*mode && (*mode)->current != (*mode)->pending) {
        rec.mode = PartitionMode::MigPending;  // reported, never bound until the GPU resets
    } else if (*mode && (*mode)->current == nvml::kMigEnable) {
        rec.mode = PartitionMode::Mig;
        if (auto st = read_mig_devices(s, *d, rec, want_mig_names); !st) return st.error();
    }
    auto minor = s.minor_number(*d);
    if (!minor) return minor.error();
    rec.minor = *minor;
    auto pci = s.pci_info(*d);
    if (!pci) return pci.error();
    auto bdf = sysfs_bus_id(*pci, *d);
    if (!bdf) return bdf.error();
    rec.bdf = *bdf;
    auto uuid = s.uuid(*d);
    if (!uuid) return uuid.error();
    rec.uuid = *uuid;
    auto name = s.name(*d);
    if (!name) return name.error();
    rec.model = *name;
    auto mem = s.memory_info(*d);
    if (!mem) return mem.error();
    rec.memory_mb = mem->total / (1024 * 1024);
    auto cpus = s.cpu_affinity(*d);
    if (!cpus) return cpus.error();
    rec.cpus = std::move(*cpus);
    auto numa = s.numa_node(*d);
    if (!numa) return numa.error();
    rec.numa_node = numa->value_or(-1);
    if (rec.mode == PartitionMode::Full) {
        auto attr = s.attributes(*d);
        if (!attr) return attr.error();
        rec.full_sms = attr->multiprocessorCount;
    }
    return rec;
}

// Device majors and the MIG capability table, read once per discovery.
struct DeviceNumbers {
    unsigned nvidia = 0;
    unsigned uvm = 0;
    unsigned caps = 0;
    unsigned monitor_minor = 0;
    std::optional<MigMinorTable> table;
};

Result<DeviceNumbers> read_device_numbers(const RootFs& root, bool need_caps) {
    auto majors = CharMajors::load(root);
    if (!majors) return majors.error();
    DeviceNumbers n;
    if (auto m = majors->find("nvidia")) n.nvidia = *m;
    else if (auto f = majors->find("nvidia-frontend")) n.nvidia = *f;
    else return majors->require("nvidia").error();
    auto uvm = majors->require("nvidia-uvm");
    if (!uvm) return uvm.error();
    n.uvm = *uvm;
    if (!need_caps) return n;
    auto caps = majors->require("nvidia-caps");
    if (!caps) return caps.error();
    n.caps = *caps;
    auto table = MigMinorTable::load(root);
    if (!table) return table.error();
    auto monitor = table->minor("monitor");
    if (!monitor) return monitor.error();
    n.monitor_minor = *monitor;
    n.table = std::move(*table);
    return n;
}

std::vector<DeviceFile> shared_files(const DeviceNumbers& n) {
    return {{"/dev/nvidiactl", n.nvidia, 255, true},
            {"/dev/nvidia-uvm", n.uvm, 0, true},
            {"/dev/nvidia-uvm-tools", n.uvm, 1, true}};
}

std::string cap_node(unsigned minor) {
    return "/dev/nvidia-caps/nvidia-cap" + std::to_string(minor);
}

// The GRES type of a MIG device under the configured naming.
std::string mig_type(const GpuRecord& rec, const MigRecord& m, const DiscoveryOptions& o) {
    if (o.type_naming == TypeNaming::Slurm)
        return slurm_nvml_mig_type(o.slurm_series, {rec.model, m.name, m.attr.gpuInstanceSliceCount,
                                                    m.attr.computeInstanceSliceCount,
                                                    m.attr.memorySizeMB});
    return mig_profile_name({m.attr.gpuInstanceSliceCount, m.attr.computeInstanceSliceCount,
                             m.attr.memorySizeMB, m.attr.sharedOfaCount},
                            rec.memory_mb);
}

Result<Gpu> build_gpu(const RootFs& root, const GpuRecord& rec, const DeviceNumbers& n,
                      const DiscoveryOptions& options) {
    const bool grant_monitor = options.mig_monitor_capability;
    auto info_minor = read_nvidia_device_minor(root, rec.bdf);
    if (!info_minor) return info_minor.error();
    if (*info_minor != rec.minor)
        return Error{root.host_path("/proc/driver/nvidia/gpus/" + rec.bdf + "/information") +
                     ": Device Minor " + std::to_string(*info_minor) +
                     " disagrees with nvmlDeviceGetMinorNumber(gpu " + std::to_string(rec.index) +
                     ") = " + std::to_string(rec.minor)};
    Gpu g;
    g.vendor = Vendor::Nvidia;
    g.model = rec.model;
    g.uuid = rec.uuid;
    g.pci_bus_id = rec.bdf;
    g.index = static_cast<int>(rec.index);
    g.minor = static_cast<int>(rec.minor);
    g.mode = rec.mode;
    g.memory_mb = rec.memory_mb;
    g.numa_node = rec.numa_node;
    g.cpus = rec.cpus;
    const DeviceFile gpu_node{"/dev/nvidia" + std::to_string(rec.minor), n.nvidia, rec.minor, false};

    if (rec.mode == PartitionMode::Full) {
        Partition p;
        p.uuid = rec.uuid;
        p.type = options.type_naming == TypeNaming::Slurm ? slurm_nvml_gpu_type(rec.model)
                                                          : full_gpu_type_name(rec.model);
        p.memory_mb = rec.memory_mb;
        p.compute_units = rec.full_sms;
        p.device_files.push_back(gpu_node);
        for (auto& f : shared_files(n)) p.device_files.push_back(f);
        g.partitions.push_back(std::move(p));
        return g;
    }
    // A MIG device needs its parent, its GI and CI caps and the shared control nodes; the
    // monitor cap only lets it watch the other instances, so it is given only on request.
    const DeviceFile monitor{cap_node(n.monitor_minor), n.caps, n.monitor_minor, true};
    std::map<unsigned, unsigned> gi_minors;  // GI id -> cap minor (several CIs share a GI)
    for (const MigRecord& m : rec.migs) {
        auto gi_it = gi_minors.find(m.gi);
        if (gi_it == gi_minors.end()) {
            auto gi_minor = mig_capability_minor(root, *n.table, rec.minor, m.gi, -1);
            if (!gi_minor) return gi_minor.error();
            gi_it = gi_minors.emplace(m.gi, *gi_minor).first;
        }
        auto ci_minor = mig_capability_minor(root, *n.table, rec.minor, m.gi, static_cast<int>(m.ci));
        if (!ci_minor) return ci_minor.error();
        Partition p;
        p.uuid = m.uuid;
        p.type = mig_type(rec, m, options);
        p.gi = static_cast<int>(m.gi);
        p.ci = static_cast<int>(m.ci);
        p.index = static_cast<int>(m.index);
        p.memory_mb = m.attr.memorySizeMB;
        p.compute_units = m.attr.multiprocessorCount;
        p.device_files.push_back(gpu_node);
        p.device_files.push_back({cap_node(gi_it->second), n.caps, gi_it->second, false});
        p.device_files.push_back({cap_node(*ci_minor), n.caps, *ci_minor, false});
        for (auto& f : shared_files(n)) p.device_files.push_back(f);
        if (grant_monitor) p.device_files.push_back(monitor);
        g.partitions.push_back(std::move(p));
    }
    if (!grant_monitor && !rec.migs.empty()) g.withheld_files.push_back(monitor);
    // MIG mode on and no MIG device: nothing to bind, and the whole GPU is not usable as one
    // either. No partition gets its device node, so rule sets that deny withheld files deny it.
    if (rec.mode == PartitionMode::Mig && rec.migs.empty()) g.withheld_files.push_back(gpu_node);
    return g;
}

Result<std::vector<GpuRecord>> read_all_gpus(const NvmlSession& session, bool want_mig_names) {
    auto count = session.device_count();
    if (!count) return count.error();
    std::vector<GpuRecord> records;
    records.reserve(*count);
    for (unsigned i = 0; i < *count; ++i) {
        auto rec = read_gpu(session, i, want_mig_names);
        if (!rec) return rec.error();
        records.push_back(std::move(*rec));
    }
    return records;
}

// NVML loaded and initialised, or the one line saying why the NVIDIA GPUs stay unknown.
Result<NvmlSession> open_nvml(const DiscoveryOptions& options) {
    const std::string path = nvml::NvmlLibrary::resolve_path(options.nvml_library);
    auto lib = nvml::NvmlLibrary::load(path);
    if (!lib) return Error{lib.error().message + ": NVIDIA GPUs not discovered"};
    auto session = NvmlSession::open(*lib);
    if (!session)
        return Error{"NVML " + (*lib)->file() + ": " + session.error().message +
                     ": NVIDIA GPUs not discovered"};
    return session;
}

}  // namespace

Result<std::vector<Gpu>> discover_nvidia(const DiscoveryOptions& options) {
    return discover_nvidia(options, nullptr);
}

Result<std::vector<Gpu>> discover_nvidia(const DiscoveryOptions& options,
                                         std::vector<std::string>* errors) {
    // NVML is asked only where the kernel shows NVIDIA GPUs: a node without them (an AMD node
    // with libnvidia-ml installed) is not an NVIDIA node whose NVML failed.
    if (!options.nvml_required && !has_nvidia_gpus(options.root)) return std::vector<Gpu>{};
    auto session = open_nvml(options);  // nvmlShutdown when it goes out of scope
    if (!session) {
        if (!errors) return session.error();
        errors->push_back(session.error().message);
        return std::vector<Gpu>{};
    }
    auto records = read_all_gpus(*session, options.type_naming == TypeNaming::Slurm &&
                                               slurm_reads_mig_name(options.slurm_series));
    if (!records) return records.error();
    if (records->empty()) return std::vector<Gpu>{};
    bool need_caps = false;
    for (const GpuRecord& r : *records) need_caps = need_caps || !r.migs.empty();
    auto numbers = read_device_numbers(options.root, need_caps);
    if (!numbers) return numbers.error();
    std::vector<Gpu> gpus;
    gpus.reserve(records->size());
    for (const GpuRecord& r : *records) {
        auto g = build_gpu(options.root, r, *numbers, options);
        if (!g) return g.error();
        gpus.push_back(std::move(*g));
    }
    return gpus;
}

}  // namespace xpart
