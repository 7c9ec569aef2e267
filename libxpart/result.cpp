#include "libxpart/result.hpp"

namespace xpart {

Error file_error(const std::string& file, unsigned line, const std::string& what) {
    std::string msg = file;
    if (line > 0) msg += ":" + std::to_string(line);
    msg += ": " + what;
    return Error{std::move(msg)};
}

}  // namespace xpart
