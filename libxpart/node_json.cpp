#include "libxpart/node_json.hpp"

#include "libxpart/text.hpp"

namespace xpart {

using nlohmann::json;

namespace {
json id_or_null(int v) { return v < 0 ? json(nullptr) : json(v); }
int id_from(const json& j) { return j.is_null() ? -1 : j.get<int>(); }

json files_to_json(const std::vector<DeviceFile>& files) {
    json out = json::array();
    for (const DeviceFile& f : files)
        out.push_back({{"path", f.path}, {"major", f.major}, {"minor", f.minor}, {"shared", f.shared}});
    return out;
}

json routes_to_json(const std::vector<NicRoute>& routes) {
    json out = json::array();
    for (const NicRoute& r : routes)
        out.push_back({{"nic", r.nic}, {"port", r.port}, {"path", to_string(r.path)}});
    return out;
}

Result<std::vector<NicRoute>> routes_from_json(const json& j) {
    std::vector<NicRoute> out;
    for (const json& jr : j) {
        auto path = parse_pci_path(jr.at("path").get<std::string>());
        if (!path) return Error{"unknown PCI path class " + jr.at("path").dump()};
        out.push_back({jr.at("nic").get<std::string>(), jr.at("port").get<unsigned>(), *path});
    }
    return out;
}

json nics_to_json(const std::vector<RdmaNic>& nics) {
    json out = json::array();
    for (const RdmaNic& n : nics) {
        json ports = json::array();
        for (const RdmaPort& p : n.ports)
            ports.push_back({{"port", p.number}, {"state", p.state}, {"link_layer", p.link_layer}});
        out.push_back({{"name", n.name}, {"pci_bus_id", n.pci_bus_id},
                       {"numa_node", id_or_null(n.numa_node)}, {"ports", ports}});
    }
    return out;
}

std::vector<RdmaNic> nics_from_json(const json& j) {
    std::vector<RdmaNic> out;
    for (const json& jn : j) {
        RdmaNic n;
        n.name = jn.at("name").get<std::string>();
        n.pci_bus_id = jn.at("pci_bus_id").get<std::string>();
        n.numa_node = id_from(jn.at("numa_node"));
        for (const json& jp : jn.at("ports"))
            n.ports.push_back({jp.at("port").get<unsigned>(), jp.at("state").get<std::string>(),
                               jp.at("link_layer").get<std::string>()});
        out.push_back(std::move(n));
    }
    return out;
}

std::vector<DeviceFile> files_from_json(const json& j) {
    std::vector<DeviceFile> out;
    for (const json& jf : j)
        out.push_back({jf.at("path").get<std::string>(), jf.at("major").get<unsigned>(),
                       jf.at("minor").get<unsigned>(), jf.at("shared").get<bool>()});
    return out;
}
}  // namespace

json to_json(const Node& node) {
    json gpus = json::array();
    for (const Gpu& g : node.gpus) {
        json parts = json::array();
        for (const Partition& p : g.partitions) {
            const json files = files_to_json(p.device_files);
            parts.push_back({{"uuid", p.uuid}, {"type", p.type}, {"gi", id_or_null(p.gi)},
                             {"ci", id_or_null(p.ci)}, {"index", id_or_null(p.index)},
                             {"kfd_node", id_or_null(p.kfd_node)}, {"memory_mb", p.memory_mb},
                             {"compute_units", p.compute_units}, {"device_files", files}});
        }
        gpus.push_back({{"vendor", to_string(g.vendor)}, {"model", g.model}, {"uuid", g.uuid},
                        {"pci_bus_id", g.pci_bus_id}, {"index", g.index},
                        {"minor", id_or_null(g.minor)}, {"mode", to_string(g.mode)},
                        {"memory_mode", g.memory_mode}, {"memory_mb", g.memory_mb},
                        {"numa_node", id_or_null(g.numa_node)},
                        {"cpus", format_cpu_list(g.cpus)}, {"partitions", parts}});
        if (!g.withheld_files.empty())
            gpus.back()["withheld_device_files"] = files_to_json(g.withheld_files);
        if (!g.nics.empty()) gpus.back()["nics"] = routes_to_json(g.nics);
    }
    json out = {{"gpus", gpus}, {"warnings", node.warnings}};
    // Only on nodes with RDMA NICs, for the same reason as "errors" below.
    if (!node.nics.empty()) out["nics"] = nics_to_json(node.nics);
    // Only when there are some: a complete node reads as it always did (goldens, old caches).
    if (!node.errors.empty()) out["errors"] = node.errors;
    return out;
}

Result<Node> node_from_json(const json& j) {
    try {
        Node node;
        for (const json& jg : j.at("gpus")) {
            Gpu g;
            g.vendor = jg.at("vendor").get<std::string>() == "amd" ? Vendor::Amd : Vendor::Nvidia;
            g.model = jg.at("model").get<std::string>();
            g.uuid = jg.at("uuid").get<std::string>();
            g.pci_bus_id = jg.at("pci_bus_id").get<std::string>();
            g.index = jg.at("index").get<int>();
            g.minor = id_from(jg.at("minor"));
            auto mode = parse_partition_mode(jg.at("mode").get<std::string>());
            if (!mode) return Error{"unknown partition mode " + jg.at("mode").dump()};
            g.mode = *mode;
            g.memory_mode = jg.at("memory_mode").get<std::string>();
            g.memory_mb = jg.at("memory_mb").get<std::uint64_t>();
            g.numa_node = id_from(jg.at("numa_node"));
            auto cpus = parse_cpu_list(jg.at("cpus").get<std::string>());
            if (!cpus) return cpus.error();
            g.cpus = *cpus;
            for (const json& jp : jg.at("partitions")) {
                Partition p;
                p.uuid = jp.at("uuid").get<std::string>();
                p.type = jp.at("type").get<std::string>();
                p.gi = id_from(jp.at("gi"));
                p.ci = id_from(jp.at("ci"));
                p.index = id_from(jp.at("index"));
                p.kfd_node = id_from(jp.at("kfd_node"));
                p.memory_mb = jp.at("memory_mb").get<std::uint64_t>();
                p.compute_units = jp.at("compute_units").get<unsigned>();
                p.device_files = files_from_json(jp.at("device_files"));
                g.partitions.push_back(std::move(p));
            }
            if (auto w = jg.find("withheld_device_files"); w != jg.end())
                g.withheld_files = files_from_json(*w);
            if (auto n = jg.find("nics"); n != jg.end()) {
                auto routes = routes_from_json(*n);
                if (!routes) return routes.error();
                g.nics = std::move(*routes);
            }
            node.gpus.push_back(std::move(g));
        }
        if (auto n = j.find("nics"); n != j.end()) node.nics = nics_from_json(*n);
        for (const json& w : j.at("warnings")) node.warnings.push_back(w.get<std::string>());
        if (auto e = j.find("errors"); e != j.end())
            for (const json& line : *e) node.errors.push_back(line.get<std::string>());
        return node;
    } catch (const json::exception& e) {
        return Error{std::string("invalid node JSON: ") + e.what()};
    }
}

}  // namespace xpart
