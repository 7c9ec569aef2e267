// The JSON form of the node model (`xpart discover --json`, golden tests, the launcher's cache).
#pragma once

#include <nlohmann/json.hpp>

#include "libxpart/node.hpp"
#include "libxpart/result.hpp"

namespace xpart {

// {"gpus":[{vendor, model, uuid, pci_bus_id, index, minor, mode, memory_mode, memory_mb,
//   numa_node, cpus ("0-23,48-71"), partitions:[{uuid, type, gi, ci, index, kfd_node,
//   memory_mb, compute_units, device_files:[{path, major, minor, shared}]}],
//   withheld_device_files:[...]}], "warnings":[...]}
// gi/ci/kfd_node/index are null where they do not apply. withheld_device_files is written only
// when a GPU has some (and read as none when absent: caches from before it existed).
nlohmann::json to_json(const Node& node);
Result<Node> node_from_json(const nlohmann::json& j);

}  // namespace xpart
