// --confine=rank: each rank in its own child cgroup that can open only its own partition's
// device files. The child is made under the cgroup the launcher runs in (under srun: the
// step's or task's cgroup, so Slurm's own limits still apply on top), on the hierarchy
// Slurm 22.05 uses: the v1 devices controller where mounted, else cgroup v2.
//
// Policy: DenyManaged with the node's managed set (every partition device file discovery
// found, and the files it withheld such as the MIG monitor cap) and the rank's own partition
// files allowed, shared ones (nvidiactl, nvidia-uvm, /dev/kfd) included. Everything else stays as the parent allows it: a
// rank must still reach /dev/null, ttys and whatever the site's own devices are, which a
// DenyAll set would have to enumerate.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "cgroup/device_cgroup.hpp"
#include "libxpart/node.hpp"
#include "libxpart/result.hpp"

namespace xpart::binding {

// The rule set of one confined rank: `mine` allowed, every other partition of `node` denied.
cgroup::DeviceRuleSet rank_rule_set(const Node& node, const Partition& mine);

// The child cgroup of one rank, removed when this object goes (the supervising launcher
// outlives the program, so the rank's cgroup ends with the rank).
class RankCgroup {
public:
    // Creates <own cgroup>/<name> on the preferred hierarchy and applies rank_rule_set. On
    // any failure nothing is left behind and the error names the cgroup and the step.
    // The name is cgroup::rank_cgroup_name(rank, this launcher's pid): a launcher killed with
    // SIGKILL leaves the cgroup behind, and the sweep (cgroup/rank_leftover.hpp) finds it by
    // that name. Leftover siblings are swept first.
    static Result<RankCgroup> create(const Node& node, const Partition& mine, unsigned rank);

    RankCgroup(RankCgroup&& o) noexcept : cg_(std::move(o.cg_)) { o.cg_.reset(); }
    RankCgroup& operator=(RankCgroup&&) = delete;
    RankCgroup(const RankCgroup&) = delete;
    RankCgroup& operator=(const RankCgroup&) = delete;
    ~RankCgroup();

    const std::string& path() const { return cg_->path(); }
    // Moves `pid` (0: this process) into the cgroup. The supervised child calls it between
    // fork and exec, so the launcher itself never enters and the program never runs outside.
    Status enter(pid_t pid = 0) const;
    // Removes the cgroup (once the program ended; a process it left running keeps the
    // cgroup busy and turns into an error); the destructor does it otherwise.
    Status remove();

private:
    explicit RankCgroup(cgroup::DeviceCgroup cg) : cg_(std::move(cg)) {}
    std::optional<cgroup::DeviceCgroup> cg_;
};

}  // namespace xpart::binding
