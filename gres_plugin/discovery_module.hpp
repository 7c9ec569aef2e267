// The plugin's side of node_discovery.h: slurmd's discovery runs in xpart_node_discovery.so,
// loaded from the plugin's own directory only for the call, so no other Slurm process maps
// it (see node_discovery.h).
#pragma once

#include <string>
#include <vector>

#include "libxpart/gres/gres_node.hpp"
#include "libxpart/slurm_type_naming.hpp"
#include "libxpart/gres/xpart_conf.hpp"

namespace xpart::gres_plugin {

struct DiscoveredNode {
    NodeGres gres;  // a module that cannot be loaded or answers garbage: no records, one error
    std::string records_text;  // gres.records as serialize_records() writes them
    AmdIndexMode amd_index_mode = AmdIndexMode::Index;
};

// `module_dir`: where the module lives ("" = beside this plugin, found with dladdr).
// `gres_conf_path` and `node_name`: slurmd's gres.conf and the NodeName whose records apply.
DiscoveredNode discover_node(const std::string& conf_path, const std::string& gres_conf_path,
                             const std::string& node_name, SlurmSeries series,
                             std::string module_dir = "");

}  // namespace xpart::gres_plugin
