#include "gres_plugin/discovery_module.hpp"

#include <dlfcn.h>

#include <string_view>

#include "gres_plugin/node_discovery.h"
#include "libxpart/gres_record.hpp"

namespace xpart::gres_plugin {

namespace {

std::string own_directory() {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&own_directory), &info) || !info.dli_fname) return ".";
    std::string path = info.dli_fname;
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

void split_lines(const char* text, std::vector<std::string>* out) {
    std::string_view rest = text ? text : "";
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        if (nl != 0) out->emplace_back(rest.substr(0, nl));
        if (nl == std::string_view::npos) break;
        rest.remove_prefix(nl + 1);
    }
}

DiscoveredNode failed(const std::string& why) {
    DiscoveredNode out;
    out.records_text = serialize_records({});
    out.gres.errors.push_back(why + "; registering no GPU");
    return out;
}

}  // namespace

DiscoveredNode discover_node(const std::string& conf_path, const std::string& gres_conf_path,
                             const std::string& node_name, SlurmSeries series,
                             std::string module_dir) {
    if (module_dir.empty()) module_dir = own_directory();
    const std::string path = module_dir + "/" + XPART_NODE_DISCOVERY_FILE;
    // RTLD_LOCAL: nothing of the module may resolve Slurm's or the plugin's symbols.
    void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!module) {
        const char* why = dlerror();
        return failed("cannot load the discovery module: " + std::string(why ? why : path));
    }
    auto* run = reinterpret_cast<xpart_node_discovery_fn*>(dlsym(module, "xpart_node_discovery"));
    auto* release =
        reinterpret_cast<xpart_node_discovery_free_fn*>(dlsym(module, "xpart_node_discovery_free"));
    if (!run || !release) {
        dlclose(module);
        return failed(path + ": not xpart's discovery module (missing entry points)");
    }

    xpart_node_answer answer{};
    if (run(XPART_NODE_DISCOVERY_ABI, conf_path.c_str(), gres_conf_path.c_str(), node_name.c_str(),
            static_cast<uint32_t>(series), &answer) != 0) {
        dlclose(module);
        return failed(path + ": from another xpart build (interface " +
                      std::to_string(XPART_NODE_DISCOVERY_ABI) + " not served); reinstall xpart");
    }
    DiscoveredNode out;
    split_lines(answer.warnings, &out.gres.warnings);
    split_lines(answer.errors, &out.gres.errors);
    out.amd_index_mode = answer.amd_index_mode == static_cast<uint32_t>(AmdIndexMode::Uuid)
                             ? AmdIndexMode::Uuid
                             : AmdIndexMode::Index;
    if (answer.records) {
        auto records = parse_records(answer.records);
        if (records) {
            out.gres.records = std::move(*records);
            out.records_text = answer.records;
        } else {
            out.gres.errors.push_back(records.error().message + "; registering no GPU");
        }
    } else if (out.gres.errors.empty()) {
        out.gres.errors.push_back("the discovery module gave no records (out of memory?); registering no GPU");
    }
    if (out.records_text.empty()) out.records_text = serialize_records({});
    release(&answer);
    dlclose(module);
    return out;
}

}  // namespace xpart::gres_plugin
