#include "launcher/node_source.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "libxpart/discovery.hpp"
#include "libxpart/node_json.hpp"

namespace xpart::launch {

Result<Node> load_node(const std::string& node_json_file, const std::string& root) {
    if (node_json_file.empty()) {
        DiscoveryOptions options;
        options.root = RootFs(root.empty() ? "/" : root);
        return discover(options);
    }
    std::ifstream in(node_json_file);
    if (!in) return Error{node_json_file + ": cannot open"};
    nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Error{node_json_file + ": not valid JSON"};
    auto node = node_from_json(j);
    if (!node) return Error{node_json_file + ": " + node.error().message};
    return node;
}

}  // namespace xpart::launch
