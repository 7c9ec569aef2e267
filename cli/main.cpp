#include "xpart_config.h"

#include <iostream>

#include "cli/exit_status.hpp"
#include "cli/subcommands.hpp"

int main(int argc, char** argv) {
    CLI::App app{"xpart: GPU partitions (NVIDIA MIG, AMD XCP) as first-class Slurm resources"};
    app.set_version_flag("--version", "xpart " PACKAGE_VERSION);
    app.require_subcommand(1);
    xpart::cli::GlobalOptions global;
    app.add_option("--root", global.root,
                   "root prefix for every file read (a recorded or simulated node)")
        ->envname("XPART_ROOT");
    app.add_flag("--mig-monitor-capability", global.mig_monitor_capability,
                 "give MIG partitions the monitor capability too, as xpart.conf "
                 "MigMonitorCapability=yes does for the plugin");
    xpart::cli::Runner run;
    for (const auto& sub : xpart::cli::subcommands_for(argc, argv)) sub.add(app, global, run);
    CLI11_PARSE(app, argc, argv);
    try {
        return run ? run() : xpart::cli::kExitNothingToRun;
    } catch (const std::exception& e) {
        std::cerr << "xpart: " << e.what() << "\n";
        return xpart::cli::kExitError;
    }
}
