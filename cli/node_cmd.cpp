// `xpart node check`: has the node changed since slurmd registered it? Discovers the node
// (NVML included, which the step check at launch cannot afford) and compares it with the node
// cache slurmd wrote at start (/run/xpart/node.json under the root). Exit 0 when they agree;
// 3 with one line per difference and the advice, as `xpart discover --check` exits on drift,
// so a Prolog that runs it fails and Slurm drains the node; 1 when either side cannot be read.
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "cli/discovery_args.hpp"
#include "cli/exit_status.hpp"
#include "libxpart/discovery.hpp"
#include "libxpart/gres/gres_check.hpp"
#include "libxpart/node_cache.hpp"
#include "libxpart/node_compare.hpp"

namespace xpart::cli {

namespace {

struct NodeCheckArgs {
    std::string vendor = "all";
    std::string nvml_library;
};

int run_node_check(const NodeCheckArgs& args, const GlobalOptions& global) {
    DiscoveryOptions options = discovery_options(global, args.vendor, args.nvml_library);
    options.rdma_nics = false;  // not part of what slurmd registers
    CacheMiss miss;
    auto registered = read_node_cache(options.root, &miss);
    if (!registered && miss == CacheMiss::OtherFormat)
        return fail("node check", registered.error().message, kExitError);
    if (!registered)
        return fail("node check", registered.error().message + " (is slurmd running with the xpart plugin?)",
                    kExitError);
    // A node that cannot be read now (NVML failing) has not shown it is unchanged.
    auto now = discover(options);
    if (!now) return fail("node check", now.error().message, kExitError);
    const auto differences = node_differences(*registered, *now);
    for (const auto& d : differences) std::cout << d << "\n";
    if (differences.empty()) return kExitOk;
    std::cout << "xpart node check: the node differs from what slurmd registered: "
              << kReregisterAdvice << "\n";
    return kExitDifferences;
}

}  // namespace

void add_node_command(CLI::App& app, const GlobalOptions& global, Runner& run) {
    auto args = std::make_shared<NodeCheckArgs>();
    auto* node = app.add_subcommand("node", "Compare the node with what slurmd registered");
    node->require_subcommand(1);
    auto* cmd = node->add_subcommand(
        "check", "exit 0 when the node's GPU partitions are still those slurmd registered, 3 "
                 "with one line per difference (for a Prolog: Slurm drains the node)");
    cmd->add_option("--vendor", args->vendor, "which GPUs to compare")
        ->check(CLI::IsMember({"nvidia", "amd", "all"}))
        ->capture_default_str();
    cmd->add_option("--nvml-library", args->nvml_library, "NVML library to load")
        ->envname("XPART_NVML_LIBRARY");
    cmd->callback([args, &global, &run] {
        run = [args, &global] { return run_node_check(*args, global); };
    });
}

}  // namespace xpart::cli
