// The node's JSON text written straight into a string, for the node cache. write_node_cache runs
// at every slurmd start and `slurmd -G`; building the nlohmann tree and dumping it cost 7.6M
// instructions on a 64-XCP node (issue #12), this a small fraction of that.
#pragma once

#include <string>

#include "libxpart/node.hpp"

namespace xpart {

// Exactly the bytes of to_json(node).dump() (libxpart/node_json.hpp): compact, keys in the
// alphabetical order of nlohmann's default object type, strings escaped as nlohmann does
// ('"', '\\', \b \f \n \r \t, other control characters as \u00xx, UTF-8 as is). Unlike
// dump(), which throws on invalid UTF-8, such bytes are copied through: the cache then fails to
// parse and the launchers discover the node themselves.
std::string node_json_text(const Node& node);

// The node cache's text (libxpart/node_cache.hpp): node_json_text's members and, in key order,
// "format" and "gres_records" ([[gpu, partition], ...]: each record's place, Slurm's order).
std::string node_cache_text(const Node& node, int format,
                            const std::vector<PartitionPlace>& records);

}  // namespace xpart
