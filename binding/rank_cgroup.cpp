#include "binding/rank_cgroup.hpp"

#include <unistd.h>

#include <iostream>

#include "cgroup/layout.hpp"
#include "cgroup/rank_leftover.hpp"

namespace xpart::binding {

cgroup::DeviceRuleSet rank_rule_set(const Node& node, const Partition& mine) {
    cgroup::DeviceRuleSet set;
    set.policy = cgroup::DevicePolicy::DenyManaged;
    for (const auto& r : cgroup::partition_rules({&mine})) set.add_allow(r);
    set.managed = cgroup::node_managed_rules(node);
    return set;
}

Result<RankCgroup> RankCgroup::create(const Node& node, const Partition& mine, unsigned rank) {
    // The name the sweep recognises: a SIGKILLed launcher's cgroup is found by it.
    const std::string name = cgroup::rank_cgroup_name(rank, getpid());
    // The live system's cgroups, whatever root prefix discovery read the node from.
    auto layout = cgroup::detect_cgroup_layout(RootFs("/"));
    if (!layout) return Error{"--confine=rank: " + layout.error().message};
    const cgroup::Hierarchy h = layout->preferred();
    // Siblings left by launchers killed with SIGKILL (they could not remove their own):
    // removed here when empty and their launcher is gone. Best effort: a sibling we cannot
    // remove must not stop this rank, and the Epilog's `xpart cgroup sweep --job` retries.
    (void)cgroup::sweep_rank_leftovers(h, layout->own(h), 1, cgroup::SweepHost{});
    auto cg = cgroup::DeviceCgroup::create(h, layout->own(h), name);
    // On cgroup v2 Slurm's job cgroups stay root's and device programs need root: a user's
    // launcher cannot confine; slurmstepd can, through the SPANK plugin.
    const std::string v2_hint =
        h == cgroup::Hierarchy::V2 && ::geteuid() != 0
            ? " (cgroup v2: only root confines; launch the ranks with `srun --xpart-bind=rank "
              "--xpart-confine`, which needs xpart.so in the node's plugstack.conf)"
            : "";
    if (!cg) return Error{"--confine=rank: " + cg.error().message + v2_hint};
    RankCgroup made(std::move(*cg));
    if (auto s = made.cg_->apply(rank_rule_set(node, mine)); !s)
        return Error{"--confine=rank: " + s.error().message + v2_hint};  // `made` removes the cgroup
    return Result<RankCgroup>(std::move(made));
}

Status RankCgroup::enter(pid_t pid) const {
    if (auto s = cg_->move(pid ? pid : getpid()); !s) return Error{"--confine=rank: " + s.error().message};
    return ok_status();
}

Status RankCgroup::remove() {
    if (!cg_) return ok_status();
    Status s = cg_->remove();
    cg_.reset();
    if (!s) return Error{"--confine=rank: " + s.error().message};
    return ok_status();
}

RankCgroup::~RankCgroup() {
    if (auto s = remove(); !s) std::cerr << "xpart launch: " << s.error().message << "\n";
}

}  // namespace xpart::binding
