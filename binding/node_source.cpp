#include "binding/node_source.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "libxpart/discovery.hpp"
#include "libxpart/node_cache.hpp"
#include "libxpart/node_json.hpp"

namespace xpart::binding {
namespace {

Result<Node> read_node_file(const std::string& file) {
    std::ifstream in(file);
    if (!in) return Error{file + ": cannot open"};
    nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Error{file + ": not valid JSON"};
    auto node = node_from_json(j);
    if (!node) return Error{file + ": " + node.error().message};
    return node;
}

Result<NodeAllotment> allot(Result<Node> node, NodeOrigin origin, const RootFs& root,
                            const EnvMap& env) {
    if (!node) return node.error();
    auto allotment = resolve_allotment(*node, env, open_probe(root));
    if (!allotment) return allotment.error();
    return NodeAllotment{std::move(*node), std::move(*allotment), origin};
}

}  // namespace

const char* origin_name(NodeOrigin origin) {
    switch (origin) {
    case NodeOrigin::File: return "file";
    case NodeOrigin::Cache: return "node cache";
    case NodeOrigin::Discovery: return "discovery";
    }
    return "?";
}

Result<NodeAllotment> resolve_node(const std::string& node_json_file, const RootFs& root,
                                   const EnvMap& env, bool mig_monitor_capability) {
    if (!node_json_file.empty()) return allot(read_node_file(node_json_file), NodeOrigin::File, root, env);
    CacheMiss miss;
    auto node = read_node_cache(root, &miss);
    // Another xpart's cache is refused: a restart of slurmd rewrites it (discovering instead
    // could bind against records slurmd did not register).
    if (!node && miss == CacheMiss::OtherFormat) return node.error();
    if (auto cached = allot(std::move(node), NodeOrigin::Cache, root, env)) return cached;
    DiscoveryOptions options;
    options.root = root;
    options.mig_monitor_capability = mig_monitor_capability;
    return allot(discover(options), NodeOrigin::Discovery, root, env);
}

}  // namespace xpart::binding
