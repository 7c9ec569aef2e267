// gres.conf from a discovered node: one record per partition, in discovery order.
#include "libxpart/slurm_text/gres_conf.hpp"

#include "libxpart/text.hpp"

namespace xpart {

namespace {

std::string join(const std::vector<std::string>& items, char sep) {
    std::string out;
    for (const std::string& s : items) {
        if (!out.empty()) out += sep;
        out += s;
    }
    return out;
}

// Quotes values with spaces and escapes what Slurm's reader would strip ('#', '\').
std::string escape_value(const std::string& v) {
    std::string out;
    for (char c : v) {
        if (c == '#' || c == '\\') out += '\\';
        out += c;
    }
    if (out.find_first_of(" \t") != std::string::npos) return '"' + out + '"';
    return out;
}

}  // namespace

std::vector<GresConfRecord> generate_gres_records(const Node& node, const RootFs& root) {
    std::vector<GresConfRecord> records;
    for (const Gpu& gpu : node.gpus) {
        for (const Partition& p : gpu.partitions) {
            GresConfRecord r;
            r.name = "gpu";
            r.type = p.type;
            std::vector<std::string> paths;
            for (const DeviceFile& f : p.device_files)
                if (!f.shared) paths.push_back(root.host_path(f.path));
            if (paths.size() == 1)
                r.files = paths;
            else
                r.multiple_files = paths;
            if (!gpu.cpus.empty()) r.cores = gpu.cpus;
            records.push_back(std::move(r));
        }
    }
    return records;
}

std::string format_gres_record(const GresConfRecord& r) {
    std::vector<std::string> parts;
    if (!r.node_names.empty()) parts.push_back("NodeName=" + escape_value(join(r.node_names, ',')));
    if (!r.name.empty()) parts.push_back("Name=" + escape_value(r.name));
    if (!r.type.empty()) parts.push_back("Type=" + escape_value(r.type));
    if (r.count) parts.push_back("Count=" + std::to_string(*r.count));
    if (!r.files.empty()) parts.push_back("File=" + escape_value(join(r.files, ',')));
    if (!r.multiple_files.empty())
        parts.push_back("MultipleFiles=" + escape_value(join(r.multiple_files, ',')));
    if (r.cores && !r.cores->empty()) parts.push_back("Cores=" + format_cpu_list(*r.cores));
    if (!r.flags.empty()) parts.push_back("Flags=" + escape_value(r.flags));
    if (!r.links.empty()) parts.push_back("Links=" + escape_value(r.links));
    if (!r.autodetect.empty()) parts.push_back("AutoDetect=" + escape_value(r.autodetect));
    return join(parts, ' ');
}

}  // namespace xpart
