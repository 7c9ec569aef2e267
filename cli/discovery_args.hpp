// What `xpart discover` and `xpart node check` both take from their command line: the root,
// --vendor and --nvml-library, as discovery options.
#pragma once

#include <string>

#include "cli/command.hpp"
#include "libxpart/discovery.hpp"

namespace xpart::cli {

inline DiscoveryOptions discovery_options(const GlobalOptions& global, const std::string& vendor,
                                          const std::string& nvml_library) {
    DiscoveryOptions options;
    options.root = global.root.empty() ? RootFs::from_env() : RootFs(global.root);
    options.nvidia = vendor != "amd";
    options.amd = vendor != "nvidia";
    options.nvml_library = nvml_library;
    return options;
}

}  // namespace xpart::cli
