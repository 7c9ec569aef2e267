#include "libxpart/result.hpp"

#include <cstring>

namespace xpart {

Error file_error(const std::string& file, unsigned line, const std::string& what) {
    std::string msg = file;
    if (line > 0) msg += ":" + std::to_string(line);
    msg += ": " + what;
    return Error{std::move(msg)};
}

Error errno_error(const std::string& what, int err) {
    return Error{what + ": " + std::strerror(err)};
}

}  // namespace xpart
