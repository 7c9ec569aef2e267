// The one reading of a wait status as a shell would report it, for every waitpid() here.
#pragma once

#include <sys/wait.h>

namespace xpart::process {

// The exit code; 128 + the signal for a killed process. Neither (a stopped or continued
// child, reported only to WUNTRACED/WCONTINUED, which no caller asks for) is 128: a failure,
// and never negative, so it cannot be mistaken for success or for a "not yet" sentinel.
inline int exit_status(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 128;
}

}  // namespace xpart::process
