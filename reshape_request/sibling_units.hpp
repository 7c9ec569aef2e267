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
        Start,      // this NodeName's slurmd runs; `disable` the units a cut left enabled
        StandDown,  // the reshape away from this NodeName had made the next one's geometry when the power
                    // went: this unit is disabled and stopped, the node powered down with `reason`
        Refuse,     // units enabled together for no reshape between them: none starts, the node is DOWN
                    // with `reason`, the units left as they are for the admin
    } what = Start;
    std::vector<std::string> disable;  // NodeNames whose units to disable
    std::string reason;
};

// What `node`'s unit does at its start, given the other siblings whose units are enabled too.
// Slurmctld's record says which reshape was under way: the node that gave the host up is still
// REBOOT_ISSUED (or REBOOT_REQUESTED) with Reason=xpart-reshape:<target>, its RebootProgram
// having died with the host. Pure.
UnitStart decide_unit_start(const std::vector<SlurmNode>& cluster, const std::string& node,
                            const std::vector<std::string>& enabled_siblings);

}  // namespace xpart::reshape_request
