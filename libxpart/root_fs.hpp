// Every path the code reads goes through one root prefix (like hwloc's HWLOC_FSROOT), so a
// recorded or simulated node replays anywhere. Paths given to RootFs are node paths
// ("/proc/devices"); host_path() says where they live on this machine.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "libxpart/result.hpp"

namespace xpart {

class RootFs {
public:
    explicit RootFs(std::string root = "/");
    // XPART_ROOT when set and non-empty, else "/".
    static RootFs from_env();

    const std::string& root() const { return root_; }
    bool is_real_root() const { return root_ == "/"; }
    std::string host_path(std::string_view node_path) const;

    // Whole file; under /sys it ends at the first short read() (one read() per attribute),
    // elsewhere at a read() returning 0. Error: "<host path>: <strerror>".
    Result<std::string> read(std::string_view node_path) const;
    bool exists(std::string_view node_path) const;
    // Entry names (no "." or ".."), sorted by name.
    Result<std::vector<std::string>> list(std::string_view node_dir) const;
    // Target of a symbolic link, as stored.
    Result<std::string> read_link(std::string_view node_path) const;

private:
    std::string root_;  // without trailing slash, except "/" itself
};

}  // namespace xpart
