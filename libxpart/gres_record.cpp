#include "libxpart/gres_record.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace xpart {

bool GresRecord::operator==(const GresRecord& o) const {
    return vendor == o.vendor && type == o.type && files == o.files && cpus == o.cpus &&
           unique_id == o.unique_id && partition_uuid == o.partition_uuid &&
           gpu_uuid == o.gpu_uuid && gpu_minor == o.gpu_minor && gi == o.gi && ci == o.ci &&
           kfd_node == o.kfd_node && amd_rank == o.amd_rank &&
           presence_paths == o.presence_paths;
}

namespace {

std::vector<std::string> presence_paths(const Gpu& gpu, const Partition& part, const RootFs& root) {
    std::vector<std::string> out;
    if (gpu.vendor == Vendor::Nvidia && gpu.mode == PartitionMode::Mig && part.gi >= 0 &&
        part.ci >= 0) {
        // These procfs files exist only while the instance exists (the /dev cap nodes stay).
        out.push_back(root.host_path("/proc/driver/nvidia/capabilities/gpu" +
                                     std::to_string(gpu.minor) + "/mig/gi" +
                                     std::to_string(part.gi) + "/ci" + std::to_string(part.ci) +
                                     "/access"));
    } else if (gpu.vendor == Vendor::Amd && part.kfd_node >= 0) {
        out.push_back(root.host_path("/sys/class/kfd/kfd/topology/nodes/" +
                                     std::to_string(part.kfd_node) + "/gpu_id"));
    }
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

std::vector<GresRecord> gres_records(const Node& node, const RootFs& root) {
    std::vector<GresRecord> records;
    for (const auto& gpu : node.gpus) {
        if (gpu.mode == PartitionMode::MigPending) continue;
        for (const auto& part : gpu.partitions) {
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
            records.push_back(std::move(r));
        }
    }
    // ROCm counts GPU agents in KFD node order; discovery order may differ (PCI order).
    std::vector<GresRecord*> amd;
    for (auto& r : records)
        if (r.vendor == Vendor::Amd) amd.push_back(&r);
    std::stable_sort(amd.begin(), amd.end(), [](const GresRecord* a, const GresRecord* b) {
        return a->kfd_node < b->kfd_node;
    });
    for (std::size_t i = 0; i < amd.size(); ++i) amd[i]->amd_rank = static_cast<int>(i);
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

namespace {
using nlohmann::json;

json to_json(const GresRecord& r) {
    json files = json::array();
    for (const auto& f : r.files)
        files.push_back({{"path", f.path}, {"major", f.major}, {"minor", f.minor},
                         {"shared", f.shared}});
    return {{"vendor", to_string(r.vendor)}, {"type", r.type}, {"files", files},
            {"cpus", r.cpus}, {"unique_id", r.unique_id},
            {"partition_uuid", r.partition_uuid}, {"gpu_uuid", r.gpu_uuid},
            {"gpu_minor", r.gpu_minor}, {"gi", r.gi}, {"ci", r.ci},
            {"kfd_node", r.kfd_node}, {"amd_rank", r.amd_rank},
            {"presence_paths", r.presence_paths}};
}

GresRecord from_json(const json& j) {
    GresRecord r;
    const std::string vendor = j.at("vendor").get<std::string>();
    if (vendor == "nvidia") r.vendor = Vendor::Nvidia;
    else if (vendor == "amd") r.vendor = Vendor::Amd;
    else throw std::runtime_error("unknown vendor '" + vendor + "'");
    r.type = j.at("type").get<std::string>();
    for (const auto& f : j.at("files"))
        r.files.push_back({f.at("path").get<std::string>(), f.at("major").get<unsigned>(),
                           f.at("minor").get<unsigned>(), f.at("shared").get<bool>()});
    r.cpus = j.at("cpus").get<std::vector<unsigned>>();
    r.unique_id = j.at("unique_id").get<std::string>();
    r.partition_uuid = j.at("partition_uuid").get<std::string>();
    r.gpu_uuid = j.at("gpu_uuid").get<std::string>();
    r.gpu_minor = j.at("gpu_minor").get<int>();
    r.gi = j.at("gi").get<int>();
    r.ci = j.at("ci").get<int>();
    r.kfd_node = j.at("kfd_node").get<int>();
    r.amd_rank = j.at("amd_rank").get<int>();
    r.presence_paths = j.at("presence_paths").get<std::vector<std::string>>();
    return r;
}
}  // namespace

std::string serialize_records(const std::vector<GresRecord>& records) {
    json all = json::array();
    for (const auto& r : records) all.push_back(to_json(r));
    return all.dump();
}

Result<std::vector<GresRecord>> parse_records(const std::string& text) {
    try {
        std::vector<GresRecord> out;
        const json all = json::parse(text);
        if (!all.is_array()) return Error{"gres records: not a JSON array"};
        for (const auto& j : all) out.push_back(from_json(j));
        return out;
    } catch (const std::exception& e) {
        return Error{std::string("gres records: ") + e.what()};
    }
}

}  // namespace xpart
