// xpart.conf: the gres/gpu plugin's own settings, a file beside slurm.conf written the Slurm way
// (Key=Value, several per line allowed, '#' starts a comment, keys case-insensitive).
#pragma once

#include <string>
#include <vector>

#include "libxpart/discovery.hpp"
#include "libxpart/result.hpp"
#include "libxpart/visibility.hpp"  // AmdIndexMode

namespace xpart {

// What the plugin does when explicit gres.conf Name=gpu records disagree with the hardware.
enum class OnMismatch {
    RegisterHardware,  // default: log the mismatch, register what is really there
    Drain,             // log the mismatch, register no GPU: slurmctld drains the node
};

// Geometry=<name>:<geometry>, repeatable: a MIG geometry the site names (xpart geometry,
// xpart reshape), e.g. Geometry=h100-3g2g1g:3g.40gb+2g.20gb+2x1g.10gb, or an AMD compute
// partition mode (Geometry=mi300x-cpx:cpx.nps1).
struct NamedGeometry {
    std::string name;
    std::string profiles;
};

struct XpartConf {
    std::string file;  // where it was read from ("" = built-in defaults)
    std::string root;               // Root=: node root prefix (simulated nodes, containers);
                                    // empty: $XPART_ROOT, else "/" (one slurmd per root)
    bool nvidia = true;             // Vendors=
    bool amd = true;
    std::string nvml_library;       // NvmlLibrary= (empty: discovery's default)
    TypeNaming type_naming = TypeNaming::Xpart;           // TypeNaming=xpart|slurm
    AmdTypeNaming amd_type_naming = AmdTypeNaming::Mode;  // AmdTypeNaming=
    AmdIndexMode amd_index_mode = AmdIndexMode::Index;    // AmdIndexMode=
    OnMismatch on_mismatch = OnMismatch::RegisterHardware; // OnMismatch=
    bool mig_monitor_capability = false;  // MigMonitorCapability=yes|no: MIG jobs also get
                                          // the monitor cap (see DiscoveryOptions)
    std::vector<NamedGeometry> geometries;  // Geometry= (repeatable)
};

// Errors: "<file>:<line>: <Key>=<value>: <why>".
Result<XpartConf> parse_xpart_conf(const std::string& text, const std::string& file);
// A missing file gives the defaults (a node needs no xpart.conf); an unreadable one is an error.
Result<XpartConf> load_xpart_conf(const std::string& path);

// The Slurm series of TypeNaming=slurm is the caller's (load_node_gres): the default here.
DiscoveryOptions discovery_options(const XpartConf& conf);

}  // namespace xpart
