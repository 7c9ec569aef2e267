#include "launcher/launch_session.hpp"

#include "binding/locality.hpp"
#include "binding/node_source.hpp"
#include "cgroup/capability.hpp"
#include "libxpart/text.hpp"
#include "libxpart/visibility.hpp"
#include "mps/root/rank_mps_config.hpp"

namespace xpart::launcher {
namespace {

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
Result<mps::MpsConfig> mps_config(const LaunchOptions& o, const EnvMap& env, bool& managed) {
    auto key = job_key(env, o.job_id);
    if (!key)
        return Error{"--mps needs a job id: none of SLURM_JOB_ID, PMIX_NAMESPACE, "
                     "OMPI_MCA_ess_base_jobid is set; pass --job-id"};
    const std::string* slurm_job = env_get(env, "SLURM_JOB_ID");
    return mps::rank_mps_config(o.mps_job, slurm_job ? *slurm_job : std::string(), *key, managed);
}

}  // namespace

Result<LaunchSession> LaunchSession::begin(const LaunchOptions& o, const RootFs& root,
                                           const EnvMap& env) {
    // Device rules need CAP_SYS_ADMIN (cgroup/capability.hpp): a job's user has none, so say
    // so once, before anything starts, instead of failing every rank on its first rule.
    if (o.confine && !cgroup::may_set_device_rules())
        return Error{"--confine=rank needs CAP_SYS_ADMIN to set device rules; under Slurm use "
                     "'srun --xpart-confine' (the xpart SPANK plugin), elsewhere run the launcher as root"};
    LaunchSession s;
    auto rank = binding::detect_rank(env);
    if (!rank) return rank.error();
    s.rank_ = *rank;
    auto found = binding::resolve_node(o.node_json, root, env, o.mig_monitor_capability);
    if (!found) return found.error();
    s.node_ = std::move(found->node);

    binding::MapOptions map_options;
    map_options.bind = o.bind;
    map_options.explicit_map = o.explicit_map;
    auto topology = binding::load_locality(map_options, o.topology_xml, root.root());
    if (!topology) return topology.error();
    auto plan = binding::plan_node(s.node_, std::move(found->allotment), *topology ? &**topology : nullptr,
                          s.rank_.local_size, map_options);
    if (!plan) return plan.error();
    s.plan_ = std::move(*plan);
    const binding::RankAssignment& me = s.plan_.assignments[static_cast<std::size_t>(s.rank_.local_rank)];
    const binding::AllottedPartition& mine = s.plan_.allotment.partitions[me.slot];
    s.env_ = binding::narrow_env(env, s.node_, mine, o.confine);
    binding::apply_nic_env(s.env_, s.node_.gpus[mine.gpu], o.nic);
    // CPU numbers of an XML file or a foreign root say nothing about this machine.
    if (*topology && (*topology)->is_this_system() && !me.cpus.empty()) {
        auto pinned = binding::pin_within_allocation(0, me.cpus);
        if (!pinned) return pinned.error();
        if (*pinned)
            apply_changes(s.env_, placement_visibility({me.cpus, std::nullopt, std::nullopt}));
        else
            s.warnings_.push_back("--bind=closest: none of CPUs " + format_cpu_list(me.cpus) +
                                  " near the rank's partition is in its allocation; left as it was");
    }

    // The rank's cgroup exists with its rules before the program does; the program's process
    // enters it before exec, and end() removes it. One left by a launcher killed with SIGKILL
    // (named after its pid) goes with the next confined rank's sweep or the Epilog's
    // `xpart cgroup sweep --job`.
    if (o.confine) {
        auto cg = binding::RankCgroup::create(s.node_, s.node_.gpus[mine.gpu].partitions[mine.partition],
                                     static_cast<unsigned>(s.rank_.rank));
        if (!cg) return cg.error();
        s.cgroup_.emplace(std::move(*cg));
    }
    if (!o.mps) return s;

    // MPS: the daemons serve the instances any local rank uses; sharers split the threads.
    std::vector<binding::AllottedPartition> used;
    for (const auto& a : s.plan_.assignments) used.push_back(s.plan_.allotment.partitions[a.slot]);
    auto instances = mps::mps_instances(s.node_, used);
    if (!instances) return instances.error();
    auto my_instance = mps::mps_instance_of(s.node_, mine);
    if (!my_instance) return my_instance.error();
    bool managed = false;
    auto config = mps_config(o, env, managed);
    if (!config) return config.error();
    auto mps_env = mps::mps_rank_env(s.node_, *config, used, mine);
    if (!mps_env) return mps_env.error();
    auto session = mps::MpsSession::join(*config, managed, *instances);
    if (!session) return session.error();
    s.warnings_.insert(s.warnings_.end(), session->warnings().begin(), session->warnings().end());
    for (auto& [name, value] : *mps_env) s.env_[name] = value;
    s.mps_ = std::move(*config);
    s.mps_instance_ = std::move(*my_instance);
    s.mps_session_.emplace(std::move(*session));
    return s;
}

std::string LaunchSession::describe() const {
    const std::string* nic = env_get(env_, "XPART_NIC");
    return verbose_line(node_, rank_, plan_) + (nic ? " nic " + *nic : "");
}

process::BeforeExec LaunchSession::before_exec() {
    if (!cgroup_) return nullptr;
    return [this] { return cgroup_->enter(); };
}

process::HealthCheck LaunchSession::health() const {
    if (!mps_) return nullptr;
    const mps::MpsConfig cfg = *mps_;
    const mps::MpsInstance inst = *mps_instance_;
    return [cfg, inst]() -> std::optional<std::string> {
        if (mps::live_daemon(cfg, inst.name)) return std::nullopt;
        return "MPS control daemon for " + inst.uuid + " died; see " +
               mps::mps_log_dir(cfg, inst.name) + "/control.log";
    };
}

std::vector<std::string> LaunchSession::end() {
    std::vector<std::string> problems;
    if (mps_session_)
        if (auto s = mps_session_->leave(); !s) problems.push_back(s.error().message);
    if (cgroup_)
        if (auto s = cgroup_->remove(); !s) problems.push_back(s.error().message);
    return problems;
}

}  // namespace xpart::launcher
