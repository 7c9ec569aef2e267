// The RebootProgram of geometry on demand (etc/reshape/xpart-reboot.sh hands everything here):
// slurmd runs it as root once the node it serves is idle after `scontrol reboot ASAP
// reason=xpart-reshape:<sibling>`, and with SlurmdParameters=shutdown_on_reboot exits after it.
// It reshapes the host for the sibling if a job still waits for it, then, once that slurmd has
// exited, starts slurmd as the NodeName the host is now and powers the other one down.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "libxpart/result.hpp"
#include "reshape_request/requests.hpp"

namespace xpart::reshape_request {

// What a reboot makes of the host.
struct RebootPlan {
    std::string next;      // the NodeName slurmd starts as
    std::string down;      // the sibling powered down, with `reason`
    std::string reason;
    bool refused = false;  // the host stays as it was: `next` is returned to service once it answers
    std::string line;      // the log's line: "small -> big: <what xpart reshape printed>"
};

// `xpart reshape --slurm-node TARGET`: whether it reshaped, and what it printed.
struct ReshapeAttempt {
    bool done = false;
    std::string output;
};
using Reshape = std::function<ReshapeAttempt(const std::string& target)>;

// A request no job waits for any more is withdrawn (an unreadable answer is no "no": the
// reshape goes on, and the registration tells); else the host is reshaped, and a reshape that
// fails keeps it as `request.active`, the target powered down with the reshape's first line.
RebootPlan plan_reboot(SlurmClient& slurm, const Request& request, const Reshape& reshape);

// The plan that keeps the host as `request.active`, the target powered down with `why`.
RebootPlan refused_plan(const Request& request, const std::string& why);

// How the RebootProgram's detached part reaches the slurmd that ran it and starts the next.
struct RebootFinish {
    std::function<bool()> slurmd_running;  // that very slurmd (pid and start time) still runs
    std::function<void()> signal_slurmd;   // SIGTERM to it, and to nothing else
    // Makes (or finds) the GPU geometry of a NodeName (`xpart reshape --slurm-node`); Error: its
    // first line.
    std::function<Status(const std::string& node)> make_geometry;
    std::function<Status(const std::string& node)> start_slurmd;
    std::function<void(const std::string& line)> log;
    std::chrono::seconds resignal_every{10};
    std::chrono::seconds resume_within{60};
};

// Once slurmd has exited (Slurm 22.05's slurmd can miss its own shutdown signal, sent while
// its message thread is between its shutdown check and accept(): it is sent again every
// `resignal_every`), `plan.next`'s geometry is made whole (a reshape killed or failed halfway
// leaves a GPU half-made: slurmd must not register it), then slurmd starts as `plan.next` and
// `plan.down` is powered down (a refused plan's `plan.down` that slurmctld set DOWN at
// ResumeTimeout meanwhile is resumed first, then powered down). A geometry that cannot be
// made starts no slurmd, and a start that fails (`start_slurmd`'s error: a start nothing will
// try again) leaves none: `plan.next` is set DOWN with a reason naming what failed, and stays
// so for the admin. A refused plan's `next` (Slurm sets it DOWN at registration, as the reboot
// asked nextstate=DOWN) is resumed once it answers, polled with next_pause's backoff for
// `resume_within` at most; one that registered neither DOWN nor DRAIN is in service already
// and left as it is.
void finish_reboot(SlurmClient& slurm, const RebootPlan& plan, const RebootFinish& how, const Pacing& pacing);

// The command that starts slurmd as `node`, from the site's setting (XPART_SLURMD_START): its
// words, with every `%n` in them the NodeName (`systemctl start slurmd@%n`); a setting without
// `%n` gets the NodeName as its last word (`slurmd -b -N`, the default).
std::vector<std::string> slurmd_start_command(const std::string& setting, const std::string& node);

// The unit of `node`'s slurmd from the site's setting (XPART_SLURMD_UNIT, `slurmd@%n.service`):
// every `%n` the NodeName. nullopt when the setting is not one word with `%n` in it, or the
// NodeName cannot name a unit (empty, a '/' in it).
std::optional<std::string> slurmd_unit_name(const std::string& setting, const std::string& node);

// When the host's slurmds are systemd units (the template etc/systemd ships): the systemctl
// commands that make `plan.next` the host's slurmd, in order. A reshape enables the next
// sibling's unit, disables the one of the sibling it leaves, then starts the next one: at
// every moment one unit is enabled, or (a power cut between the first two) both, which the
// boot resolves (decide_unit_start); never none. A refused or withdrawn plan starts the same
// unit again. Empty when a unit cannot be named (slurmd_unit_name).
std::vector<std::vector<std::string>> slurmd_unit_commands(const std::string& unit, const RebootPlan& plan);

// The busctl command that moves process `pid` into a transient scope of its own
// (xpart-reboot-<pid>.scope, collected once it ends): the RebootProgram's part that outlives
// slurmd leaves the slurmd@ unit's cgroup with it, as Slurm puts each slurmstepd in
// slurmstepd.scope. Left inside, it keeps the unit's delegated cgroup from being emptied
// after slurmd exits, and systemd cannot start that same unit again while it runs (EBUSY,
// "Failed with result 'resources'"): what a refused, withdrawn or killed reshape does.
std::vector<std::string> leave_unit_command(long pid);
// The scope leave_unit_command names, as /proc/<pid>/cgroup shows it at the path's end.
std::string leave_unit_scope(long pid);

// Whether a slurmd starting as `node` must tell slurmctld the node has rebooted (slurmd -b):
// while slurmctld waits for that NodeName's boot (a reshape's or refusal's REBOOT_ISSUED, a
// sibling POWERING_UP), a start after that very start was killed included. Never otherwise: a
// restart under running jobs with -b looks to slurmctld like a node that rebooted under them.
bool start_reports_reboot(const SlurmNode& node);

// unit-start, where a sibling of `node` powers up (a job waits for it): the host's watcher
// (watch_host, one per host) started again, in a transient service of its own, as the
// ResumeProgram starts one on the controller. A power cut of a host that is its own controller,
// or slurmctld restarted, ends that one, and the request a reshape cut short served is then
// asked again by nobody: the sibling would wait until ResumeTimeout. `xpart` the program,
// `env` the VAR=VALUE pairs the watcher needs (SLURM_CONF). Empty when `node` cannot name a
// unit (a character systemd would escape).
std::vector<std::string> host_watch_command(const std::string& xpart, const std::string& node,
                                            const std::vector<std::string>& env);
// Whether any sibling of `node` powers up (POWERING_UP).
bool sibling_powers_up(const std::vector<SlurmNode>& cluster, const std::string& node);

// The environment file slurmd@.service's ExecStartPre writes for its ExecStart (defaults.hpp).
std::string slurmd_reboot_flag_text(bool reboot);

}  // namespace xpart::reshape_request
