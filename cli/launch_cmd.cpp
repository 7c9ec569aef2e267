// `xpart launch [options] -- program args`: one partition per rank, hwloc locality, optional
// MPS. Everything is decided from the environment, so it works under srun, mpirun or by hand.
#include <unistd.h>

#include <iostream>
#include <memory>
#include <optional>

#include "cgroup/capability.hpp"
#include "cli/command.hpp"
#include "mps/mps_session.hpp"
#include "binding/nic_env.hpp"
#include "binding/node_source.hpp"
#include "binding/rank_cgroup.hpp"
#include "binding/rank_plan.hpp"
#include "process/supervise.hpp"
#include "libxpart/text.hpp"

extern char** environ;

namespace xpart::cli {
namespace {

using namespace xpart::launch;

struct LaunchOptions {
    std::string bind = "none";
    std::string confine = "none";
    std::string map;
    std::string nic = "none";
    bool verbose = false;
    bool mps = false;
    std::string mps_control = "nvidia-cuda-mps-control";
    std::string run_dir = "/run/xpart";  // root's per-job directories (Prolog hook)
    double mps_timeout = 10;
    std::string job_id;
    std::string node_json;
    std::string topology_xml;
    std::vector<std::string> command;
};

const char* kWho = "xpart launch";

int fail(const std::string& message, int status = 1) {
    std::cerr << kWho << ": " << message << "\n";
    return status;
}

// The job (and step) the MPS directory belongs to.
std::optional<std::string> job_key(const EnvMap& env, const std::string& given) {
    if (!given.empty()) return given;
    if (auto* j = env_get(env, "SLURM_JOB_ID")) {
        auto* s = env_get(env, "SLURM_STEP_ID");
        return *j + "." + (s ? *s : std::string("0"));
    }
    for (const char* v : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"})
        if (auto* ns = env_get(env, v)) return *ns;
    return std::nullopt;
}

// The job's MPS directory: root's daemons when the Prolog started them, else the step's own.
Result<MpsConfig> mps_config(const LaunchOptions& o, const EnvMap& env, bool& managed) {
    MpsJobOptions j;
    j.run_dir = o.run_dir;
    j.control = o.mps_control;
    j.timeout = std::chrono::milliseconds(static_cast<long>(o.mps_timeout * 1000));
    auto key = job_key(env, o.job_id);
    if (!key)
        return Error{"--mps needs a job id: none of SLURM_JOB_ID, PMIX_NAMESPACE, "
                     "OMPI_MCA_ess_base_jobid is set; pass --job-id"};
    const std::string* slurm_job = env_get(env, "SLURM_JOB_ID");
    return rank_mps_config(j, slurm_job ? *slurm_job : std::string(), *key, managed);
}

int run_launch(const LaunchOptions& o, const GlobalOptions& global) {
    if (o.command.empty()) return fail("no program given (put it after --)", 2);
    // Device rules need CAP_SYS_ADMIN (cgroup/capability.hpp): a job's user has none, so say
    // so once, before anything starts, instead of failing every rank on its first rule.
    if (o.confine == "rank" && !cgroup::may_set_device_rules())
        return fail("--confine=rank needs CAP_SYS_ADMIN to set device rules; under Slurm use "
                    "'srun --xpart-confine' (the xpart SPANK plugin), elsewhere run the launcher as root");
    EnvMap env = env_from_environ(environ);
    auto rank = detect_rank(env);
    if (!rank) return fail(rank.error().message);
    RootFs root(global.root.empty() ? "/" : global.root);
    auto found = resolve_node(o.node_json, root, env, global.mig_monitor_capability);
    if (!found) return fail(found.error().message);
    const Node& node = found->node;

    MapOptions map_options;
    map_options.bind = o.bind == "closest" ? BindPolicy::Closest : BindPolicy::None;
    if (!o.map.empty()) {
        auto map = parse_rank_map(o.map);
        if (!map) return fail(map.error().message, 2);
        map_options.explicit_map = *map;
    }
    std::optional<Topology> topology;
    if (map_options.bind == BindPolicy::Closest) {
        auto t = Topology::load(o.topology_xml, root.root());
        if (!t) return fail(t.error().message);
        topology.emplace(std::move(*t));
        map_options.allowed_cpus = topology->allowed_cpus();
    }
    auto plan = plan_node(node, std::move(found->allotment), topology ? &*topology : nullptr,
                          rank->local_size, map_options);
    if (!plan) return fail(plan.error().message);
    const RankAssignment& me = plan->assignments[static_cast<std::size_t>(rank->local_rank)];
    const AllottedPartition& mine = plan->allotment.partitions[me.slot];
    const bool confine = o.confine == "rank";
    EnvMap rank_env = narrow_env(env, node, mine, confine);
    // Checked by CLI11 (IsMember below): parsing cannot fail here.
    apply_nic_env(rank_env, node.gpus[mine.gpu], parse_nic_bind(o.nic).value());

    if (topology && topology->is_this_system() && !me.cpus.empty()) {
        if (auto s = topology->bind_process(me.cpus); !s) return fail(s.error().message);
        rank_env["XPART_CPUS"] = format_cpu_list(me.cpus);
    }
    if (o.verbose) {
        const std::string* nic = env_get(rank_env, "XPART_NIC");
        std::cerr << verbose_line(node, *rank, *plan) << (nic ? " nic " + *nic : "") << "\n";
    }
    const std::string who = std::string(kWho) + ": rank " + std::to_string(rank->rank);

    // The rank's cgroup exists with its rules before the program does; the forked child
    // enters it before exec, and this process removes it when the program ends. One left by a
    // launcher killed with SIGKILL (named after its pid) goes with the next confined rank's
    // sweep or the Epilog's `xpart cgroup sweep --job`.
    std::optional<RankCgroup> rank_cgroup;
    BeforeExec enter_cgroup;
    if (confine) {
        const Partition& p = node.gpus[mine.gpu].partitions[mine.partition];
        auto cg = RankCgroup::create(node, p, "xpart_rank" + std::to_string(rank->rank) + "_" +
                                                    std::to_string(getpid()));
        if (!cg) return fail(cg.error().message);
        rank_cgroup.emplace(std::move(*cg));
        if (o.verbose)
            std::cerr << "xpart: rank " << rank->rank << " confined to cgroup " << rank_cgroup->path() << "\n";
        enter_cgroup = [&rank_cgroup] { return rank_cgroup->enter(); };
    }
    auto end_rank = [&](int rc) {
        if (rank_cgroup)
            if (auto s = rank_cgroup->remove(); !s) {
                fail(s.error().message);
                if (rc == 0) rc = 1;
            }
        return rc;
    };
    if (!o.mps) {
        if (confine) return end_rank(run_supervised(o.command, rank_env, nullptr, who, enter_cgroup));
        std::string error;
        int rc = exec_program(o.command, rank_env, error);
        return fail(error, rc);
    }

    // MPS: the daemons serve the instances any local rank uses; sharers split the threads.
    std::vector<AllottedPartition> used;
    for (const auto& a : plan->assignments) used.push_back(plan->allotment.partitions[a.slot]);
    auto instances = mps_instances(node, used);
    if (!instances) return fail(instances.error().message);
    auto my_instance = mps_instance_of(node, mine);
    if (!my_instance) return fail(my_instance.error().message);
    int sharers = 0;
    for (const auto& u : used) {
        auto inst = mps_instance_of(node, u);
        sharers += inst && inst->name == my_instance->name;
    }
    bool managed = false;
    auto config = mps_config(o, env, managed);
    if (!config) return fail(config.error().message);
    auto session = MpsSession::join(*config, managed, *instances);
    if (!session) return fail(session.error().message);
    for (const auto& w : session->warnings()) std::cerr << kWho << ": warning: " << w << "\n";
    rank_env["CUDA_MPS_PIPE_DIRECTORY"] = mps_pipe_dir(*config, my_instance->name);
    rank_env["CUDA_MPS_LOG_DIRECTORY"] = mps_log_dir(*config, my_instance->name);
    if (sharers > 1) rank_env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = std::to_string(100 / sharers);

    const MpsConfig cfg = *config;
    const MpsInstance inst = *my_instance;
    HealthCheck daemon_alive = [cfg, inst]() -> std::optional<std::string> {
        if (live_daemon(cfg, inst.name)) return std::nullopt;
        return "MPS control daemon for " + inst.uuid + " died; see " +
               mps_log_dir(cfg, inst.name) + "/control.log";
    };
    int rc = run_supervised(o.command, rank_env, daemon_alive, who, enter_cgroup);
    if (auto s = session->leave(); !s) {
        fail(s.error().message);
        if (rc == 0) rc = 1;
    }
    return end_rank(rc);
}

}  // namespace

void add_launch_command(CLI::App& app, const GlobalOptions& global, Runner& run) {
    auto o = std::make_shared<LaunchOptions>();
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
    cmd->add_flag("--mps", o->mps, "one CUDA MPS control daemon per GPU instance used on this node");
    cmd->add_option("--mps-control", o->mps_control, "the nvidia-cuda-mps-control program")
        ->envname("XPART_MPS_CONTROL");
    cmd->add_option("--run-dir", o->run_dir,
                    "where root's Prolog keeps the per-job directories (the MPS daemons go to "
                    "the job's; /tmp/xpart-mps-<uid> on nodes without the Prolog hook)")
        ->envname("XPART_RUN_DIR")
        ->capture_default_str();
    cmd->add_option("--mps-timeout", o->mps_timeout, "seconds to wait for MPS daemons")
        ->check(CLI::Range(0.01, 3600.0));
    cmd->add_option("--job-id", o->job_id, "job key for the MPS directory (default from Slurm/PMIx)");
    cmd->add_option("--node-json", o->node_json,
                    "node model from this file (xpart discover --json) instead of the gres "
                    "plugin's node cache or discovery")
        ->envname("XPART_NODE_JSON");
    cmd->add_option("--topology", o->topology_xml,
                    "hwloc XML topology instead of this machine's (or --root's)")
        ->envname("XPART_HWLOC_XML");
    cmd->add_option("command", o->command, "program and arguments")->required();
    cmd->positionals_at_end();
    cmd->callback([o, &global, &run] { run = [o, &global] { return run_launch(*o, global); }; });
}

}  // namespace xpart::cli
