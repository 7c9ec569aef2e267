// /proc/devices: the major number of each character driver (nvidia, nvidia-caps, kfd, drm...).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "libxpart/result.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart {

class CharMajors {
public:
    // Parses the "Character devices:" section of <root>/proc/devices.
    static Result<CharMajors> load(const RootFs& root);
    static Result<CharMajors> parse(const std::string& text, const std::string& file);

    std::optional<unsigned> find(const std::string& driver) const;
    // Error naming /proc/devices and the driver when absent.
    Result<unsigned> require(const std::string& driver) const;

private:
    std::map<std::string, unsigned> majors_;
    std::string file_;
};

}  // namespace xpart
