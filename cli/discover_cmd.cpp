// `xpart discover`: what partitions this node has, as a table, JSON or gres.conf lines, or a
// check of an existing gres.conf against the hardware (exit 3 on differences, like
// `mig-parted assert` exits non-zero on drift). GPUs the node has but discovery could not
// read (NVML failing on an NVIDIA node) are one line each on stderr and exit 4, after the
// output for the rest: a script must not take a half-seen node for the whole. With --siblings,
// the reshape flow's NodeNames of this host, one per geometry it may take (slurm.conf and
// gres.conf lines; etc/slurm.conf.reshape).
#include <unistd.h>

#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "cli/command.hpp"
#include "cli/discovery_args.hpp"
#include "cli/discover_table.hpp"
#include "cli/exit_status.hpp"
#include "cli/siblings.hpp"
#include "libxpart/defaults.hpp"
#include "libxpart/discovery.hpp"
#include "libxpart/slurm_text/gres_conf.hpp"
#include "libxpart/node_json.hpp"
#include "libxpart/rdma_nics.hpp"
#include "libxpart/slurm_text/slurmd_node_name.hpp"

namespace xpart::cli {

namespace {

struct DiscoverArgs {
    bool json = false;
    bool gres_conf = false;
    bool check_nics = false;
    std::string check_file;
    std::string vendor = "all";
    std::string nvml_library;
    AmdTypeNaming amd_type_naming = AmdTypeNaming::Mode;
    TypeNaming type_naming = TypeNaming::Xpart;
    SlurmSeries slurm_series = SlurmSeries::S22_05;
    std::string node_name;
    bool siblings = false;
    bool slurm_conf = false;
    std::string conf = defaults::kXpartConf;
    std::vector<std::string> geometries;
    SiblingOptions sibling;
};

int check(const DiscoverArgs& args, const GresConf& conf, const Node& node, const RootFs& root) {
    const std::string node_name = args.node_name.empty() ? short_hostname() : args.node_name;
    GresCheckOptions options;  // with the default, drift-tolerant type matcher
    options.root = root;
    options.file = args.check_file;
    const auto mismatches = check_node_gres_conf(conf, node_name, node, options);
    for (const GresMismatch& m : mismatches) (m.note ? std::cerr : std::cout) << m.to_string() << "\n";
    return has_differences(mismatches) ? kExitDifferences : kExitOk;
}

// The reshape flow's sibling NodeNames of this host, as slurm.conf or gres.conf lines.
int siblings(const DiscoverArgs& args, const Node& node, const RootFs& root) {
    // A host seen in part would get siblings for the GPUs seen only.
    if (!node.errors.empty()) return fail("discover", "--siblings: not every GPU could be read", kExitIncomplete);
    auto conf = load_xpart_conf(args.conf);
    if (!conf) return fail("discover", conf.error().message);
    auto geometries = host_geometries(node, root, *conf, {args.nvml_library, args.amd_type_naming, args.geometries});
    if (!geometries) return fail("discover", "--siblings: " + geometries.error().message);
    SiblingOptions options = args.sibling;
    options.host = args.node_name.empty() ? short_hostname() : args.node_name;
    if (args.slurm_conf) {
        std::cout << "# slurm.conf: the reshape flow's NodeNames of " << options.host
                  << " (`xpart discover --slurm-conf --siblings`), one per geometry; the rest of the\n"
                     "# flow's settings are in etc/slurm.conf.reshape. Put them all in one partition.\n";
        if (options.node_options.empty())
            std::cout << "# Each line lacks the host's CPUs=, RealMemory=, ... (slurmd -C): give them with --node-options.\n";
        std::cout << render_sibling_nodes(*geometries, node.gpus.size(), options);
        return kExitOk;
    }
    std::vector<std::vector<std::string>> files;
    for (const Gpu& g : node.gpus) files.push_back(sibling_files(g, root));
    std::cout << "# gres.conf: the reshape flow's NodeNames of " << options.host
              << " (`xpart discover --gres-conf --siblings`): each partition a sibling\n"
                 "# will have, named for slurmctld by files of its GPU; the records slurmd discovers replace\n"
                 "# them when the sibling registers.\n";
    std::cout << render_sibling_gres(*geometries, files, options);
    return kExitOk;
}

int run_discover(const DiscoverArgs& args, const GlobalOptions& global) {
    if (args.siblings && !args.gres_conf && !args.slurm_conf)
        return fail("discover", "--siblings: give --gres-conf or --slurm-conf");
    if (args.siblings && args.type_naming != TypeNaming::Xpart)
        return fail("discover", "--siblings: the GRES types must be xpart's (--type-naming xpart): "
                                "xpart reshape --slurm-node reads a sibling's geometry from them");
    DiscoveryOptions options = discovery_options(global, args.vendor, args.nvml_library);
    options.tolerate_nvml_failure = true;  // show the other vendors' GPUs, then exit 4
    options.amd_type_naming = args.amd_type_naming;
    options.type_naming = args.type_naming;
    options.slurm_series = args.slurm_series;
    options.mig_monitor_capability = global.mig_monitor_capability;
    // The gres.conf named on the command line is a host file, not a file of the node; a bad
    // one is reported before discovery runs.
    std::optional<GresConf> conf;
    if (!args.check_file.empty()) {
        auto parsed = read_gres_conf(RootFs("/"), args.check_file);
        if (!parsed) return fail("discover", parsed.error().message, kExitError);
        conf = std::move(*parsed);
    }
    auto node = discover(options);
    if (!node) return fail("discover", node.error().message, kExitError);
    for (const std::string& e : node->errors) std::cerr << "xpart discover: " << e << "\n";
    if (args.siblings) return siblings(args, *node, options.root);
    const int status = node->errors.empty() ? kExitOk : kExitIncomplete;
    if (conf) {
        const int differences = check(args, *conf, *node, options.root);
        return status != kExitOk ? status : differences;  // the cause before its symptoms
    }
    if (args.check_nics) {
        // Exit 3 as --check does: a GPU whose GPUDirect RDMA would cross sockets is drift
        // an admin wants to hear about (cabling, a NIC down, a BIOS bifurcation setting).
        int far = 0;
        for (const Gpu& g : node->gpus)
            if (!g.nics.empty() && g.nics.front().path == PciPath::CrossSocket) {
                std::cout << "GPU " << g.index << " (" << g.pci_bus_id << "): " << kNoNearNic
                          << " (nearest: " << g.nics.front().nic << ")\n";
                ++far;
            }
        if (node->nics.empty()) std::cerr << "xpart discover: no RDMA NIC on this node\n";
        return status != kExitOk ? status : (far ? kExitDifferences : kExitOk);
    }
    if (args.json)
        std::cout << to_json(*node).dump(2) << "\n";
    else if (args.gres_conf)
        std::cout << render_gres_conf(*node, options.root);
    else
        std::cout << render_node_table(*node);
    return status;
}

}  // namespace

void add_discover_command(CLI::App& app, const GlobalOptions& global, Runner& run) {
    auto args = std::make_shared<DiscoverArgs>();
    auto* cmd = app.add_subcommand(
        "discover", "List the node's GPUs and partitions; write or check gres.conf");
    auto* json = cmd->add_flag("--json", args->json, "the node model as JSON");
    auto* gres = cmd->add_flag("--gres-conf", args->gres_conf,
                               "gres.conf lines, one per partition, ready to paste");
    auto* check_opt =
        cmd->add_option("--check", args->check_file,
                        "compare this gres.conf with the hardware: exit 0 when they agree, 3 "
                        "with one line per difference");
    auto* nics = cmd->add_flag("--check-nics", args->check_nics,
                               "exit 3, one line each, when a GPU's nearest RDMA NIC is across "
                               "sockets");
    json->excludes(gres)->excludes(check_opt)->excludes(nics);
    gres->excludes(check_opt)->excludes(nics);
    check_opt->excludes(nics);
    auto* siblings = cmd->add_flag("--siblings", args->siblings,
                                   "with --gres-conf or --slurm-conf: the reshape flow's NodeNames of this host, one "
                                   "per geometry it may take (etc/slurm.conf.reshape)");
    auto* slurm = cmd->add_flag("--slurm-conf", args->slurm_conf, "with --siblings: slurm.conf NodeName lines");
    slurm->needs(siblings)->excludes(gres);
    siblings->excludes(json)->excludes(check_opt)->excludes(nics);
    cmd->add_option("--node-name", args->node_name,
                    "with --check: the NodeName= to select records for; with --siblings: the host's "
                    "NodeHostname and the NodeNames' prefix (default: short hostname)");
    cmd->add_option("--port", args->sibling.port,
                    "with --siblings: slurmd port of the current geometry's NodeName; the others count up")
        ->needs(siblings)
        ->check(CLI::Range(1, 65535))
        ->capture_default_str();
    cmd->add_option("--node-options", args->sibling.node_options,
                    "with --siblings: added to each NodeName line (\"CPUs=64 RealMemory=500000\")")
        ->needs(siblings);
    cmd->add_option("--geometry", args->geometries,
                    "with --siblings: only these geometries (Geometry= names, geometries as written, AMD "
                    "modes) beside the current one; repeat or separate with commas")
        ->needs(siblings)
        ->delimiter(',');
    cmd->add_option("--xpart-conf", args->conf, "with --siblings: xpart.conf with the site's Geometry= names")
        ->needs(siblings)
        ->capture_default_str();
    cmd->add_option("--vendor", args->vendor, "which GPUs to look for")
        ->check(CLI::IsMember({"nvidia", "amd", "all"}))
        ->capture_default_str();
    cmd->add_option("--nvml-library", args->nvml_library, "NVML library to load")
        ->envname("XPART_NVML_LIBRARY");
    const std::map<std::string, AmdTypeNaming> namings{
        {"mode", AmdTypeNaming::Mode},
        {"mode_memory", AmdTypeNaming::ModeMemory},
        {"model_mode_memory", AmdTypeNaming::ModelModeMemory}};
    cmd->add_option("--amd-type-naming", args->amd_type_naming,
                    "GRES type of AMD partitions: cpx, cpx.nps4 or mi300x.cpx.nps4")
        ->transform(CLI::CheckedTransformer(namings, CLI::ignore_case));
    const std::map<std::string, TypeNaming> type_namings{{"xpart", TypeNaming::Xpart},
                                                         {"slurm", TypeNaming::Slurm}};
    cmd->add_option("--type-naming", args->type_naming,
                    "GRES type names: xpart (3g.20gb) or slurm (nvidia_a100_3g.20gb, as Slurm's "
                    "AutoDetect=nvml)")
        ->transform(CLI::CheckedTransformer(type_namings, CLI::ignore_case));
    std::map<std::string, SlurmSeries> series;
    std::string series_names;
    for (const auto& s : all_slurm_series()) {
        series.emplace(s.name, s.series);
        series_names += (series_names.empty() ? "" : ", ") + std::string(s.name);
    }
    cmd->add_option("--slurm-series", args->slurm_series,
                    "Slurm whose names --type-naming slurm gives: " + series_names)
        ->transform(CLI::CheckedTransformer(series));
    cmd->callback([args, &global, &run] {
        run = [args, &global] { return run_discover(*args, global); };
    });
}

}  // namespace xpart::cli
