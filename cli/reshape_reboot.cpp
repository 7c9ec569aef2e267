#include "cli/reshape_reboot.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <iterator>
#include <optional>
#include <thread>

#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "libxpart/defaults.hpp"
#include "libxpart/env_map.hpp"
#include "libxpart/proc_stat.hpp"
#include "libxpart/root_fs.hpp"
#include "libxpart/slurm_text/slurmd_node_name.hpp"
#include "libxpart/text.hpp"
#include "mps/whole_file.hpp"
#include "process/process_identity.hpp"
#include "process/spawn.hpp"
#include "reshape_request/reboot_program.hpp"
#include "reshape_request/sibling_units.hpp"

extern char** environ;

namespace xpart::cli {

namespace {

// Each line to syslog (as `logger -t xpart-reboot` did), standard error, and the admin's file.
class RebootLog {
public:
    explicit RebootLog(std::string file) : file_(std::move(file)) { openlog("xpart-reboot", 0, LOG_USER); }
    void operator()(const std::string& line) const {
        syslog(LOG_NOTICE, "%s", line.c_str());
        std::cerr << "xpart-reboot: " << line << std::endl;
        if (file_.empty()) return;
        char when[32] = "";
        const std::time_t now = std::time(nullptr);
        std::tm local{};
        if (localtime_r(&now, &local)) std::strftime(when, sizeof when, "%F %T", &local);
        const std::string text = std::string(when) + " xpart-reboot: " + line + "\n";
        // Root appends: no link followed, no FIFO waited on, nothing but a plain file written.
        const int fd = open(file_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
        if (fd < 0) return;
        struct stat st {};
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) (void)!write(fd, text.data(), text.size());
        close(fd);
    }

private:
    std::string file_;
};

// The slurmd that runs this RebootProgram: the parent, or the parent's parent when slurmd
// ran it through `sh -c`. Ancestors only: nothing a user can plant.
std::optional<process::ProcessIdentity> rebooting_slurmd() {
    const RootFs proc("/");
    pid_t pid = getppid();
    for (int up = 0; up < 2 && pid > 1; ++up) {
        auto stat = read_proc_stat(proc, pid);
        if (!stat) return std::nullopt;
        if (stat->comm == "slurmd") return process::identify(pid);
        pid = stat->ppid;
    }
    return std::nullopt;
}

std::vector<std::string> host_names() {
    char full[256] = {};
    std::vector<std::string> out{short_hostname()};
    if (gethostname(full, sizeof full - 1) == 0 && out.front() != full) out.push_back(full);
    return out;
}

std::string own_program() {
    char path[4096];
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : "xpart";
}

// The part that outlives slurmd: its own session, nothing of the caller's descriptors.
void detach() {
    const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 0), dup2(null, 1), dup2(null, 2);
        if (null > 2) close(null);
    }
    setsid();
}

// The environment file of the unit's ExecStart (slurmd -b or not): in root's own runtime
// directory, which no user can plant or rename anything in (checked, not assumed).
Status write_reboot_flag(const std::string& node, const std::string& text) {
    const std::string dir = defaults::kRunDir;
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return Error{dir + ": mkdir: " + std::strerror(errno)};
    const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir_fd < 0) return Error{dir + ": " + std::strerror(errno)};
    struct stat st {};
    Status written = ok_status();
    if (fstat(dir_fd, &st) != 0 || st.st_uid != 0 || (st.st_mode & 022) != 0)
        written = Error{dir + ": not root's alone: the reboot flag is not written"};
    else
        written = mps::write_whole_file(dir_fd, defaults::kSlurmdRebootFlagPrefix + node, text, 0644,
                                        dir + "/" + defaults::kSlurmdRebootFlagPrefix + node);
    close(dir_fd);
    return written;
}

// `xpart reshape --slurm-node TARGET` as a child: whether it reshaped (or found the geometry
// made), and what it printed.
reshape_request::ReshapeAttempt run_xpart_reshape(const std::string& target, const std::string& reshape_args,
                                                  const EnvMap& env) {
    std::vector<std::string> argv{own_program(), "reshape", "--slurm-node", target};
    for (auto& w : split_words(reshape_args)) argv.push_back(w);
    // No reshape takes this long; one that hangs must not keep the host from coming back.
    auto run = process::run_with_input(argv, env, "", std::chrono::minutes(30));
    if (!run) return reshape_request::ReshapeAttempt{false, run.error().message};
    // Killed halfway: the reason says so (what it printed may be nothing).
    if (run->exit_status > 128)
        return reshape_request::ReshapeAttempt{false, "xpart reshape --slurm-node " + target + ": killed by signal " +
                                                          std::to_string(run->exit_status - 128) + "\n" + run->output};
    return reshape_request::ReshapeAttempt{run->exit_status == 0, run->output};
}

