// Every exit status of the `xpart` command, in one table: one number, one meaning, whichever
// subcommand returns it (man/xpart.1, EXIT STATUS, lists the same; `launch` returns its
// program's own status, CLI11 its 100-114 for command-line errors).
#pragma once

namespace xpart::cli {

enum ExitStatus : int {
    kExitOk = 0,
    kExitError = 1,         // one line on standard error
    kExitNothingToRun = 2,  // no subcommand ran
    kExitDifferences = 3,   // discover --check, node check: one line per difference
    kExitIncomplete = 4,    // discover: GPUs not discovered or not usable (before 3)
    kExitJobSurvives = 5,   // cgroup sweep --job: a process of the job outlived SIGKILL
    kExitRebootNeeded = 6,  // reshape --allow-reboot-class: written; reboot, then reshape again
    kExitNotWanted = 7,     // reshape-request wanted: no job waits for the sibling; reboot-target: no reshape
};

}  // namespace xpart::cli
