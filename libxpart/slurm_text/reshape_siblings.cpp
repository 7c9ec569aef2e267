#include "libxpart/slurm_text/reshape_siblings.hpp"

#include <utility>

#include "libxpart/slurm_text/gres_conf.hpp"

namespace xpart {

namespace {

// {3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb} -> {{3g.40gb, 1}, {2g.20gb, 1}, {1g.10gb, 2}}: each type
// once, in the order it first comes.
std::vector<std::pair<std::string, std::size_t>> counted(const std::vector<std::string>& types) {
    std::vector<std::pair<std::string, std::size_t>> out;
    for (const auto& t : types) {
        auto it = out.begin();
        while (it != out.end() && it->first != t) ++it;
        if (it == out.end()) out.emplace_back(t, 1);
        else ++it->second;
    }
    return out;
}

// Current first, the rest as given: the order of the NodeName lines and of their ports.
std::vector<const HostGeometry*> in_order(const std::vector<HostGeometry>& geometries) {
    std::vector<const HostGeometry*> out;
    for (const auto& g : geometries)
        if (g.current) out.push_back(&g);
    for (const auto& g : geometries)
        if (!g.current) out.push_back(&g);
    return out;
}

}  // namespace

std::string sibling_node_name(const std::string& host, const HostGeometry& geometry) {
    if (!geometry.name.empty()) return host + "-" + geometry.name;
    std::string suffix;
    for (const auto& [type, n] : counted(geometry.types)) {
        if (!suffix.empty()) suffix += '_';
        if (n > 1) suffix += std::to_string(n) + "x";
        for (char c : type)
            if (c != '.') suffix += c;
    }
    return host + "-" + suffix;
}

std::vector<std::string> sibling_files(const Gpu& gpu, const RootFs& root) {
    if (gpu.vendor == Vendor::Nvidia)
        return {root.host_path("/dev/nvidia" + std::to_string(gpu.minor)), root.host_path("/dev/nvidiactl")};
    return {root.host_path("/dev/kfd"), root.host_path("/dev/dri/renderD" + std::to_string(gpu.minor))};
}

std::string render_sibling_nodes(const std::vector<HostGeometry>& geometries, std::size_t gpus,
                                 const SiblingOptions& options) {
    std::string out;
    unsigned port = options.port;
    for (const HostGeometry* g : in_order(geometries)) {
        std::string gres;
        for (const auto& [type, n] : counted(g->types))
            gres += (gres.empty() ? "" : ",") + std::string("gpu:") + type + ":" + std::to_string(n * gpus);
        out += "NodeName=" + sibling_node_name(options.host, *g) + " NodeHostname=" + options.host +
               " Port=" + std::to_string(port++) + " Gres=" + gres + " Features=xpart_host_" + options.host;
        if (!options.node_options.empty()) out += " " + options.node_options;
        if (!g->current) out += " State=CLOUD";
        out += "\n";
    }
    return out;
}

std::string render_sibling_gres(const std::vector<HostGeometry>& geometries,
                                const std::vector<std::vector<std::string>>& files,
                                const SiblingOptions& options) {
    std::string out;
    for (const HostGeometry* g : in_order(geometries))
        for (const auto& gpu_files : files)
            for (const auto& type : g->types) {
                GresConfRecord r;
                r.node_names = {sibling_node_name(options.host, *g)};
                r.name = "gpu";
                r.type = type;
                r.multiple_files = gpu_files;
                out += format_gres_record(r) + "\n";
            }
    return out;
}

}  // namespace xpart
