// `xpart mps prepare|start|stop|status|cleanup`: a job's MPS daemons from a Slurm Prolog and
// Epilog, run as root. start reads the job's partitions from the Prolog environment
// (CUDA_VISIBLE_DEVICES with MIG UUIDs, or SLURM_JOB_GPUS) and starts one control daemon per
// GPU instance, as the job's user, in the job directory root keeps (mps/root/mps_job.hpp says
// what root touches and why a user cannot redirect it); ranks of `xpart launch --mps` join.
#include <pwd.h>
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "mps/root/mps_job.hpp"
#include "binding/node_source.hpp"
#include "libxpart/text.hpp"

extern char** environ;

namespace xpart::cli {
namespace {


struct MpsOptions {
    std::string job_id;
    mps::MpsJobOptions job;  // all but the timeout, which the command line takes in seconds
    long uid = -1;
    long gid = -1;
    double timeout = mps::mps_timeout_seconds(mps::kDefaultMpsTimeout);
    std::string node_json;
};

mps::MpsJobOptions job_options(const MpsOptions& o) {
    mps::MpsJobOptions j = o.job;
    j.timeout = mps::mps_timeout_from_seconds(o.timeout);
    return j;
}

// The job's user from Slurm's variables; the group defaults to the user's primary one.
std::optional<process::Credentials> job_user(const MpsOptions& o) {
    if (o.uid < 0) return std::nullopt;
    process::Credentials c{static_cast<uid_t>(o.uid), static_cast<gid_t>(o.gid)};
    if (o.gid < 0) {
        const passwd* pw = getpwuid(c.uid);
        c.gid = pw ? pw->pw_gid : static_cast<gid_t>(o.uid);
    }
    return c;
}

// What every subcommand that acts for one job needs.
bool check_job(const MpsOptions& o, const std::string& what, int& rc) {
    if (o.job_id.empty()) {
        rc = fail("mps " + what, "--job-id (or SLURM_JOB_ID) is required");
        return false;
    }
    if (auto s = mps::check_job_id(o.job_id); !s) {
        rc = fail("mps " + what, s.error().message);
        return false;
    }
    return true;
}

int run_prepare(const MpsOptions& o) {
    int rc = 0;
    if (!check_job(o, "prepare", rc)) return rc;
    auto user = job_user(o);
    if (!user) return fail("mps prepare", "--uid (or SLURM_JOB_UID) is required");
    auto job = mps::prepare_job(job_options(o), o.job_id, *user);
    return job ? 0 : fail("mps prepare", job.error().message);
}

int run_start(const MpsOptions& o, const GlobalOptions& global) {
    int rc = 0;
    if (!check_job(o, "start", rc)) return rc;
    auto user = job_user(o);
    if (!user) return fail("mps start", "--uid (or SLURM_JOB_UID) is required");
    EnvMap env = env_from_environ(environ);
    auto found = binding::resolve_node(o.node_json, RootFs(global.root.empty() ? "/" : global.root), env);
    if (!found) return fail("mps start", found.error().message);
    auto instances = mps::mps_instances(found->node, found->allotment.partitions);
    if (!instances) return fail("mps start", instances.error().message);
    auto report = mps::start_job_daemons(job_options(o), o.job_id, *user, *instances);
    if (!report) return fail("mps start", report.error().message);
    for (const auto& w : report->warnings) std::cerr << "xpart mps start: warning: " << w << "\n";
    return 0;
}

int run_stop(const MpsOptions& o) {
    int rc = 0;
    if (!check_job(o, "stop", rc)) return rc;
    auto report = mps::stop_job_daemons(job_options(o), o.job_id);
    // What the user may have caused: one line, logged. What root ended and could not: one line;
    // a failure is the exit status (the Epilog fails, and Slurm drains the node).
    std::string notes;
    for (const auto& n : report.notes) notes += (notes.empty() ? "" : "; ") + n;
    if (!notes.empty()) std::cerr << "xpart mps stop: job " << o.job_id << ": " << notes << "\n";
    if (!report.survivors.empty()) return fail("mps stop", "job " + o.job_id + ": " + mps::describe_stop(report));
    if (!report.ended.empty()) std::cerr << "xpart mps stop: job " << o.job_id << ": " << mps::describe_stop(report) << "\n";
    return 0;
}

int run_status(const MpsOptions& o) {
    int rc = 0;
    if (!check_job(o, "status", rc)) return rc;
    auto job = mps::JobDir::open(o.job.run_dir, o.job_id);
    if (!job) return fail("mps status", job.error().message);
    if (!*job || !(*job)->has_file(mps::kMpsRecords)) {
        std::cout << "job " << o.job_id << ": no MPS daemons\n";
        return 1;
    }
    auto states = mps::daemon_states(mps::managed_mps_config(**job, job_options(o)), /*probe=*/true);
    if (!states) return fail("mps status", states.error().message);
    for (const auto& s : *states) {
        std::string servers = trim(s.servers);
        for (auto& ch : servers)
            if (ch == '\n') ch = ',';
        std::cout << (*job)->path() << " " << s.record.instance << " " << s.record.uuid << " pid "
                  << s.record.process.pid << " "
                  << (!s.alive ? "dead" : s.answers ? "running" : "not-answering") << " servers "
                  << (servers.empty() ? "-" : servers) << "\n";
        if (!s.answers) rc = 1;
    }
    if (states->empty()) {
        std::cout << "job " << o.job_id << ": no MPS daemons\n";
        return 1;
    }
    return rc;
}

int run_cleanup(const MpsOptions& o) {
    for (const auto& dir : mps::cleanup_ended_jobs(job_options(o))) std::cout << "removed " << dir << "\n";
    return 0;
}

}  // namespace

void add_mps_command(CLI::App& app, const GlobalOptions& global, Runner& run) {
    auto o = std::make_shared<MpsOptions>();
    auto* cmd = app.add_subcommand("mps", "CUDA MPS daemons of a job, one per GPU instance (Prolog/Epilog)");
    cmd->require_subcommand(1);
    auto common = [o](CLI::App* sub) {
        sub->add_option("--job-id", o->job_id, "the Slurm job")->envname("SLURM_JOB_ID");
        sub->add_option("--run-dir", o->job.run_dir, "where root keeps the per-job directories")
            ->envname("XPART_RUN_DIR")
            ->capture_default_str();
        sub->add_option("--mps-control", o->job.control, "the nvidia-cuda-mps-control program")
            ->envname("XPART_MPS_CONTROL")
            ->capture_default_str();
        sub->add_option("--timeout", o->timeout, "seconds to wait for each daemon")
            ->check(CLI::Range(mps::kMinMpsTimeoutSeconds, mps::kMaxMpsTimeoutSeconds));
        sub->add_option("--job-dir-size", o->job.job_dir_mib,
                        "MiB of the job's own directory (a tmpfs), the most a job's user can fill")
            ->envname("XPART_JOB_DIR_SIZE")
            ->check(CLI::Range(1u, 65536u))
            ->capture_default_str();
    };
    auto user = [o](CLI::App* sub) {
        sub->add_option("--uid", o->uid, "the job's user")->envname("SLURM_JOB_UID");
        sub->add_option("--gid", o->gid, "the job's group (default: the user's)")->envname("SLURM_JOB_GID");
    };
    auto* prepare = cmd->add_subcommand("prepare", "make the job's private directory only (Prolog, every GPU job)");
    common(prepare);
    user(prepare);
    prepare->callback([o, &run] { run = [o] { return run_prepare(*o); }; });
    auto* start = cmd->add_subcommand("start", "start the job's daemons as its user (Prolog)");
    common(start);
    user(start);
    start->add_option("--node-json", o->node_json, "node model file instead of the node cache or discovery")
        ->envname("XPART_NODE_JSON");
    start->callback([o, &global, &run] { run = [o, &global] { return run_start(*o, global); }; });
    auto* stop = cmd->add_subcommand(
        "stop", "end the job's daemons and remove its directory (Epilog); exit 1 only if something root started survives SIGKILL");
    common(stop);
    stop->callback([o, &run] { run = [o] { return run_stop(*o); }; });
    auto* status = cmd->add_subcommand("status", "one line per daemon of the job; exit 1 unless all answer");
    common(status);
    status->callback([o, &run] { run = [o] { return run_status(*o); }; });
    auto* cleanup = cmd->add_subcommand(
        "cleanup", "finish job directories whose Epilog began but did not end");
    common(cleanup);
    cleanup->callback([o, &run] { run = [o] { return run_cleanup(*o); }; });
}

}  // namespace xpart::cli
