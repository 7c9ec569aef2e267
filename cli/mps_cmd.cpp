// `xpart mps start|stop|status|cleanup`: the job's MPS daemons from a Slurm Prolog/Epilog.
// start reads the job's partitions from the Prolog environment (CUDA_VISIBLE_DEVICES with MIG
// UUIDs, or SLURM_JOB_GPUS), starts one control daemon per GPU instance as root, and pre-starts
// each server for the job's user (start_server -uid); ranks of `xpart launch --mps` then join.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "launcher/mps.hpp"
#include "launcher/node_source.hpp"
#include "libxpart/text.hpp"

extern char** environ;

namespace xpart::cli {
namespace {

using namespace xpart::launch;
namespace fs = std::filesystem;

struct MpsOptions {
    std::string job_id;
    std::string base = "/run/xpart-mps";
    std::string control = "nvidia-cuda-mps-control";
    long uid = -1;
    long gid = -1;
    double timeout = 10;
    std::string node_json;
};

int fail(const std::string& what, const std::string& message) {
    std::cerr << "xpart mps " << what << ": " << message << "\n";
    return 1;
}

MpsConfig config_for(const MpsOptions& o, const std::string& job_dir) {
    MpsConfig c;
    c.control = o.control;
    c.job_dir = job_dir;
    c.uid = o.uid >= 0 ? static_cast<uid_t>(o.uid) : getuid();
    c.gid = static_cast<gid_t>(o.gid);
    if (o.gid < 0) {
        const passwd* pw = getpwuid(c.uid);
        c.gid = pw ? pw->pw_gid : getgid();
    }
    c.timeout = std::chrono::milliseconds(static_cast<long>(o.timeout * 1000));
    return c;
}

// The Prolog's directory of the job and any a rank made for one of its steps.
std::vector<std::string> job_dirs(const MpsOptions& o) {
    std::vector<std::string> bases{o.base};
    if (o.uid >= 0) bases.push_back(user_runtime_base(static_cast<uid_t>(o.uid)));
    std::vector<std::string> dirs;
    const std::string exact = "job-" + o.job_id, step_prefix = exact + ".";
    for (const auto& base : bases) {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(base, ec)) {
            std::string n = e.path().filename();
            if ((n == exact || n.rfind(step_prefix, 0) == 0) && !e.is_symlink(ec) &&
                e.is_directory(ec))
                dirs.push_back(e.path());
        }
    }
    return dirs;
}

int run_start(const MpsOptions& o, const GlobalOptions& global) {
    if (o.job_id.empty()) return fail("start", "--job-id (or SLURM_JOB_ID) is required");
    if (o.uid < 0) return fail("start", "--uid (or SLURM_JOB_UID) is required");
    EnvMap env = env_from_environ(environ);
    auto found = resolve_node(o.node_json, RootFs(global.root.empty() ? "/" : global.root), env);
    if (!found) return fail("start", found.error().message);
    auto instances = mps_instances(found->node, found->allotment.partitions);
    if (!instances) return fail("start", instances.error().message);

    // The base is root's and world-searchable; each job directory is its user's, 0700.
    if (mkdir(o.base.c_str(), 0755) != 0 && errno != EEXIST)
        return fail("start", o.base + ": mkdir: " + std::strerror(errno));
    MpsConfig c = config_for(o, o.base + "/job-" + o.job_id);
    if (auto s = make_private_dir(c.job_dir, c.uid, c.gid); !s) return fail("start", s.error().message);
    std::ofstream(c.job_dir + "/managed") << "xpart mps start\n";
    if (auto s = start_daemons(c, *instances); !s) {
        (void)stop_job(c);  // nothing half-started stays behind
        return fail("start", s.error().message);
    }
    return 0;
}

int run_stop(const MpsOptions& o) {
    if (o.job_id.empty()) return fail("stop", "--job-id (or SLURM_JOB_ID) is required");
    int rc = 0;
    for (const auto& dir : job_dirs(o))
        if (auto s = stop_job(config_for(o, dir)); !s) rc = fail("stop", s.error().message);
    return rc;
}

int run_status(const MpsOptions& o) {
    if (o.job_id.empty()) return fail("status", "--job-id (or SLURM_JOB_ID) is required");
    int rc = 0, count = 0;
    for (const auto& dir : job_dirs(o)) {
        for (const auto& s : daemon_states(config_for(o, dir), /*probe=*/true)) {
            ++count;
            std::string servers = trim(s.servers);
            for (auto& ch : servers)
                if (ch == '\n') ch = ',';
            std::cout << dir << " " << s.instance << " " << s.uuid << " pid "
                      << (s.pid > 0 ? std::to_string(s.pid) : std::string("-")) << " "
                      << (!s.alive ? "dead" : s.answers ? "running" : "not-answering")
                      << " servers " << (servers.empty() ? "-" : servers) << "\n";
            if (!s.answers) rc = 1;
        }
    }
    if (count == 0) {
        std::cout << "job " << o.job_id << ": no MPS daemons\n";
        return 1;
    }
    return rc;
}

int run_cleanup(const MpsOptions& o) {
    std::vector<std::string> bases{o.base};
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/tmp", ec)) {
        std::string n = e.path().filename();
        if (n.rfind("xpart-mps-", 0) == 0 && !e.is_symlink(ec)) bases.push_back(e.path());
    }
    for (const auto& base : bases)
        for (const auto& dir : cleanup_stale(base, o.control)) std::cout << "removed " << dir << "\n";
    return 0;
}

}  // namespace

