// Puts the fake NVML into a simulated root: ROOT/usr/lib/xpart-sim/libnvidia-ml.so.1 with the
// node spec beside it as nvml-spec.json (where the fake looks for it).
#pragma once

#include <string>

#include "libxpart/result.hpp"

namespace xpart::sim {

constexpr const char* kFakeNvmlDir = "/usr/lib/xpart-sim";

// The installed library's host path for a root.
std::string fake_nvml_path(const std::string& root);
// Copies `library` (following symlinks) and `spec_file` (verbatim) into the root.
Status install_fake_nvml(const std::string& spec_file, const std::string& library,
                         const std::string& root);

}  // namespace xpart::sim