// The exit status of a command run as a child, its output to /dev/null, waited for: `slurmd -b`
// daemonizes, and the daemon must hold no pipe of ours.
Result<int> command_status(const std::vector<std::string>& argv, const EnvMap& env) {
    auto pid = process::spawn_detached(argv, env);
    if (!pid) return pid.error();
    return process::wait_child(*pid, std::chrono::steady_clock::now() + std::chrono::minutes(2), argv[0]);
}

// Runs each command in turn; the first that fails ends it.
Status run_in_turn(const std::vector<std::vector<std::string>>& commands, const EnvMap& env) {
    for (const auto& argv : commands) {
        auto status = command_status(argv, env);
        if (!status) return status.error();
        if (*status != 0) {
            std::string line;
            for (const auto& word : argv) line += (line.empty() ? "" : " ") + word;
            return Error{line + ": exit status " + std::to_string(*status)};
        }
    }
    return ok_status();
}

// Each NodeName's unit is one systemd has (the template installed, the setting right): checked
// before anything is reshaped, so that a wrong setting leaves the host as it is.
Status units_loaded(const std::string& setting, const std::vector<std::string>& nodes, const EnvMap& env) {
    for (const auto& node : nodes) {
        const auto unit = reshape_request::slurmd_unit_name(setting, node);
        if (!unit) return Error{"XPART_SLURMD_UNIT=" + setting + ": not one unit name with %n for " + node};
        auto shown = process::run_with_input({"systemctl", "show", "--property=LoadState", "--value", *unit}, env, "",
                                             std::chrono::seconds(30));
        const std::string state = shown ? trim(shown->output) : shown.error().message;
        if (state != "loaded")
            return Error{"XPART_SLURMD_UNIT=" + setting + ": systemd has no unit " + *unit + " (" +
                         (state.empty() ? std::string("no LoadState") : first_line(state)) + ")"};
    }
    return ok_status();
}

