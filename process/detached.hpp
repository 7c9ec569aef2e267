// Work left to a helper process that is not the caller's child. slurmstepd reaps every child
// it has (wait3), so a SPANK plugin's own child can be taken, exit status and all, before the
// plugin waits for it; a helper forked twice belongs to init (or a subreaper) instead. It runs
// the work, writes what the work returns into a pipe and exits; the caller reads it later.
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
    static Result<DetachedWork> start(const std::function<std::string()>& work);

    // What `work` returned. Error when the helper ended without an answer (killed, or `work`
    // threw) or none came by `deadline` (the helper is then left to end by itself). Once.
    Result<std::string> result(std::chrono::steady_clock::time_point deadline);
    // Whether the answer (or the helper's end) is there to read now.
    bool done() const;

private:
    explicit DetachedWork(UniqueFd fd) : fd_(std::move(fd)) {}
    UniqueFd fd_;
};

}  // namespace xpart::process
