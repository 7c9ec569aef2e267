// PLACEHOLDER: `xpart cgroup` is not implemented yet.
#include <iostream>
#include "cli/command.hpp"
namespace xpart::cli {
void add_cgroup_command(CLI::App& app, const GlobalOptions&, Runner& run) {
    auto* cmd = app.add_subcommand("cgroup", "(not implemented yet)");
    cmd->callback([&run] { run = [] { std::cerr << "xpart cgroup: not implemented\n"; return 2; }; });
}
}  // namespace xpart::cli
