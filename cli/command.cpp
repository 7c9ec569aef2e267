#include "cli/command.hpp"

#include <iostream>

namespace xpart::cli {

int fail(const std::string& subcommand, const std::string& message, int status) {
    std::cerr << "xpart " << subcommand << ": " << message << "\n";
    return status;
}

}  // namespace xpart::cli
