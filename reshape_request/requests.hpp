// The reshape flow's requests, decided once for every hook of etc/reshape (as SlurmUser on the
// controller, or root on the host): a job given a powered-down sibling makes xpart-resume.sh
// ask the host's up sibling to reboot (`scontrol reboot ASAP reason=xpart-reshape:<target>`);
// the request lives only while a job still waits for the target (CONFIGURING on it).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "libxpart/result.hpp"
#include "reshape_request/poll_turn.hpp"
#include "reshape_request/slurm_client.hpp"

namespace xpart::reshape_request {

// A request between two siblings of one host: `active` (up, asked to reboot) gives the host up
// for `target` (powering up).
struct Request {
    std::string active;
    std::string target;
};

// Of `job_nodes`, the siblings powering up for a request not under way yet: their group's up
// sibling is REBOOT_REQUESTED (not REBOOT_ISSUED: the RebootProgram runs) with
// Reason=xpart-reshape:<it>. Pure.
std::vector<Request> pending_requests(const std::vector<SlurmNode>& cluster,
                                      const std::vector<std::string>& job_nodes);

// EpilogSlurmctld of a job that leaves (ended, cancelled, requeued, held): each of its pending
// requests that no other job waits for is withdrawn, `scontrol cancel_reboot <active>` (Slurm
// undrains it: the reboot ASAP drained it) then the target powered down again. One line per
// request (withdrawn, kept and why, or what scontrol refused); Error when the cluster cannot
// be read.
// Then the host's queued request, if any, is asked for (ask_queued).
Result<std::vector<std::string>> withdraw_unwanted(SlurmClient& slurm, const std::string& job,
                                                   const std::string& nodelist);

// The host's up sibling in `group`: neither powered down nor powering up (nullptr: none); once
// the sibling it was asked for has registered, that one (the old is powered down next).
const SlurmNode* up_sibling(const std::vector<SlurmNode>& cluster, const std::string& group);

// What a hook did, one line per request, and whether every request it had to make was made.
struct Outcome {
    std::vector<std::string> lines;
    bool all_made = true;
};

// ResumeProgram: for each sibling Slurm resumes, the host's up sibling is asked to give the
// host up for it (`scontrol reboot ASAP nextstate=DOWN reason=xpart-reshape:<target>`),
// unless it is asked for another sibling already: then the target waits its turn ("queued"),
// and ask_queued asks for it once the host has become the other one. Policy: one request per
// host at a time, in the order the jobs came (the lowest job id waiting), each served until
// the jobs it started end; a host never reshapes away from jobs it reshaped for.
Result<Outcome> resume(SlurmClient& slurm, const std::string& nodelist);

// The next request of each host of `nodes` whose up sibling is asked for nothing: the powered-up
// sibling with the job that waits longest (lowest id). Run once a sibling has registered (the
// PrologSlurmctld) and when a job leaves (the EpilogSlurmctld, after its withdrawals).
Result<Outcome> ask_queued(SlurmClient& slurm, const std::vector<std::string>& nodes);

// RebootProgram: the request slurmd's reboot serves, from the node it serves (`own`, its -N
// name; "" when it was started without one: then any node whose NodeHostName is one of
// `host_names`) that is rebooting (REBOOT_REQUESTED or REBOOT_ISSUED) with
// Reason=xpart-reshape:<target>. Pure; nullopt when this reboot is no reshape.
std::optional<Request> reboot_request(const std::vector<SlurmNode>& cluster, const std::string& own,
                                      const std::vector<std::string>& host_names);

// RebootProgram, before it reshapes: does any job still wait for `target`?
Result<bool> target_wanted(SlurmClient& slurm, const std::string& target);

// How a wait measures time and pauses (tests drive both).
struct Pacing {
    std::function<std::chrono::steady_clock::time_point()> now;
    std::function<void(std::chrono::milliseconds)> sleep;
};
Pacing real_pacing();

// The pause after one of `previous` (zero: the first): 250 ms, then 1.5 times longer each
// time, never over 2 s. After the first few seconds a waiting job costs slurmctld one node RPC
// per 2 s, and a job state RPC per 10 s.
std::chrono::milliseconds next_pause(std::chrono::milliseconds previous);

enum class WaitEnd { Registered, JobGone, TimedOut };

// PrologSlurmctld: returns once every node of `nodelist` has registered, once `job` no longer
// waits (not CONFIGURING: requeued, cancelled; checked every 5th poll, and at once when a node
// is powered down, as a refused or withdrawn request leaves it), or after `timeout`. With a
// `turn`, it polls only while the turn is its own (another job waiting for the same nodes
// polls meanwhile; it looks again every 100 ms, asking slurmctld nothing).
Result<WaitEnd> wait_registered(SlurmClient& slurm, const std::string& job, const std::string& nodelist,
                                std::chrono::seconds timeout, const Pacing& pacing, PollTurn* turn = nullptr);

// PrologSlurmctld: wait_registered; once registered, the host's queued request (ask_queued).
// A line when it timed out.
Result<Outcome> prolog_wait(SlurmClient& slurm, const std::string& job, const std::string& nodelist,
                            std::chrono::seconds timeout, const Pacing& pacing, PollTurn* turn);

// The ResumeProgram's watcher of a host (`node`'s group) while any of its siblings powers up:
// Slurm can kill a cancelled job's EpilogSlurmctld before it runs (22.05's slurmscriptd
// handles the job's script flush and the epilog's start on threads of their own), so a
// request whose jobs are gone is withdrawn here too, once no job has waited for its target
// at two polls in a row, and a queued request nobody asked for is asked for (ask_queued).
// Returns once no sibling of the host powers up, or after `timeout`. One watcher per host:
// with a `turn` taken by another watcher it returns at once. Polls after 2 s, then 1.5 times
// longer each time up to 5 s: the EpilogSlurmctld is the fast path. It runs for minutes, so
// each line goes to `tell` when it happens (the log shows who asked while the host reshapes).
using LineSink = std::function<void(const std::string&)>;
Status watch_host(SlurmClient& slurm, const std::string& node, std::chrono::seconds timeout, const Pacing& pacing,
                  PollTurn* turn, const LineSink& tell);

}  // namespace xpart::reshape_request
