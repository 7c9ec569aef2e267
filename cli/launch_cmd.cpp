// PLACEHOLDER: `xpart launch` is not implemented yet.
#include <iostream>
#include "cli/command.hpp"
namespace xpart::cli {
void add_launch_command(CLI::App& app, const GlobalOptions&, Runner& run) {
    auto* cmd = app.add_subcommand("launch", "(not implemented yet)");
    cmd->callback([&run] { run = [] { std::cerr << "xpart launch: not implemented\n"; return 2; }; });
}
}  // namespace xpart::cli
