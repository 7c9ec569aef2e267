// Where the launcher gets the node model: a JSON file (`xpart discover --json` output, cached
// by the Prolog or written by tests) or live discovery through the root prefix.
#pragma once

#include <string>

#include "libxpart/node.hpp"
#include "libxpart/result.hpp"

namespace xpart::launch {

Result<Node> load_node(const std::string& node_json_file, const std::string& root);

}  // namespace xpart::launch
