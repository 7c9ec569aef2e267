// Where the launcher (and `xpart mps`) gets the node model and the partitions the job may use
// on it: a JSON file (`xpart discover --json` output, or written by tests), the node cache the
// gres plugin wrote at slurmd start, or live discovery through the root prefix.
#pragma once

#include <string>

#include "binding/allotment.hpp"
#include "libxpart/env_map.hpp"
#include "libxpart/node.hpp"
#include "libxpart/result.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart::binding {

enum class NodeOrigin { File, Cache, Discovery };
const char* origin_name(NodeOrigin origin);

struct NodeAllotment {
    Node node;
    Allotment allotment;
    NodeOrigin origin = NodeOrigin::Discovery;
};

// A `node_json_file` is used as given (its errors are the answer). Otherwise the node cache
// is used when every partition the environment names is in it; when it is missing, unreadable
// or misses one (a partition made after slurmd started), the node is discovered and the
// allotment resolved again, so its errors are the live node's. `mig_monitor_capability` is
// the discovery setting for that case (the cache already has the plugin's xpart.conf one).
// A cache in another format is refused (read_node_cache's one line), never discovered around.
Result<NodeAllotment> resolve_node(const std::string& node_json_file, const RootFs& root,
                                   const EnvMap& env, bool mig_monitor_capability = false);

}  // namespace xpart::binding
