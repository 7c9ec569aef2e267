// `xpart reshape-request reboot`: the RebootProgram (etc/reshape/xpart-reboot.sh execs it), the
// host's side of reshape_request/reboot_program: the slurmd that runs it, its log, the
// reshape and slurmd's start as children, and the part that outlives slurmd.
#pragma once

#include <string>

namespace xpart::cli {

struct RebootArgs {
    std::string slurmd_start = "slurmd -b -N";  // + the NodeName; daemonizes
    std::string slurmd_unit;                    // `slurmd@%n.service`: systemd units instead
    std::string fallback;                       // a reboot that is no reshape runs this
    std::string log;                            // each line appended here too
    std::string reshape_args;                   // more options of `xpart reshape`
};

int run_reshape_reboot(const RebootArgs& args);

// `xpart reshape-request unit-start NODE`: slurmd@.service's ExecStartPre (root), through
// etc/reshape/xpart-slurmd-start.sh. Makes NODE's geometry whole, then writes the environment
// file its ExecStart reads: slurmd -b while slurmctld waits for NODE's boot. Exit 1, and no
// slurmd: the geometry not made, or slurmctld's record not read. First, when another sibling's
// unit is enabled too (a power cut in the middle of the RebootProgram's switch of units), only
// the unit of the sibling the reshape was for starts (reshape_request::decide_unit_start).
struct UnitStartArgs {
    std::string node;
    std::string slurmd_unit = "slurmd@%n.service";  // the siblings' units (XPART_SLURMD_UNIT)
    std::string log;
    std::string reshape_args;
};

int run_unit_start(const UnitStartArgs& args);

}  // namespace xpart::cli
