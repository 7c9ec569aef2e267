// Listing a cgroup tree's directories, never through a link. Apart from the device rules (and
// libbpf), so the SPANK plugin's front can take a step's v1 cgroups back without them.
#pragma once

#include <string>
#include <vector>

#include "libxpart/result.hpp"

namespace xpart::cgroup {

// The subdirectory names of `dir`, sorted (no links). Error names the directory.
Result<std::vector<std::string>> child_dirs(const std::string& dir);
// A directory itself, not a link to one (lstat).
bool is_cgroup_dir(const std::string& path);

}  // namespace xpart::cgroup
