#include "libxpart/gres_node.hpp"

#include "libxpart/discovery.hpp"
#include "libxpart/gres_conf.hpp"
#include "libxpart/node_cache.hpp"
#include "libxpart/text.hpp"

namespace xpart {

NodeGres plan_node_gres(const Result<Node>& discovered, const XpartConf& conf,
                        const std::vector<ConfiguredGpu>& configured) {
    NodeGres out;
    if (!discovered) {
        out.errors.push_back("discovery failed, registering no GPU: " +
                             discovered.error().message);
        return out;
    }
    out.warnings = discovered->warnings;
    // GPUs present but unreadable (NVML failing): said once each; the rest still registers.
    for (const std::string& e : discovered->errors) out.errors.push_back(e);
    out.records = gres_records(*discovered, discovery_options(conf).root);
    // GPUs discovery could not read (NVML failing, the driver gone) are said above; counts of
    // types without File= (slurm.conf's Gres= merged in by Slurm) would only repeat that, and
    // slurmctld reports the lower count itself. Records naming files are still checked.
    std::vector<ConfiguredGpu> checked;
    for (const auto& c : configured)
        if (discovered->errors.empty() || !c.files.empty()) checked.push_back(c);
    auto mismatches = check_configured(checked, out.records);
    for (auto& line : mismatches) {
        line = "gres.conf disagrees with the hardware: " + line +
               (conf.on_mismatch == OnMismatch::Drain ? "; OnMismatch=drain: registering no GPU"
                                                      : "; registering what the hardware has");
        out.errors.push_back(std::move(line));
    }
    if (!mismatches.empty() && conf.on_mismatch == OnMismatch::Drain) out.records.clear();
    return out;
}

std::optional<std::string> gres_conf_autodetect_line(const std::string& xpart_conf_path,
                                                     std::size_t registered) {
    if (xpart_conf_path.empty()) return std::nullopt;
    const auto slash = xpart_conf_path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : xpart_conf_path.substr(0, slash);
    // Slurm has read this file already and said what it disliked; xpart only looks for the
    // global AutoDetect= (Slurm 26.05 resolves `full` before the plugin is called, so the
    // file, not Slurm's flags, says what the admin asked for).
    auto gres_conf = read_gres_conf(RootFs("/"), dir + "/gres.conf");
    if (!gres_conf || gres_conf->autodetect.empty() || to_lower(gres_conf->autodetect) == "off")
        return std::nullopt;
    return autodetect_line({gres_conf->autodetect}, registered);
}

NodeGres load_node_gres(const std::string& conf_path, const std::vector<ConfiguredGpu>& configured,
                        XpartConf* conf_out, SlurmSeries series) {
    try {
        auto conf = load_xpart_conf(conf_path);
        if (!conf) {
            NodeGres out;
            out.errors.push_back(conf.error().message + "; registering no GPU");
            return out;
        }
        if (conf_out) *conf_out = *conf;
        DiscoveryOptions options = discovery_options(*conf);
        options.tolerate_nvml_failure = true;  // an NVIDIA failure must not hide the AMD GPUs
        options.slurm_series = series;
        Result<Node> node = discover(options);
        NodeGres out = plan_node_gres(node, *conf, configured);
        if (auto line = gres_conf_autodetect_line(conf_path, out.records.size()))
            out.warnings.push_back(std::move(*line));
        // The launchers' copy of what was found; a failed discovery removes the old one.
        Status cached = node ? write_node_cache(options.root, *node) : remove_node_cache(options.root);
        if (!cached) {
            // A full or read-only /run: no launcher may go on reading an older node's cache.
            Status removed = node ? remove_node_cache(options.root) : cached;
            out.warnings.push_back(
                "node cache: " + cached.error().message +
                (removed ? "; xpart launch will discover the node in every rank"
                         : "; the previous cache stays (" + removed.error().message +
                               "): xpart launch may read it"));
        }
        return out;
    } catch (const std::exception& e) {
        NodeGres out;
        out.errors.push_back(std::string("internal error, registering no GPU: ") +
                             e.what());
        return out;
    }
}

}  // namespace xpart
