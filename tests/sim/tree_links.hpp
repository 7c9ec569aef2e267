// Test helpers for links in a built tree: what a link says, and where a path leads once every
// link is followed (both as node paths of the tree, as discovery sees them).
#pragma once

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "tests/libxpart/amd_temp_root.hpp"

namespace xpart::testing {

// The link's text; "<none>" when the path is no link.
inline std::string link_of(const TempRoot& r, const std::string& node_path) {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(r.host(node_path).c_str(), buf, sizeof buf);
    return n < 0 ? std::string("<none>") : std::string(buf, static_cast<std::size_t>(n));
}

// The node path a path resolves to; "" when it leads nowhere or out of the tree.
inline std::string resolved(const TempRoot& r, const std::string& node_path) {
    char root[PATH_MAX], real[PATH_MAX];
    if (!::realpath(r.path().c_str(), root) || !::realpath(r.host(node_path).c_str(), real))
        return "";
    const std::string out = real;
    return out.rfind(root, 0) == 0 ? out.substr(std::strlen(root)) : "";
}

}  // namespace xpart::testing
