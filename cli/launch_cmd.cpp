// `xpart launch [options] -- program args`: one partition per rank, hwloc locality, optional
// MPS. Everything is decided from the environment, so it works under srun, mpirun or by hand.
#include <iostream>
#include <memory>
#include <optional>

#include "cli/command.hpp"
#include "launcher/launch_session.hpp"

extern char** environ;

namespace xpart::cli {
namespace {

using namespace xpart::launcher;

// The command line; LaunchOptions (launcher/launch_session.hpp) is what it means.
struct LaunchArgs {
    std::string bind = "none";
    std::string confine = "none";
    std::string map;
    std::string nic = "none";
    bool verbose = false;
    double mps_timeout = mps::mps_timeout_seconds(mps::kDefaultMpsTimeout);
    LaunchOptions launch;
    std::vector<std::string> command;
};

const char* kWho = "xpart launch";

int fail(const std::string& message, int status = 1) { return cli::fail("launch", message, status); }

int run_launch(LaunchArgs a, const GlobalOptions& global) {
    if (a.command.empty()) return fail("no program given (put it after --)", 2);
    LaunchOptions& o = a.launch;
    o.bind = a.bind == "closest" ? binding::BindPolicy::Closest : binding::BindPolicy::None;
    o.confine = a.confine == "rank";
    // Checked by CLI11 (IsMember below): parsing cannot fail here.
    o.nic = binding::parse_nic_bind(a.nic).value();
    o.mps_job.timeout = mps::mps_timeout_from_seconds(a.mps_timeout);
    o.mig_monitor_capability = global.mig_monitor_capability;
    if (!a.map.empty()) {
        auto map = binding::parse_rank_map(a.map);
        if (!map) return fail(map.error().message, 2);
        o.explicit_map = *map;
    }
    RootFs root(global.root.empty() ? "/" : global.root);
    auto session = LaunchSession::begin(o, root, env_from_environ(environ));
    if (!session) return fail(session.error().message);
    for (const auto& w : session->warnings()) std::cerr << kWho << ": warning: " << w << "\n";
    if (a.verbose) {
        std::cerr << session->describe() << "\n";
        if (session->cgroup())
            std::cerr << "xpart: rank " << session->rank().rank << " confined to cgroup "
                      << session->cgroup()->path() << "\n";
    }
    if (!session->supervised()) {
        const process::ExecFailure failed = process::exec_program(a.command, session->env());
        return fail(failed.message, failed.exit_status);
    }
    const std::string who = std::string(kWho) + ": rank " + std::to_string(session->rank().rank);
    int rc = process::run_supervised(a.command, session->env(), session->health(), who, session->before_exec());
    for (const auto& problem : session->end()) {
        fail(problem);
        if (rc == 0) rc = 1;
    }
    return rc;
}

}  // namespace

void add_launch_command(CLI::App& app, const GlobalOptions& global, Runner& run) {
    auto o = std::make_shared<LaunchArgs>();
    auto* cmd = app.add_subcommand(
        "launch", "run a program on this rank's own GPU partition: xpart launch [options] -- prog args");
    cmd->add_option("--bind", o->bind,
                    "none: partitions in environment order; closest: group by NUMA node and "
                    "pin each rank's CPUs near its partition (hwloc)")
        ->check(CLI::IsMember({"none", "closest"}));
    cmd->add_option("--confine", o->confine,
                    "none: ranks share what the step may open; rank: each rank in its own child "
                    "cgroup that can open only its own partition's device files (needs CAP_SYS_ADMIN: "
                    "under Slurm use srun --xpart-confine)")
        ->check(CLI::IsMember({"none", "rank"}));
    cmd->add_option("--nic", o->nic,
                    "closest: the rank's GPU's nearest RDMA NIC in NCCL_IB_HCA and UCX_NET_DEVICES "
                    "where unset; closest-override: over what is set")
        ->check(CLI::IsMember({"none", "closest", "closest-override"}))
        ->capture_default_str();
    cmd->add_option("--map", o->map,
                    "explicit map: comma list, entry i = partition (environment order) of local rank i");
    cmd->add_flag("--verbose,-v", o->verbose,
                  "print one line per rank: rank, partition, UUID, GPU, NUMA node, CPUs");
    cmd->add_flag("--mps", o->launch.mps, "one CUDA MPS control daemon per GPU instance used on this node");
    cmd->add_option("--mps-control", o->launch.mps_job.control, "the nvidia-cuda-mps-control program")
        ->envname("XPART_MPS_CONTROL");
    cmd->add_option("--run-dir", o->launch.mps_job.run_dir,
                    "where root's Prolog keeps the per-job directories (the MPS daemons go to "
                    "the job's; /tmp/xpart-mps-<uid> on nodes without the Prolog hook)")
        ->envname("XPART_RUN_DIR")
        ->capture_default_str();
    cmd->add_option("--mps-timeout", o->mps_timeout, "seconds to wait for MPS daemons")
        ->check(CLI::Range(mps::kMinMpsTimeoutSeconds, mps::kMaxMpsTimeoutSeconds));
    cmd->add_option("--job-id", o->launch.job_id, "job key for the MPS directory (default from Slurm/PMIx)");
    cmd->add_option("--node-json", o->launch.node_json,
                    "node model from this file (xpart discover --json) instead of the gres "
                    "plugin's node cache or discovery")
        ->envname("XPART_NODE_JSON");
    cmd->add_option("--topology", o->launch.topology_xml,
                    "hwloc XML topology instead of this machine's (or --root's)")
        ->envname("XPART_HWLOC_XML");
    cmd->add_option("command", o->command, "program and arguments")->required();
    cmd->positionals_at_end();
    cmd->callback([o, &global, &run] { run = [o, &global] { return run_launch(*o, global); }; });
}

}  // namespace xpart::cli
