#include "libxpart/gres_record.hpp"

#include <optional>

#include "libxpart/text.hpp"
#include "libxpart/visibility.hpp"

namespace xpart {

bool GresRecord::operator==(const GresRecord& o) const {
    return vendor == o.vendor && type == o.type && files == o.files && cpus == o.cpus &&
           unique_id == o.unique_id && partition_uuid == o.partition_uuid &&
           gpu_uuid == o.gpu_uuid && gpu_minor == o.gpu_minor && gi == o.gi && ci == o.ci &&
           kfd_node == o.kfd_node && amd_rank == o.amd_rank &&
           presence_paths == o.presence_paths && expected_contents == o.expected_contents;
}

namespace {

std::string kfd_gpu_id_path(const Partition& part) {
    return "/sys/class/kfd/kfd/topology/nodes/" + std::to_string(part.kfd_node) + "/gpu_id";
}

std::string compute_mode_path(const Gpu& gpu) {
    return "/sys/bus/pci/devices/" + gpu.pci_bus_id + "/current_compute_partition";
}

std::vector<std::string> presence_paths(const Gpu& gpu, const Partition& part, const RootFs& root) {
    std::vector<std::string> out;
    if (gpu.vendor == Vendor::Nvidia && gpu.mode == PartitionMode::Mig && part.gi >= 0 &&
        part.ci >= 0) {
        // These procfs files exist only while the instance exists (the /dev cap nodes stay).
        out.push_back(root.host_path("/proc/driver/nvidia/capabilities/gpu" +
                                     std::to_string(gpu.minor) + "/mig/gi" +
                                     std::to_string(part.gi) + "/ci" + std::to_string(part.ci) +
                                     "/access"));
    } else if (gpu.vendor == Vendor::Nvidia && !gpu.pci_bus_id.empty()) {
        // A whole GPU: its procfs entry goes with the driver (the /dev nodes stay, ENXIO).
        out.push_back(root.host_path("/proc/driver/nvidia/gpus/" + gpu.pci_bus_id +
                                     "/information"));
    } else if (gpu.vendor == Vendor::Amd && part.kfd_node >= 0 &&
               !root.exists(kfd_gpu_id_path(part))) {
        out.push_back(root.host_path(kfd_gpu_id_path(part)));  // stat() it, at least
    }
    return out;
}

// What an AMD XCP's identity reads as now. A gpu_id read at step launch that fails (the node
// gone) or differs (re-made) refuses the record, so it replaces the presence path.
std::vector<ExpectedContent> expected_contents(const Gpu& gpu, const Partition& part,
                                               const std::optional<std::string>& mode,
                                               const RootFs& root) {
    std::vector<ExpectedContent> out;
    if (gpu.vendor != Vendor::Amd) return out;
    if (mode) out.push_back({ContentKind::ComputeMode, root.host_path(compute_mode_path(gpu)), *mode});
    if (part.kfd_node >= 0)
        if (auto id = root.read(kfd_gpu_id_path(part)))
            out.push_back({ContentKind::KfdGpuId, root.host_path(kfd_gpu_id_path(part)),
                           trim(*id)});
    return out;
}

}  // namespace

std::vector<unsigned> slurm_record_cpus(const GresRecord& record, unsigned node_cpus) {
    std::vector<unsigned> out;
    for (unsigned cpu : record.cpus)
        if (cpu < node_cpus) out.push_back(cpu);
    if (out.empty())
        for (unsigned cpu = 0; cpu < node_cpus; ++cpu) out.push_back(cpu);
    return out;
}

std::vector<PartitionPlace> gres_record_order(const Node& node) {
    std::vector<PartitionPlace> order;
    for (std::size_t g = 0; g < node.gpus.size(); ++g) {
        if (node.gpus[g].mode == PartitionMode::MigPending) continue;
        for (std::size_t p = 0; p < node.gpus[g].partitions.size(); ++p) order.push_back({g, p});
    }
    return order;
}

std::vector<PartitionPlace> registered_record_order(const Node& node) {
    return node.gres_records ? *node.gres_records : gres_record_order(node);
}

std::vector<GresRecord> gres_records(const Node& node, const RootFs& root) {
    std::vector<GresRecord> records;
    std::optional<std::string> mode;  // one read per GPU; absent on kernels without it
    std::size_t mode_gpu = node.gpus.size();
    for (const PartitionPlace& place : gres_record_order(node)) {
        const Gpu& gpu = node.gpus[place.gpu];
        const Partition& part = gpu.partitions[place.partition];
        if (place.gpu != mode_gpu) {
            mode_gpu = place.gpu;
            mode.reset();
            if (gpu.vendor == Vendor::Amd && !gpu.pci_bus_id.empty())
                if (auto text = root.read(compute_mode_path(gpu))) mode = trim(*text);
        }
        GresRecord r;
        r.vendor = gpu.vendor;
        r.type = part.type;
        for (const auto& f : part.device_files)
            r.files.push_back({root.host_path(f.path), f.major, f.minor, f.shared});
        r.cpus = gpu.cpus;
        if (gpu.vendor == Vendor::Nvidia) r.unique_id = part.uuid;
        r.partition_uuid = part.uuid;
        r.gpu_uuid = gpu.uuid;
        r.gpu_minor = gpu.vendor == Vendor::Nvidia ? gpu.minor : -1;
        r.gi = part.gi;
        r.ci = part.ci;
        r.kfd_node = part.kfd_node;
        r.presence_paths = presence_paths(gpu, part, root);
        r.expected_contents = expected_contents(gpu, part, mode, root);
        records.push_back(std::move(r));
    }
    // ROCm's number for each AMD record with every agent visible (libxpart/visibility.hpp).
    std::vector<int> kfd_order;
    std::vector<bool> amd;
    for (const auto& r : records) {
        kfd_order.push_back(r.kfd_node);
        amd.push_back(r.vendor == Vendor::Amd);
    }
    const auto numbers = rocm_numbers(kfd_order, amd);
    for (std::size_t i = 0; i < records.size(); ++i)
        if (numbers[i]) records[i].amd_rank = static_cast<int>(*numbers[i]);
    return records;
}

std::string files_value(const GresRecord& record) {
    std::string out;
    for (const auto& f : record.files) {
        if (!out.empty()) out += ',';
        out += f.path;
    }
    return out;
}

}  // namespace xpart
