// The table of `xpart` subcommands, and which of them one command line needs. Building every
// subcommand's options costs more than a launch itself does (CLI11 makes each option up front),
// and `xpart launch` runs once per rank: a command line naming a subcommand builds only that one.
#pragma once

#include <string_view>
#include <vector>

#include "cli/command.hpp"

namespace xpart::cli {

struct Subcommand {
    std::string_view name;
    void (*add)(CLI::App& app, const GlobalOptions& global, Runner& run);
};

const std::vector<Subcommand>& all_subcommands();

// The subcommands to register for argv: the named one when the first word that is not a
// global option names one, else all of them (help, version, a misspelt name: CLI11 then
// answers as it would with the whole tree).
std::vector<Subcommand> subcommands_for(int argc, const char* const* argv);

}  // namespace xpart::cli
