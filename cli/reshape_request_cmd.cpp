// `xpart reshape-request`: the reshape flow's hooks (etc/reshape) hand their decisions here
// (reshape_request/requests): the ResumeProgram's request or queue, the PrologSlurmctld's wait
// for a resumed sibling, the EpilogSlurmctld's withdrawal of a request no job needs, the
// RebootProgram's which request it serves and whether a job still waits for it. It talks to slurmctld through scontrol and squeue, as the hook's user.
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/reshape_reboot.hpp"
#include "libxpart/defaults.hpp"
#include "reshape_request/requests.hpp"

extern char** environ;

namespace xpart::cli {

namespace {

struct RequestArgs {
    std::string job;
    std::string nodes;
    unsigned timeout = 600;
    std::string turn_dir = defaults::kReshapeTurnDirPrefix + std::to_string(geteuid());
    std::string target;
    std::string own;                      // reboot-target --node
    std::vector<std::string> host_names;  // reboot-target --host
};

// One line of a hook's report, flushed: the watcher's come one by one over minutes, and the
// hook logs each as it reads it.
void say(const std::string& line) { std::cout << "xpart reshape-request: " << line << std::endl; }

int print(const std::string& what, const Result<reshape_request::Outcome>& outcome) {
    if (!outcome) return fail("reshape-request " + what, outcome.error().message);
    for (const auto& line : outcome->lines) say(line);
    return outcome->all_made ? kExitOk : kExitError;
}

std::unique_ptr<reshape_request::SlurmClient> slurm_client() {
    return reshape_request::command_client(env_from_environ(environ));
}

int run_resume(const RequestArgs& args) {
    return print("resume", reshape_request::resume(*slurm_client(), args.nodes));
}

int run_withdraw(const RequestArgs& args) {
    auto lines = reshape_request::withdraw_unwanted(*slurm_client(), args.job, args.nodes);
    if (!lines) return fail("reshape-request withdraw", lines.error().message);
    return print("withdraw", reshape_request::Outcome{*lines});
}

int run_wait(const RequestArgs& args) {
    // Without a turn each job polls alone: slower for slurmctld, never wrong.
    auto turn = reshape_request::shared_turn(args.turn_dir, args.nodes);
    if (!turn) say(turn.error().message + ": job " + args.job + " polls alone");
    return print("wait", reshape_request::prolog_wait(*slurm_client(), args.job, args.nodes,
                                                      std::chrono::seconds(args.timeout), reshape_request::real_pacing(),
                                                      turn ? turn->get() : nullptr));
}

int run_watch(const RequestArgs& args) {
    auto slurm = slurm_client();
    auto node = slurm->nodes(args.target);
    if (!node || node->empty())
        return fail("reshape-request watch", node ? args.target + ": no such node" : node.error().message);
    // One watcher per host: the others (several siblings resumed at once) end at once.
    auto turn = reshape_request::shared_turn(args.turn_dir, "watch-" + node->front().group);
    if (!turn) say(turn.error().message + ": watching " + args.target + " anyway");
    auto watched = reshape_request::watch_host(*slurm, args.target, std::chrono::seconds(args.timeout),
                                               reshape_request::real_pacing(), turn ? turn->get() : nullptr, say);
    return watched ? kExitOk : fail("reshape-request watch", watched.error().message);
}

int run_reboot_target(const RequestArgs& args) {
    auto cluster = slurm_client()->nodes("");
    if (!cluster) return fail("reshape-request reboot-target", cluster.error().message);
    auto request = reshape_request::reboot_request(*cluster, args.own, args.host_names);
    if (!request) return kExitNotWanted;
    std::cout << request->active << " " << request->target << "\n";
    return kExitOk;
}

int run_wanted(const RequestArgs& args) {
    auto wanted = reshape_request::target_wanted(*slurm_client(), args.target);
    if (!wanted) return fail("reshape-request wanted", wanted.error().message);
    return *wanted ? kExitOk : kExitNotWanted;
}

void add_job_options(CLI::App* cmd, RequestArgs& args) {
    cmd->add_option("--job", args.job, "the job (SLURM_JOB_ID)")->envname("SLURM_JOB_ID")->required();
    cmd->add_option("--nodes", args.nodes, "its nodes (SLURM_JOB_NODELIST)")
        ->envname("SLURM_JOB_NODELIST")
        ->required();
}

}  // namespace

void add_reshape_request_command(CLI::App& app, const GlobalOptions&, Runner& run) {
    auto args = std::make_shared<RequestArgs>();
    auto* top = app.add_subcommand("reshape-request",
                                   "The reshape flow's requests to slurmctld (its Slurm hooks, as SlurmUser or root)");
    top->require_subcommand(1);
    auto* resume = top->add_subcommand("resume", "ResumeProgram: ask each sibling's host to reshape for it, or queue "
                                                 "it behind the request the host serves (exit 1 when one could not be asked)");
    resume->add_option("nodes", args->nodes, "the siblings Slurm resumes (a node list)")->required();
    resume->callback([args, &run] { run = [args] { return run_resume(*args); }; });
    auto* wait = top->add_subcommand("wait", "PrologSlurmctld: return once the job's nodes have registered, the job "
                                             "no longer waits, or after --timeout (backing off to one poll per 2 s)");
    add_job_options(wait, *args);
    wait->add_option("--timeout", args->timeout, "seconds at most (ResumeTimeout's)")->capture_default_str();
    wait->add_option("--turn-dir", args->turn_dir, "the hook user's 0700 directory where jobs waiting for the same "
                                                   "nodes take turns to poll")
        ->envname("XPART_RESHAPE_TURN_DIR")
        ->capture_default_str();
    wait->callback([args, &run] { run = [args] { return run_wait(*args); }; });
    auto* withdraw = top->add_subcommand("withdraw", "EpilogSlurmctld: withdraw each reshape request of the job that "
                                                     "no other job waits for (the host back in service)");
    add_job_options(withdraw, *args);
    withdraw->callback([args, &run] { run = [args] { return run_withdraw(*args); }; });
    auto* watch = top->add_subcommand("watch", "ResumeProgram, detached: while NODE's host has a sibling powering up, "
                                               "withdraw a request no job waits for and ask for a queued one nobody asked for");
    watch->add_option("node", args->target, "a sibling Slurm resumes")->required();
    watch->add_option("--timeout", args->timeout, "seconds at most (ResumeTimeout's)")->capture_default_str();
    watch->add_option("--turn-dir", args->turn_dir, "where the host's one watcher holds its turn")
        ->envname("XPART_RESHAPE_TURN_DIR")
        ->capture_default_str();
    watch->callback([args, &run] { run = [args] { return run_watch(*args); }; });
    auto* reboot = top->add_subcommand("reboot-target", "RebootProgram: print \"NODE TARGET\" when the reboot of this host's "
                                                        "NODE is a reshape for TARGET; exit 7 when it is none");
    reboot->add_option("--node", args->own, "the NodeName the rebooting slurmd serves (its -N), if it has one");
    reboot->add_option("--host", args->host_names, "this host's names (without --node: a node of any of them)");
    reboot->callback([args, &run] { run = [args] { return run_reboot_target(*args); }; });
    auto reboot_args = std::make_shared<RebootArgs>();
    auto* program = top->add_subcommand(
        "reboot", "RebootProgram (slurmd runs it as root; xpart-reboot.sh): reshape this host for the sibling a job "
                  "waits for, and once this slurmd has exited start slurmd as the NodeName the host is then "
                  "(exit 1: refused, withdrawn, or no reshape)");
    program->add_option("--slurmd-start", reboot_args->slurmd_start, "how slurmd starts as a NodeName (%n in it is the NodeName, else it is appended)")
        ->envname("XPART_SLURMD_START")
        ->capture_default_str();
    program->add_option("--slurmd-unit", reboot_args->slurmd_unit,
                        "the host's slurmds are systemd units (slurmd@%n.service): the one left is disabled, the next "
                        "enabled and started (instead of --slurmd-start)")
        ->envname("XPART_SLURMD_UNIT");
    program->add_option("--fallback", reboot_args->fallback, "what a reboot that is no reshape runs (default: nothing)")
        ->envname("XPART_REBOOT_FALLBACK");
    program->add_option("--log", reboot_args->log, "a file each line is appended to, besides syslog")
        ->envname("XPART_RESHAPE_LOG");
    program->add_option("--reshape-args", reboot_args->reshape_args, "more options of xpart reshape "
                                                                     "(e.g. \"--xpart-conf /etc/slurm/xpart.conf\")")
        ->envname("XPART_RESHAPE_ARGS");
    program->callback([reboot_args, &run] { run = [reboot_args] { return run_reshape_reboot(*reboot_args); }; });
    auto unit_args = std::make_shared<UnitStartArgs>();
    auto* unit = top->add_subcommand("unit-start", "slurmd@.service's ExecStartPre (root): make NODE's geometry whole, "
                                                   "then tell the unit whether slurmd starts as a reboot (-b: while "
                                                   "slurmctld waits for NODE's boot); exit 1: no slurmd");
    unit->add_option("node", unit_args->node, "the unit's NodeName (%i)")->required();
    unit->add_option("--slurmd-unit", unit_args->slurmd_unit, "the host's slurmd units, one per sibling")
        ->envname("XPART_SLURMD_UNIT")
        ->capture_default_str();
    unit->add_option("--log", unit_args->log, "a file each line is appended to, besides syslog")
        ->envname("XPART_RESHAPE_LOG");
    unit->add_option("--reshape-args", unit_args->reshape_args, "more options of xpart reshape")
        ->envname("XPART_RESHAPE_ARGS");
    unit->callback([unit_args, &run] { run = [unit_args] { return run_unit_start(*unit_args); }; });
    auto* wanted = top->add_subcommand("wanted", "RebootProgram: exit 0 when a job still waits for NODE, 7 when none");
    wanted->add_option("node", args->target, "the sibling the host would become")->required();
    wanted->callback([args, &run] { run = [args] { return run_wanted(*args); }; });
}

}  // namespace xpart::cli