// Under slurmd@ units, this part moves into a scope of its own (reshape_request::leave_unit_command),
// checked in /proc/self/cgroup. Where it cannot, it says so and goes on: a start of the same
// unit then waits until this part has ended, as systemd restarts it.
void leave_unit(const EnvMap& env, const RebootLog& log) {
    const long pid = static_cast<long>(getpid());
    const std::string scope = reshape_request::leave_unit_scope(pid);
    const auto status = command_status(reshape_request::leave_unit_command(pid), env);
    if (status && *status == 0)
        for (int tenth = 0; tenth < 50; ++tenth) {
            const auto cgroup = RootFs("/").read("/proc/self/cgroup");
            if (cgroup && cgroup->find("/" + scope + "\n") != std::string::npos) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    log("could not leave the slurmd unit's cgroup for " + scope + " (" +
        (status ? "busctl: exit status " + std::to_string(*status) : status.error().message) +
        "): the same unit starts again only once this has ended");
}

// Whether NODE's unit is the one to start, the other siblings' units enabled too or not
// (decide_unit_start); what it decided done: the units a power cut left enabled disabled, or
// this unit disabled or stopped without a restart and the node's record saying why.
bool sibling_units_settled(const UnitStartArgs& args, reshape_request::SlurmClient& slurm, const EnvMap& env,
                           const RebootLog& log) {
    const std::string& node = args.node;
    const std::string setting = args.slurmd_unit.empty() ? UnitStartArgs().slurmd_unit : args.slurmd_unit;
    const std::string me = "slurmd@" + node + ": ";
    auto cluster = slurm.nodes("");
    if (!cluster) {
        log(me + "slurmctld's nodes not read (" + cluster.error().message + "): slurmd not started");
        return false;
    }
    const auto unit = [&](const std::string& name) { return reshape_request::slurmd_unit_name(setting, name); };
    auto siblings = reshape_request::siblings_of(*cluster, node);
    siblings.push_back(node);  // each named before any is asked about, this one too
    for (const auto& name : siblings)
        if (!unit(name)) {
            log(me + "XPART_SLURMD_UNIT=" + setting + ": not one unit name with %n for " + name + ": slurmd not started");
            return false;
        }
    siblings.pop_back();
    auto is_enabled = [&](const std::string& name) {
        const auto status = command_status({"systemctl", "is-enabled", "--quiet", *unit(name)}, env);
        return status && *status == 0;
    };
    std::vector<std::string> enabled;
    std::copy_if(siblings.begin(), siblings.end(), std::back_inserter(enabled), is_enabled);
    using reshape_request::UnitStart;
    const UnitStart decided = reshape_request::decide_unit_start(*cluster, node, is_enabled(node), enabled);
    for (const auto& left : decided.disable) {
        const Status st = run_in_turn({{"systemctl", "disable", "--quiet", *unit(left)}}, env);
        log(me + *unit(left) + " left enabled by a reshape to " + node + " cut short: " +
            (st ? std::string("disabled") : st.error().message));
    }
    const bool stand_down = decided.what == UnitStart::StandDown;
    auto tell = [&](const std::string& name, bool down) {
        log(me + decided.reason + ": " + name + (down ? " set DOWN" : " powered down"));
        const std::string state = down ? "state=DOWN" : "state=POWER_DOWN_FORCE";
        if (Status st = slurm.scontrol({"update", "nodename=" + name, state, "reason=" + decided.reason}); !st)
            log(me + "telling slurmctld failed: " + st.error().message);
    };
    for (const auto& left : decided.power_down) tell(left, false);
    if (decided.what == UnitStart::Start) return true;
    if (decided.what == UnitStart::StandAside) {
        log(me + decided.reason + ": this unit not enabled, stopped");
    } else {
        tell(node, !stand_down);
        log(me + (stand_down ? "this unit disabled and stopped" : "this unit stopped"));
    }
    // Not waited for (the stop would wait for this very start); a stop asked for is not restarted.
    // Under systemd (a unit's process has INVOCATION_ID) the stop ends this start with SIGTERM,
    // which only the stop sends: waited for and taken as a clean end (the unit is stopping by
    // then, nothing more starts), so that the unit ends stopped, not failed by a signal or by an
    // exit that came first.
    const bool under_systemd = std::getenv("INVOCATION_ID") != nullptr;
    if (under_systemd) std::signal(SIGTERM, [](int) { _exit(0); });
    const std::vector<std::string> off =
        stand_down ? std::vector<std::string>{"systemctl", "disable", "--now", "--no-block", "--quiet", *unit(node)}
                   : std::vector<std::string>{"systemctl", "stop", "--no-block", *unit(node)};
    if (Status st = run_in_turn({off}, env); !st) log(me + st.error().message);
    for (int tenth = 0; under_systemd && tenth < 100; ++tenth)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return false;
}

// A sibling powers up: the host's watcher again (host_watch_command), should the ResumeProgram's
// have ended with a power cut or slurmctld. One that runs already keeps its unit: nothing to do.
void start_host_watch(const std::string& node, const EnvMap& env, const RebootLog& log) {
    std::vector<std::string> pass;
    for (const char* name : {"SLURM_CONF", "XPART_RESHAPE_TURN_DIR"})
        if (const auto it = env.find(name); it != env.end()) pass.push_back(std::string(name) + "=" + it->second);
    const auto argv = reshape_request::host_watch_command(own_program(), node, pass);
    if (argv.empty()) {
        log("slurmd@" + node + ": a sibling powers up; no watcher of the host started (" + node + " cannot name a unit)");
        return;
    }
    const std::string me = "slurmd@" + node + ": a sibling powers up: the host's watcher ";
    const auto status = command_status(argv, env);
    if (status && *status == 0) return log(me + "started (xpart-reshape-watch-" + node + ".service)");
    log(me + "not started (" + (status ? "systemd-run: exit status " + std::to_string(*status) : status.error().message) +
        "; one may run already)");
}

}  // namespace

