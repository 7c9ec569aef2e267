#include "libxpart/gres/gres_node.hpp"

#include "libxpart/discovery.hpp"
#include "libxpart/gres/gres_check.hpp"
#include "libxpart/slurm_text/gres_conf.hpp"
#include "libxpart/node_cache.hpp"
#include "libxpart/text.hpp"

namespace xpart {

namespace {

// The node's AutoDetect= line in gres.conf, else the global one; "" when none.
std::string autodetect_of(const GresConf& conf, const std::string& node_name) {
    std::string method = conf.autodetect;
    for (const GresConfRecord& r : records_for_node(conf, node_name))
        if (!r.autodetect.empty()) method = r.autodetect;
    return method;
}

}  // namespace

SlurmdGresConf read_slurmd_gres_conf(const std::string& path, const std::string& node_name) {
    SlurmdGresConf out{path, node_name, std::nullopt, {}};
    if (path.empty()) return out;
    const RootFs host("/");
    if (!host.exists(path)) return out;
    auto conf = read_gres_conf(host, path);
    if (conf) out.conf = std::move(*conf);
    else out.error = conf.error().message;
    return out;
}

NodeGres plan_node_gres(const Result<Node>& discovered, const XpartConf& conf,
                        const SlurmdGresConf& gres_conf) {
    NodeGres out;
    if (!discovered) {
        out.errors.push_back("discovery failed, registering no GPU: " +
                             discovered.error().message);
        return out;
    }
    out.warnings = discovered->warnings;
    // GPUs present but unreadable (NVML failing): said once each; the rest still registers.
    for (const std::string& e : discovered->errors) out.errors.push_back(e);
    const RootFs root = discovery_options(conf).root;
    out.records = gres_records(*discovered, root);
    const std::string consequence = conf.on_mismatch == OnMismatch::Drain
                                        ? "; OnMismatch=drain: registering no GPU"
                                        : "; registering what the hardware has";
    bool differs = false;
    if (!gres_conf.error.empty()) {
        out.errors.push_back(gres_conf.error + ": gres.conf not checked" + consequence);
        differs = true;
    } else if (gres_conf.conf) {
        GresCheckOptions options;  // the CLI's, with its drift-tolerant type matcher
        options.root = root;
        options.file = gres_conf.path;
        for (const GresMismatch& m :
             check_node_gres_conf(*gres_conf.conf, gres_conf.node_name, *discovered, options)) {
            if (m.note) {
                out.warnings.push_back(m.to_string());
            } else {
                out.errors.push_back(m.to_string() + consequence);
                differs = true;
            }
        }
        const std::string method = autodetect_of(*gres_conf.conf, gres_conf.node_name);
        if (!method.empty() && to_lower(method) != "off")
            if (auto line = autodetect_line({method}, out.records.size()))
                out.warnings.push_back(std::move(*line));
    }
    if (differs && conf.on_mismatch == OnMismatch::Drain) out.records.clear();
    return out;
}

NodeGres load_node_gres(const std::string& conf_path, const std::string& gres_conf_path,
                        const std::string& node_name, XpartConf* conf_out, SlurmSeries series) {
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
        NodeGres out = plan_node_gres(node, *conf, read_slurmd_gres_conf(gres_conf_path, node_name));
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
