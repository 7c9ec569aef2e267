// slurmd@.service's start (unit-start, root) on a host whose siblings' slurmds are systemd
// units: is this NodeName's unit the one to run? One is enabled at a time, except for a moment
// of each reshape (the RebootProgram enables the next sibling's unit, then disables the old
// one's): a power cut there leaves both enabled, and the boot starts both.
#pragma once

#include <string>
#include <vector>

#include "reshape_request/slurm_nodes.hpp"

namespace xpart::reshape_request {

// The other NodeNames of `node`'s host (its group), in the cluster's order.
std::vector<std::string> siblings_of(const std::vector<SlurmNode>& cluster, const std::string& node);

struct UnitStart {
    enum What {
        Start,      // this NodeName's slurmd runs
        StandDown,  // the reshape away from this NodeName had made the next one's geometry when the power
                    // went: this unit is disabled and stopped, the node powered down with `reason`
        Refuse,     // units enabled together for no reshape between them: none starts, the node is DOWN
                    // with `reason`, the units left as they are for the admin
        StandAside,  // this unit is not enabled and another sibling's is (a start by hand, a restart
                     // of a unit the RebootProgram left): it stops, slurmctld is not told anything
    } what = Start;
    std::vector<std::string> disable;     // Start: units a cut left enabled (NodeNames)
    std::vector<std::string> power_down;  // Start: the siblings that gave the host up for this one
    std::string reason;                   // why, for each node powered down or set DOWN
};

// What `node`'s unit does at its start, given whether it is enabled itself and the other
// siblings whose units are enabled.
// Slurmctld's record says which reshape was under way: the node that gave the host up is
// REBOOT_ISSUED with Reason=xpart-reshape:<target> until the RebootProgram powers it down, just
// after it starts the target's unit; when the host lost power before that, the target's start
// powers it down (else it would wait for a reboot that never comes, DOWN at ResumeTimeout).
// Pure.
UnitStart decide_unit_start(const std::vector<SlurmNode>& cluster, const std::string& node, bool enabled,
                            const std::vector<std::string>& enabled_siblings);

}  // namespace xpart::reshape_request
