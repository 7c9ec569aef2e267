// Work left to a helper process that is not the caller's child. slurmstepd reaps every child
// it has (wait3), so a SPANK plugin's own child can be taken, exit status and all, before the
// plugin waits for it; a helper forked twice belongs to init (or a subreaper) instead. It runs
// the work and writes what the work returns into a pipe; the caller reads it later. The
// helper exits only once the caller has closed that pipe, so that its pid, which the caller
// holds as a pidfd, cannot be another process's meanwhile; result() returns once it is gone
// (slurmstepd removes the step's cgroup next, which a process left in it would keep busy).
// Given a cgroup, the helper moves itself there before it works: 25.11's slurmstepd waits
// for its step's cgroup to empty (and drains the node, "Kill task failed") before the step's
// SPANK exit, which is where a plugin takes the answer.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "libxpart/result.hpp"
#include "libxpart/unique_fd.hpp"

namespace xpart::process {

class DetachedWork {
public:
    // Forks the helper (it keeps no descriptor of the caller's but its pipe) and returns at
    // once. `work` must bound its own time: the caller never signals the helper.
    static Result<DetachedWork> start(const std::function<std::string()>& work,
                                      const std::string& cgroup_procs = "");

    // What `work` returned, once the helper has exited. Error when it could not join the
    // cgroup (and did not work), ended without an answer (killed, or `work` threw) or none
    // came by `deadline` (the helper is then left to end by itself). Once.
    Result<std::string> result(std::chrono::steady_clock::time_point deadline);
    // Whether something (the answer, or the helper's end) is there to read now.
    bool done() const;

private:
    DetachedWork(UniqueFd answer, UniqueFd helper) : answer_(std::move(answer)), helper_(std::move(helper)) {}
    UniqueFd answer_;  // closing it lets the helper exit
    UniqueFd helper_;  // its pidfd
};

}  // namespace xpart::process
