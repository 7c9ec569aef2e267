// Which NodeName a slurmd runs as: the gres.conf records that apply to it depend on it, and
// Slurm tells a gres plugin no node name (node_config_load_t has none).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace xpart {

// The value of slurmd's -N in `argv` (argv[0] first), read by getopt_long's rules for
// slurmd's own options ("-N n", "-Nn", "-DN n"; the values of options that take one are
// skipped; "--" ends the options), or nullopt.
std::optional<std::string> slurmd_node_name_arg(const std::vector<std::string>& argv);

// This process's arguments from /proc/self/cmdline: the process's own, not the node's, so
// read as is rather than through the root prefix. Empty when unreadable.
std::vector<std::string> own_arguments();
// The same of process `pid` ("self", or a number: the RebootProgram's slurmd).
std::vector<std::string> process_arguments(const std::string& pid);

// The host name up to its first dot, as slurmd names a node by default; "" when unreadable.
std::string short_hostname();

}  // namespace xpart
