#include "cli/discover_table.hpp"

#include <algorithm>
#include <set>
#include <vector>

#include "libxpart/slurm_text/gres_conf.hpp"
#include "libxpart/text.hpp"

namespace xpart::cli {

namespace {

using Row = std::vector<std::string>;

// Pads every column but the last to the widest cell of that column among `rows`.
std::vector<std::size_t> column_widths(const std::vector<Row>& rows) {
    std::vector<std::size_t> widths;
    for (const Row& r : rows) {
        if (widths.size() < r.size()) widths.resize(r.size(), 0);
        for (std::size_t i = 0; i < r.size(); ++i) widths[i] = std::max(widths[i], r[i].size());
    }
    return widths;
}

std::string render_row(const Row& r, const std::vector<std::size_t>& widths,
                       const std::string& indent) {
    std::string out = indent;
    for (std::size_t i = 0; i < r.size(); ++i) {
        out += r[i];
        if (i + 1 < r.size()) out += std::string(widths[i] - r[i].size() + 2, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
}

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

std::string memory(std::uint64_t mb) { return mb ? std::to_string(mb) + " MiB" : "-"; }

Row gpu_row(std::size_t position, const Gpu& g) {
    std::string mode = to_string(g.mode);
    if (!g.memory_mode.empty()) mode += "/" + to_lower(g.memory_mode);
    return {"GPU " + std::to_string(position), to_string(g.vendor), or_dash(g.model),
            or_dash(g.uuid), or_dash(g.pci_bus_id), "mode " + mode,
            "numa " + (g.numa_node >= 0 ? std::to_string(g.numa_node) : std::string("-")),
            "cpus " + or_dash(format_cpu_list(g.cpus)), memory(g.memory_mb)};
}

Row partition_row(const Gpu& g, const Partition& p) {
    std::string instance = "-";
    if (p.gi >= 0) instance = "gi " + std::to_string(p.gi) + " ci " + std::to_string(p.ci);
    else if (g.vendor == Vendor::Amd && p.index >= 0) instance = "xcp " + std::to_string(p.index);
    std::string files;
    for (const DeviceFile& f : p.device_files)
        if (!f.shared) files += (files.empty() ? "" : " ") + f.path;
    return {p.index >= 0 ? std::to_string(p.index) : "-", or_dash(p.type), or_dash(p.uuid),
            instance, memory(p.memory_mb), or_dash(files)};
}

std::string port_summary(const RdmaNic& n) {
    std::string out;
    for (const RdmaPort& p : n.ports)
        out += (out.empty() ? "" : " ") + std::to_string(p.number) + ":" + to_lower(p.state) + "/" +
               or_dash(p.link_layer);
    return or_dash(out);
}

// The NICs, then each GPU's own NIC and the others by path class, nearest first.
std::string render_nics(const Node& node) {
    if (node.nics.empty()) return "";
    std::vector<Row> nic_rows{{"nic", "pci", "numa", "ports"}};
    for (const RdmaNic& n : node.nics)
        nic_rows.push_back({n.name, n.pci_bus_id, n.numa_node >= 0 ? std::to_string(n.numa_node) : "-",
                            port_summary(n)});
    std::vector<Row> gpu_rows{{"gpu", "pci", "own nic", "path", "then"}};
    for (std::size_t i = 0; i < node.gpus.size(); ++i) {
        const Gpu& g = node.gpus[i];
        Row r{"GPU " + std::to_string(i), g.pci_bus_id, "-", "-", "-"};
        if (!g.nics.empty()) {
            r[2] = g.nics[0].nic + ":" + std::to_string(g.nics[0].port);
            r[3] = to_string(g.nics[0].path);
            std::string then;
            for (std::size_t k = 1; k < g.nics.size(); ++k) {
                if (k == 1 || g.nics[k].path != g.nics[k - 1].path)
                    then += std::string(then.empty() ? "" : "; ") + to_string(g.nics[k].path) + ":";
                then += " " + g.nics[k].nic;
            }
            r[4] = or_dash(then);
        }
        gpu_rows.push_back(std::move(r));
    }
    std::string out = "RDMA NICs:\n";
    const auto nic_widths = column_widths(nic_rows);
    for (const Row& r : nic_rows) out += render_row(r, nic_widths, "    ");
    out += "GPU to NIC (nearest first):\n";
    const auto gpu_widths = column_widths(gpu_rows);
    for (const Row& r : gpu_rows) out += render_row(r, gpu_widths, "    ");
    return out;
}

}  // namespace

std::string render_node_table(const Node& node) {
    if (node.gpus.empty()) {
        // GPUs present but unreadable (Node::errors, on stderr) are not "none found".
        std::string out = node.errors.empty() ? "no GPUs found\n" : "no GPUs discovered\n";
        for (const std::string& w : node.warnings) out += "warning: " + w + "\n";
        return out;
    }
    std::vector<Row> gpu_rows;
    std::vector<Row> part_rows{{"idx", "type", "uuid", "instance", "memory", "device files"}};
    std::set<std::string> shared;
    std::set<std::string> withheld;
    for (std::size_t i = 0; i < node.gpus.size(); ++i) {
        gpu_rows.push_back(gpu_row(i, node.gpus[i]));
        for (const DeviceFile& f : node.gpus[i].withheld_files) withheld.insert(f.path);
        for (const Partition& p : node.gpus[i].partitions) {
            part_rows.push_back(partition_row(node.gpus[i], p));
            for (const DeviceFile& f : p.device_files)
                if (f.shared) shared.insert(f.path);
        }
    }
    const auto gpu_widths = column_widths(gpu_rows);
    const auto part_widths = column_widths(part_rows);
    std::string out;
    std::size_t next_part = 1;
    for (std::size_t i = 0; i < node.gpus.size(); ++i) {
        out += render_row(gpu_rows[i], gpu_widths, "");
        if (node.gpus[i].partitions.empty()) {
            out += "    (no partitions)\n";
            continue;
        }
        out += render_row(part_rows[0], part_widths, "    ");
        for (std::size_t k = 0; k < node.gpus[i].partitions.size(); ++k)
            out += render_row(part_rows[next_part++], part_widths, "    ");
    }
    if (!shared.empty()) {
        out += "shared device files:";
        for (const std::string& f : shared) out += " " + f;
        out += "\n";
    }
    // Shown so an admin sees what jobs do not get (the MIG monitor cap by default).
    if (!withheld.empty()) {
        out += "withheld device files (no partition gets them):";
        for (const std::string& f : withheld) out += " " + f;
        out += "\n";
    }
    out += render_nics(node);
    for (const std::string& w : node.warnings) out += "warning: " + w + "\n";
    return out;
}

std::string render_gres_conf(const Node& node, const RootFs& root) {
    std::string out = "# gres.conf generated by `xpart discover --gres-conf`: one record per "
                      "partition, in discovery order\n";
    for (const std::string& w : node.warnings) out += "# warning: " + w + "\n";
    const std::vector<GresConfRecord> records = generate_gres_records(node, root);
    std::size_t next = 0;
    for (std::size_t i = 0; i < node.gpus.size(); ++i) {
        const Gpu& g = node.gpus[i];
        out += "# GPU " + std::to_string(i) + ": " + g.model + " " + g.uuid + " " + g.pci_bus_id +
               " mode " + to_string(g.mode) + "\n";
        for (std::size_t k = 0; k < g.partitions.size(); ++k)
            out += format_gres_record(records[next++]) + "\n";
    }
    return out;
}

}  // namespace xpart::cli
