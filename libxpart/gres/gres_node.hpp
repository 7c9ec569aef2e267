// slurmd start (gres_p_node_config_load): from xpart.conf, discovery and the explicit gres.conf
// records to the GRES records the node registers, with every finding as one log line.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "libxpart/slurm_text/gres_conf.hpp"
#include "libxpart/gres_record.hpp"
#include "libxpart/node.hpp"
#include "libxpart/result.hpp"
#include "libxpart/gres/xpart_conf.hpp"

namespace xpart {

struct NodeGres {
    std::vector<GresRecord> records;    // what the node registers
    // One line each, naming no plugin: the plugin prefixes what it logs ("gres/gpu: ").
    std::vector<std::string> errors;    // config, discovery, mismatches
    std::vector<std::string> warnings;  // discovery's non-fatal findings
};

// slurmd's gres.conf, read by xpart itself: Slurm hands a gres plugin only the records whose
// type slurm.conf's Gres= names (gres.c drops the others with "Ignoring extra GRES"), and the
// check must see what the admin wrote.
struct SlurmdGresConf {
    std::string path;              // "": none (a test, or a Slurm without one)
    std::string node_name;         // the NodeName slurmd runs as (slurmd_node_name.hpp)
    std::optional<GresConf> conf;  // nullopt: no such file, or unreadable (then `error`)
    std::string error;             // the reader's one line ("<file>:<line>: <Key>=<value>: ...")
};

// Reads `path` from the host (Slurm's configuration directory, not the node's root prefix).
// A missing file is no error: slurmd runs without one.
SlurmdGresConf read_slurmd_gres_conf(const std::string& path, const std::string& node_name);

// Pure decision: what to register given what was found. A failed discovery registers no GPU
// (the node then drains: better than a GPU node that looks GPU-less or half-bound). GPUs
// discovery could not read (Node::errors, NVML failing) are one error line each, and what
// was read still registers: slurmctld drains the node when its configured count is then short.
// gres.conf is checked by check_node_gres_conf, the check of `xpart discover --check`: each
// difference is that command's line and what slurmd does about it (OnMismatch=drain: register
// no GPU); notes are warnings. A gres.conf that cannot be read counts as a difference. Its
// AutoDetect= (the node's line's, else the global one) gives autodetect_line's line.
NodeGres plan_node_gres(const Result<Node>& discovered, const XpartConf& conf,
                        const SlurmdGresConf& gres_conf);

// Reads xpart.conf at `conf_path` and the gres.conf at `gres_conf_path` (the records of
// `node_name`), discovers the node, plans its records and writes the node cache
// (libxpart/node_cache.hpp) for the launchers. Never throws. `series`: the Slurm the plugin
// runs under, for TypeNaming=slurm (the MIG names of Slurm's autodetect differ by series).
NodeGres load_node_gres(const std::string& conf_path, const std::string& gres_conf_path,
                        const std::string& node_name, XpartConf* conf_out,
                        SlurmSeries series = SlurmSeries::S22_05);

}  // namespace xpart