void add_mps_command(CLI::App& app, const GlobalOptions& global, Runner& run) {
    auto o = std::make_shared<MpsOptions>();
    auto* cmd = app.add_subcommand("mps", "CUDA MPS daemons of a job, one per GPU instance (Prolog/Epilog)");
    cmd->require_subcommand(1);
    auto common = [o](CLI::App* sub) {
        sub->add_option("--job-id", o->job_id, "the Slurm job")->envname("SLURM_JOB_ID");
        sub->add_option("--mps-dir", o->base, "base of the per-job directories")
            ->envname("XPART_MPS_DIR")
            ->capture_default_str();
        sub->add_option("--mps-control", o->control, "the nvidia-cuda-mps-control program")
            ->envname("XPART_MPS_CONTROL")
            ->capture_default_str();
        sub->add_option("--uid", o->uid, "the job's user")->envname("SLURM_JOB_UID");
        sub->add_option("--timeout", o->timeout, "seconds to wait for each daemon")
            ->check(CLI::Range(0.01, 3600.0));
    };
    auto* start = cmd->add_subcommand("start", "start the job's daemons (Prolog)");
    common(start);
    start->add_option("--gid", o->gid, "group of the directories (default: the user's)")
        ->envname("SLURM_JOB_GID");
    start->add_option("--node-json", o->node_json, "node model file instead of the node cache or discovery")
        ->envname("XPART_NODE_JSON");
    start->callback([o, &global, &run] { run = [o, &global] { return run_start(*o, global); }; });
    auto* stop = cmd->add_subcommand("stop", "quit the job's daemons and remove their directories (Epilog)");
    common(stop);
    stop->callback([o, &run] { run = [o] { return run_stop(*o); }; });
    auto* status = cmd->add_subcommand("status", "one line per daemon of the job; exit 1 unless all answer");
    common(status);
    status->callback([o, &run] { run = [o] { return run_status(*o); }; });
    auto* cleanup = cmd->add_subcommand(
        "cleanup", "remove job directories whose daemons and ranks are all gone (after a crash)");
    common(cleanup);
    cleanup->callback([o, &run] { run = [o] { return run_cleanup(*o); }; });
}

}  // namespace xpart::cli
