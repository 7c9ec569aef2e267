// slurmctld's nodes as the reshape flow reads them: `scontrol show node -o`, one line per node.
// A host's siblings (one NodeName per geometry) share a group: the feature xpart_host_<host>
// (Slurm 24.11 resets a powered-down CLOUD node's NodeHostName to its NodeName), else their
// NodeHostName (22.05). The reason protocol: the host's up sibling that gives the host up for
// another carries Reason=xpart-reshape:<that sibling> (xpart-resume.sh's `scontrol reboot`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace xpart::reshape_request {

struct SlurmNode {
    std::string name;
    std::string group;                // "xpart_host_gpu1", or "host:gpu1"
    std::vector<std::string> state;   // State= words: IDLE, DRAIN, REBOOT_REQUESTED, POWERING_UP, ...
    std::string host;                 // NodeHostName (24.11: a powered-down CLOUD node's is its NodeName)
    std::string reshape_target;       // from Reason=xpart-reshape:<target>; "" for any other reason
    std::string reason;               // Reason=, without its " [user@time]"

    bool has(std::string_view word) const;
    // Powered down or on its way down (POWERED_DOWN, POWER_DOWN, POWERING_DOWN): not the
    // host's up sibling, and not going to register.
    bool powered_down() const;
    // Not registered yet: powering up, not responding, or powered down.
    bool waiting_to_register() const;
    // DOWN by slurmctld itself because it did not register within ResumeTimeout after a power up.
    bool resume_timed_out() const;
};

// The nodes of `scontrol show node -o` text; lines that are not a node (scontrol's errors) are
// left out.
std::vector<SlurmNode> parse_nodes(std::string_view text);

}  // namespace xpart::reshape_request
