// One Slurm job's cgroups on this node, for the Epilog: its leftover rank cgroups removed,
// then the job's own step/task/job cgroups that those kept busy, bottom-up, each only when
// it holds no process and no child cgroup. Never a directory of another job.
//
// Where Slurm 22.05 puts them (src/plugins/cgroup/v1/xcgroup.c xcgroup_create_hierarchy and
// cgroup_v1.c _handle_task_cgroup; cgroup/v2/cgroup_v2.c _set_int_cg_ns and
// cgroup_p_step_create), <node> the slurmd's NodeName:
//   v1: <controller mount>/slurm_<node>/uid_<uid>/job_<id>/step_<step>/task_<k>
//       ("slurm" instead of "slurm_<node>" when slurmd is built without multiple-slurmd
//       support; Debian's is built with it)
//   v2: <mount>/system.slice/<node>_slurmstepd.scope/job_<id>/step_<step>/{slurm,user/task_<k>}
//       ("slurmstepd.scope" without multiple-slurmd); from Slurm 26.05 the job level is named
//       by the job's SLUID (cgroup_v2.c cgroup_p_step_create: print_sluid, "s" and 13
//       Crockford base-32 characters) unless cgroup.conf sets CgroupJobIdPaths=yes
// <step> is a number or batch, extern, interactive. slurmstepd rmdirs task_*, then the step,
// then (best effort) the job and the uid cgroup when the step ends; a child it does not know
// makes the first rmdir fail and everything above it stays.
//
// Slurm serialises step creation and removal with flock(LOCK_EX) on a directory (v1: the
// controller's mount, its root cgroup; v2: the slurmstepd scope); the sweep holds the same
// lock, so it never removes a uid cgroup between a starting step's mkdirs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cgroup/layout.hpp"
#include "cgroup/rank_leftover.hpp"
#include "libxpart/result.hpp"

namespace xpart::cgroup {

struct SlurmJobQuery {
    std::string job_id;  // decimal job id (SLURM_JOB_ID)
    std::string node;    // the slurmd's NodeName (SLURMD_NODENAME); empty: a single-slurmd build
    std::string sluid;   // SLURM_JOB_SLUID (Slurm 26.05 and later); empty: the series has none
};
// Error (naming the option and value) for a job id that is not decimal, a node name that
// could leave its directory, or a SLUID not in Slurm's printed form.
Status check_query(const SlurmJobQuery& q);

// The directory Slurm's cgroups of this node hang from on one hierarchy, and the one it locks.
struct SlurmNodeCgroups {
    std::string base;       // v1: <mount>/slurm_<node>; v2: <mount>/system.slice/<node>_slurmstepd.scope
    std::string lock_dir;   // v1: <mount>; v2: the scope
};
SlurmNodeCgroups slurm_node_cgroups(Hierarchy h, const std::string& mount, const std::string& node);

// Is `name` a level Slurm creates below job_<id>: step_*, task_*, and on v2 slurm and user?
bool is_slurm_job_level(std::string_view name);

// Sweeps job `q` on one hierarchy mounted at `mount`; no job directory there: no entries.
// Entries in the order acted on (deepest first).
Result<std::vector<SweepEntry>> sweep_slurm_job(Hierarchy h, const std::string& mount, const SlurmJobQuery& q,
                                                const SweepHost& host);

}  // namespace xpart::cgroup