int run_reshape_reboot(const RebootArgs& args) {
    const RebootLog log(args.log);
    const EnvMap env = env_from_environ(environ);
    auto slurm = reshape_request::command_client(env);
    const auto slurmd = rebooting_slurmd();
    std::string own;
    if (slurmd)
        own = slurmd_node_name_arg(process_arguments(std::to_string(slurmd->pid))).value_or("");
    std::optional<reshape_request::Request> request;
    if (auto cluster = slurm->nodes(""))
        request = reshape_request::reboot_request(*cluster, own, host_names());
    else
        log("cannot read the cluster's nodes: " + cluster.error().message);
    if (!request) {
        std::vector<std::string> argv = split_words(args.fallback);
        if (argv.empty()) {
            log("no node of this host waits for an xpart reshape, and XPART_REBOOT_FALLBACK is not set: nothing done");
            return kExitError;
        }
        log("not a reshape: running " + args.fallback);
        std::vector<char*> c_argv;
        for (auto& a : argv) c_argv.push_back(a.data());
        c_argv.push_back(nullptr);
        execvp(c_argv[0], c_argv.data());
        log("running " + args.fallback + " failed: " + std::strerror(errno));
        return kExitError;
    }
    auto reshape = [&](const std::string& target) { return run_xpart_reshape(target, args.reshape_args, env); };
    const reshape_request::RebootPlan plan = [&] {
        if (args.slurmd_unit.empty()) return reshape_request::plan_reboot(*slurm, *request, reshape);
        const Status units = units_loaded(args.slurmd_unit, {request->active, request->target}, env);
        return units ? reshape_request::plan_reboot(*slurm, *request, reshape)
                     : reshape_request::refused_plan(*request, units.error().message);
    }();
    log(plan.line);
    if (!slurmd) log("no slurmd among this program's parents: slurmd starts as " + plan.next + " at once");

    // slurmd exits when this returns; the next slurmd starts once it has gone (the same Port
    // and pid file may be reused).
    std::cout.flush(), std::cerr.flush();
    const pid_t child = fork();
    if (child < 0) {
        log(std::string("cannot start the part that outlives slurmd: ") + std::strerror(errno));
        return kExitError;
    }
    if (child > 0) return plan.refused ? kExitError : kExitOk;
    detach();
    if (fork() != 0) _exit(0);  // not a session leader: no terminal can be acquired
    if (!args.slurmd_unit.empty()) leave_unit(env, log);
    reshape_request::RebootFinish how;
    how.slurmd_running = [&] { return slurmd && process::still_running(*slurmd); };
    how.signal_slurmd = [&] {
        if (slurmd) (void)process::signal_if_same(*slurmd, SIGTERM);
    };
    how.make_geometry = [&](const std::string& node) -> Status {
        const auto made = reshape(node);
        if (made.done) return ok_status();
        return Error{made.output.empty() ? std::string("xpart reshape --slurm-node ") + node + " failed" : made.output};
    };
    how.start_slurmd = [&](const std::string& node) -> Status {
        if (!args.slurmd_unit.empty()) {
            if (Status units = units_loaded(args.slurmd_unit, {plan.next, plan.down}, env); !units) return units;
            auto commands = reshape_request::slurmd_unit_commands(args.slurmd_unit, plan);
            const auto start = commands.back();
            commands.pop_back();
            if (Status switched = run_in_turn(commands, env); !switched) return switched;
            // A unit whose start fails is started again by systemd (Restart=on-failure), as the
            // next sibling: not a node to set DOWN.
            if (Status started = run_in_turn({start}, env); !started)
                log("starting slurmd as " + node + ": " + started.error().message + "; its unit starts it again");
            return ok_status();
        }
        std::string setting = args.slurmd_start;
        if (split_words(setting).empty()) setting = RebootArgs().slurmd_start;  // set, but to nothing
        return run_in_turn({reshape_request::slurmd_start_command(setting, node)}, env);
    };
    how.log = [&](const std::string& line) { log(line); };
    reshape_request::finish_reboot(*slurm, plan, how, reshape_request::real_pacing());
    _exit(0);
}

int run_unit_start(const UnitStartArgs& args) {
    const RebootLog log(args.log);
    const std::string& node = args.node;
    if (node.empty() || node.find('/') != std::string::npos || node[0] == '.') {
        log("unit-start: NodeName '" + node + "' cannot name a unit's flag file: slurmd not started");
        return kExitError;
    }
    const EnvMap env = env_from_environ(environ);
    auto slurm = reshape_request::command_client(env);
    if (!sibling_units_settled(args, *slurm, env, log)) return kExitError;
    const auto made = run_xpart_reshape(node, args.reshape_args, env);
    if (!made.done) {
        log("slurmd@" + node + ": geometry not made, slurmd not started: " + first_line(made.output));
        return kExitError;
    }
    const auto cluster = slurm->nodes("");
    const reshape_request::SlurmNode* record = nullptr;
    if (cluster)
        for (const auto& n : *cluster)
            if (n.name == node) record = &n;
    if (!record) {
        log("slurmd@" + node + ": slurmctld's record of " + node + " not read (" +
            (cluster ? std::string("no such node") : cluster.error().message) + "): slurmd not started");
        return kExitError;
    }
    const bool reboot = reshape_request::start_reports_reboot(*record);
    if (Status st = write_reboot_flag(node, reshape_request::slurmd_reboot_flag_text(reboot)); !st) {
        log("slurmd@" + node + ": " + st.error().message + ": slurmd not started");
        return kExitError;
    }
    log("slurmd@" + node + ": " + first_line(made.output) +
        (reboot ? "; slurmctld waits for its boot: slurmd -b" : ""));
    if (reshape_request::sibling_powers_up(*cluster, node)) start_host_watch(node, env, log);
    return kExitOk;
}

}  // namespace xpart::cli
