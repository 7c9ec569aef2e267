#include "spank_plugin/step_module_load.hpp"

#include <dlfcn.h>

#include <string>

namespace xpart::spank {

namespace {

std::string own_directory() {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&own_directory), &info) || !info.dli_fname) return ".";
    const std::string path = info.dli_fname;
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

Result<const xpart_step_module*> step_module() {
    static const xpart_step_module* loaded = nullptr;
    if (loaded) return loaded;
    const std::string path = own_directory() + "/" + XPART_STEP_MODULE_FILE;
    // RTLD_LOCAL: the module's C++ runtime and libraries stay its own; Slurm's spank_* and
    // slurm_* still resolve from the process. Never closed: the step holds its state.
    void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!module) {
        const char* why = dlerror();
        return Error{"cannot load the step module: " + std::string(why ? why : path)};
    }
    auto* table = reinterpret_cast<xpart_spank_step_fn*>(dlsym(module, "xpart_spank_step"));
    if (!table) return Error{path + ": not xpart's step module (no xpart_spank_step); reinstall xpart"};
    loaded = table(XPART_STEP_MODULE_ABI);
    if (!loaded)
        return Error{path + ": from another xpart build (interface " + std::to_string(XPART_STEP_MODULE_ABI) +
                     " not served); reinstall xpart"};
    return loaded;
}

}  // namespace xpart::spank
