// PLACEHOLDER: `xpart discover` is not implemented yet.
#include <iostream>
#include "cli/command.hpp"
namespace xpart::cli {
void add_discover_command(CLI::App& app, const GlobalOptions&, Runner& run) {
    auto* cmd = app.add_subcommand("discover", "(not implemented yet)");
    cmd->callback([&run] { run = [] { std::cerr << "xpart discover: not implemented\n"; return 2; }; });
}
}  // namespace xpart::cli
