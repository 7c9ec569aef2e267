// The `xpart` command: each subcommand lives in its own file and registers itself here.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace xpart::cli {

struct GlobalOptions {
    std::string root;  // --root / XPART_ROOT: prefix for every path read
    // --mig-monitor-capability: discover as the plugin does with xpart.conf
    // MigMonitorCapability=yes (MIG partitions also get the monitor cap).
    bool mig_monitor_capability = false;
};

// A subcommand's callback stores what to run; main runs it and exits with its status.
using Runner = std::function<int()>;

// Prints "xpart <subcommand>: <message>" on stderr and returns `status`: each subcommand's
// error line, spelled once.
int fail(const std::string& subcommand, const std::string& message, int status = 1);

void add_discover_command(CLI::App& app, const GlobalOptions& global, Runner& run);
void add_cgroup_command(CLI::App& app, const GlobalOptions& global, Runner& run);
void add_launch_command(CLI::App& app, const GlobalOptions& global, Runner& run);
void add_mps_command(CLI::App& app, const GlobalOptions& global, Runner& run);
void add_node_command(CLI::App& app, const GlobalOptions& global, Runner& run);
void add_geometry_command(CLI::App& app, const GlobalOptions& global, Runner& run);
void add_reshape_command(CLI::App& app, const GlobalOptions& global, Runner& run);
void add_reshape_request_command(CLI::App& app, const GlobalOptions& global, Runner& run);

}  // namespace xpart::cli
