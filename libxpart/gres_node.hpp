// slurmd start (gres_p_node_config_load): from xpart.conf, discovery and the explicit gres.conf
// records to the GRES records the node registers, with every finding as one log line.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "libxpart/gres_check.hpp"
#include "libxpart/gres_record.hpp"
#include "libxpart/node.hpp"
#include "libxpart/result.hpp"
#include "libxpart/xpart_conf.hpp"

namespace xpart {

struct NodeGres {
    std::vector<GresRecord> records;    // what the node registers
    // One line each, naming no plugin: the plugin prefixes what it logs ("gres/gpu: ").
    std::vector<std::string> errors;    // config, discovery, mismatches
    std::vector<std::string> warnings;  // discovery's non-fatal findings
};

// Pure decision: what to register given what was found. A failed discovery registers no GPU
// (the node then drains: better than a GPU node that looks GPU-less or half-bound). GPUs
// discovery could not read (Node::errors, NVML failing) are one error line each, and what
// was read still registers: slurmctld drains the node when its configured count is then short.
NodeGres plan_node_gres(const Result<Node>& discovered, const XpartConf& conf,
                        const std::vector<ConfiguredGpu>& configured);

// The line for the global AutoDetect= of the gres.conf beside xpart.conf (autodetect_line);
// nullopt when there is none, it is off, or the file cannot be read or parsed.
std::optional<std::string> gres_conf_autodetect_line(const std::string& xpart_conf_path,
                                                     std::size_t registered);

// Reads xpart.conf at `conf_path`, discovers the node, plans, and writes the node cache
// (libxpart/node_cache.hpp) for the launchers. Never throws. `series`: the Slurm the plugin
// runs under, for TypeNaming=slurm (the MIG names of Slurm's autodetect differ by series).
NodeGres load_node_gres(const std::string& conf_path, const std::vector<ConfiguredGpu>& configured,
                        XpartConf* conf_out, SlurmSeries series = SlurmSeries::S22_05);

}  // namespace xpart
