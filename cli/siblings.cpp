#include "cli/siblings.hpp"

#include <algorithm>

#include "cli/nvml_geometry.hpp"
#include "libxpart/amd/amd_partition.hpp"
#include "libxpart/reshape/amd_reshape.hpp"
#include "libxpart/nvidia/mig_geometry.hpp"
#include "libxpart/text.hpp"

namespace xpart::cli {

namespace {

// One GPU's geometries: the words an admin may name each by (--geometry), and its types.
struct Option {
    HostGeometry geometry;
    std::vector<std::string> words;
};

std::vector<std::string> sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
}

std::string label(const Gpu& g) { return "GPU " + std::to_string(g.index) + " (" + g.model + ")"; }

Result<std::vector<Option>> mig_options(const Nvml& n, const Gpu& gpu, const XpartConf& conf) {
    auto g = read_gpu_geometry(*n.session, *n.control, static_cast<unsigned>(gpu.index));
    if (!g) return g.error();
    std::vector<Option> out;
    for (const auto& c : candidates(*g, conf)) {
        const std::string written = format_mig_geometry(c.profiles, g->profiles);
        Option o{{c.name, c.profiles, false}, {written}};
        if (!c.name.empty()) o.words.insert(o.words.begin(), c.name);
        out.push_back(std::move(o));
    }
    return out;
}

Result<std::vector<Option>> amd_options(const RootFs& root, const Gpu& gpu, AmdTypeNaming naming) {
    auto modes = amd_mode_options(root, gpu);
    if (!modes) return modes.error();
    std::vector<Option> out;
    for (const auto& m : *modes) {
        if (m.reboot) continue;  // an NPS change is an admin's reboot, not a job's reshape
        const std::string type = amd_partition_type(naming, m.target.mode, m.target.memory_mode, gpu.model);
        const std::string mode = to_string(m.target.mode);  // "cpx"
        out.push_back({{mode, std::vector<std::string>(m.partitions, type), false}, {mode, type}});
    }
    return out;
}

// Whether the host can be reshaped as one: one vendor, every GPU partitioned now, all alike.
Status check_host(const Node& node) {
    if (node.gpus.empty()) return Error{"no GPU on this host: nothing to reshape"};
    for (const Gpu& g : node.gpus) {
        if (g.vendor != node.gpus.front().vendor)
            return Error{label(node.gpus.front()) + " and " + label(g) + ": one vendor per host in the reshape flow"};
        if (g.vendor == Vendor::Nvidia && g.mode != PartitionMode::Mig)
            return Error{label(g) + (g.mode == PartitionMode::MigPending ? ": MIG waits for a GPU reset" : ": MIG is off") +
                         ": the reshape flow needs MIG on (turning it on is a GPU reset, an admin's)"};
        if (g.vendor == Vendor::Amd && g.mode == PartitionMode::Full)
            return Error{label(g) + " has no compute partitions"};
        if (partition_types(g) != partition_types(node.gpus.front()))
            return Error{label(node.gpus.front()) + " and " + label(g) +
                         " are laid out differently now: reshape them alike first (xpart reshape)"};
    }
    return ok_status();
}

}  // namespace

Result<std::vector<HostGeometry>> host_geometries(const Node& node, const RootFs& root, const XpartConf& conf,
                                                  const SiblingChoice& choice) {
    if (auto ok = check_host(node); !ok) return ok.error();
    const bool nvidia = node.gpus.front().vendor == Vendor::Nvidia;
    Result<Nvml> n = Error{""};
    if (nvidia) {
        n = open_nvml(choice.nvml_library.empty() ? conf.nvml_library : choice.nvml_library);
        if (!n) return n.error();
    }
    // The first GPU's options that every other GPU has too (by types).
    std::vector<Option> kept;
    for (const Gpu& g : node.gpus) {
        auto options = nvidia ? mig_options(*n, g, conf) : amd_options(root, g, choice.amd_type_naming);
        if (!options) return options.error();
        if (&g == &node.gpus.front()) {
            kept = std::move(*options);
            continue;
        }
        kept.erase(std::remove_if(kept.begin(), kept.end(), [&](const Option& k) {
                       return std::none_of(options->begin(), options->end(), [&](const Option& o) {
                           return sorted(o.geometry.types) == sorted(k.geometry.types);
                       });
                   }), kept.end());
    }
    // Each geometry once (a site's name and the same profile alone), the current one marked.
    const std::vector<std::string> now = partition_types(node.gpus.front());
    std::vector<Option> unique;
    for (auto& k : kept) {
        auto same = std::find_if(unique.begin(), unique.end(),
                                 [&](const Option& u) { return sorted(u.geometry.types) == sorted(k.geometry.types); });
        if (same != unique.end()) {
            same->words.insert(same->words.end(), k.words.begin(), k.words.end());
            continue;
        }
        k.geometry.current = sorted(k.geometry.types) == now;
        unique.push_back(std::move(k));
    }
    if (std::none_of(unique.begin(), unique.end(), [](const Option& u) { return u.geometry.current; }))
        unique.insert(unique.begin(), Option{{"", now, true}, {}});
    std::vector<HostGeometry> out;
    for (const auto& u : unique)
        if (u.geometry.current || choice.only.empty() ||
            std::any_of(choice.only.begin(), choice.only.end(), [&](const std::string& w) {
                return std::find(u.words.begin(), u.words.end(), w) != u.words.end();
            }))
            out.push_back(u.geometry);
    for (const auto& w : choice.only) {
        if (std::any_of(unique.begin(), unique.end(), [&](const Option& u) {
                return std::find(u.words.begin(), u.words.end(), w) != u.words.end();
            }))
            continue;
        std::string can;
        for (const auto& u : unique)
            if (!u.words.empty()) can += (can.empty() ? "" : ", ") + u.words.front();
        return Error{"--geometry " + w + ": not a geometry this host can take (it can take " + can + ")"};
    }
    return out;
}

}  // namespace xpart::cli
