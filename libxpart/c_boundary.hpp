// Slurm calls the plugins' entry points from C: an exception crossing that boundary would
// terminate slurmd or slurmstepd. Each entry point runs its body inside run_guarded(), which
// logs what escaped and returns the entry point's failure value instead.
#pragma once

#include <cstdio>
#include <exception>
#include <utility>

namespace xpart {

// `log(line)` gets "<where>: internal error[: <what>]"; the plugin adds its own prefix. The
// line is built without allocating: the exception may be std::bad_alloc.
template <class F, class Log>
auto run_guarded(const char* where, F&& body, decltype(body()) on_error, Log&& log) -> decltype(body()) {
    char line[1024];
    try {
        return std::forward<F>(body)();
    } catch (const std::exception& e) {
        std::snprintf(line, sizeof line, "%s: internal error: %s", where, e.what());
    } catch (...) {
        std::snprintf(line, sizeof line, "%s: internal error", where);
    }
    log(static_cast<const char*>(line));
    return on_error;
}

}  // namespace xpart
