// PLACEHOLDER: `xpart mps` is not implemented yet.
#include <iostream>
#include "cli/command.hpp"
namespace xpart::cli {
void add_mps_command(CLI::App& app, const GlobalOptions&, Runner& run) {
    auto* cmd = app.add_subcommand("mps", "(not implemented yet)");
    cmd->callback([&run] { run = [] { std::cerr << "xpart mps: not implemented\n"; return 2; }; });
}
}  // namespace xpart::cli
