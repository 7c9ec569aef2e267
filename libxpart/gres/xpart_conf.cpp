#include "libxpart/gres/xpart_conf.hpp"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <set>
#include <sstream>

#include "libxpart/config_words.hpp"
#include "libxpart/reshape/amd_reshape.hpp"
#include "libxpart/nvidia/mig_geometry.hpp"
#include "libxpart/root_fs.hpp"
#include "libxpart/text.hpp"

namespace xpart {
namespace {

struct Setting {
    std::string file;
    unsigned line;
    std::string key;  // as written
    std::string value;

    Error error(const std::string& why) const {
        return file_error(file, line, key + "=" + value + ": " + why);
    }
};

Status apply_vendors(const Setting& s, XpartConf& conf) {
    bool nvidia = false, amd = false;
    for (const auto& raw : split(s.value, ',')) {
        std::string v = to_lower(trim(raw));
        if (v == "nvidia") nvidia = true;
        else if (v == "amd") amd = true;
        else return s.error("unknown vendor '" + trim(raw) + "' (expected nvidia, amd or nvidia,amd)");
    }
    conf.nvidia = nvidia;
    conf.amd = amd;
    return ok_status();
}

// Stores a parsed value, or names the setting in its error.
template <class T>
Status set_result(const Setting& s, T& out, Result<T> value) {
    if (!value) return s.error(value.error().message);
    out = *value;
    return ok_status();
}

// An enum setting, its words in any case.
template <class E>
Status set(const Setting& s, E& out, std::initializer_list<Word<E>> table) {
    return set_result(s, out, parse_word(s.value, table));
}

Status apply_geometry(const Setting& s, XpartConf& conf) {
    const auto colon = s.value.find(':');
    if (colon == std::string::npos || colon == 0)
        return s.error("expected <name>:<geometry>, e.g. h100-7x1g:7x1g.10gb");
    NamedGeometry g{s.value.substr(0, colon), s.value.substr(colon + 1)};
    // A MIG geometry, or an AMD compute partition mode ("cpx", "cpx.nps4").
    auto amd = parse_amd_target(g.profiles);
    if (!amd) return s.error(amd.error().message);
    if (auto names = parse_mig_geometry(g.profiles); !names && !*amd) return s.error(names.error().message);
    for (const auto& other : conf.geometries)
        if (other.name == g.name) return s.error("geometry '" + g.name + "' named twice");
    conf.geometries.push_back(std::move(g));
    return ok_status();
}

Status apply(const Setting& s, XpartConf& conf) {
    const std::string key = to_lower(s.key);
    if (key == "root") {
        if (s.value.empty() || s.value[0] != '/') return s.error("must be an absolute path");
        conf.root = s.value;
    } else if (key == "vendors") {
        return apply_vendors(s, conf);
    } else if (key == "nvmllibrary") {
        conf.nvml_library = s.value;
    } else if (key == "amdtypenaming") {
        return set(s, conf.amd_type_naming, {{"mode", AmdTypeNaming::Mode},
                                             {"mode_memory", AmdTypeNaming::ModeMemory},
                                             {"model_mode_memory", AmdTypeNaming::ModelModeMemory}});
    } else if (key == "typenaming") {
        return set(s, conf.type_naming, {{"xpart", TypeNaming::Xpart}, {"slurm", TypeNaming::Slurm}});
    } else if (key == "amdindexmode") {
        return set(s, conf.amd_index_mode, {{"index", AmdIndexMode::Index}, {"uuid", AmdIndexMode::Uuid}});
    } else if (key == "onmismatch") {
        return set(s, conf.on_mismatch,
                   {{"register_hardware", OnMismatch::RegisterHardware}, {"drain", OnMismatch::Drain}});
    } else if (key == "geometry") {
        return apply_geometry(s, conf);
    } else if (key == "migmonitorcapability") {
        return set_result(s, conf.mig_monitor_capability, parse_yes_no(s.value));
    } else {
        return s.error("unknown key (known: Root, Vendors, NvmlLibrary, TypeNaming, "
                       "AmdTypeNaming, AmdIndexMode, OnMismatch, MigMonitorCapability, Geometry)");
    }
    return ok_status();
}

// Splits one line into whitespace-separated tokens after cutting the comment.
std::vector<std::string> tokens(std::string line) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::vector<std::string> out;
    std::istringstream in(line);
    std::string tok;
    while (in >> tok) out.push_back(tok);
    return out;
}

}  // namespace

Result<XpartConf> parse_xpart_conf(const std::string& text, const std::string& file) {
    XpartConf conf;
    conf.file = file;
    std::set<std::string> seen;
    std::istringstream in(text);
    std::string line;
    unsigned number = 0;
    while (std::getline(in, line)) {
        ++number;
        for (const auto& tok : tokens(line)) {
            auto eq = tok.find('=');
            if (eq == std::string::npos || eq == 0)
                return file_error(file, number, tok + ": expected Key=Value");
            Setting s{file, number, tok.substr(0, eq), tok.substr(eq + 1)};
            if (!seen.insert(to_lower(s.key)).second && to_lower(s.key) != "geometry")
                return s.error("key given twice");
            if (auto st = apply(s, conf); !st) return st.error();
        }
    }
    if (!conf.nvidia && !conf.amd) return file_error(file, 0, "Vendors=: no vendor enabled");
    return conf;
}

Result<XpartConf> load_xpart_conf(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return XpartConf{};
    auto text = RootFs("/").read(path);
    if (!text) return text.error();
    return parse_xpart_conf(*text, path);
}

DiscoveryOptions discovery_options(const XpartConf& conf) {
    DiscoveryOptions options;
    options.root = conf.root.empty() ? RootFs::from_env() : RootFs(conf.root);
    options.nvidia = conf.nvidia;
    options.amd = conf.amd;
    options.nvml_library = conf.nvml_library;
    options.amd_type_naming = conf.amd_type_naming;
    options.type_naming = conf.type_naming;
    options.mig_monitor_capability = conf.mig_monitor_capability;
    return options;
}

}  // namespace xpart
