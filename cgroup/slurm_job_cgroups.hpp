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

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "cgroup/cgroup_kill.hpp"
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
// Entries in the order acted on (deepest first). A cgroup the job's user made (its
// cgroup.procs is not root's; v1) is removed like Slurm's levels once empty.
Result<std::vector<SweepEntry>> sweep_slurm_job(Hierarchy h, const std::string& mount, const SlurmJobQuery& q,
                                                const SweepHost& host);

// The job's directories on one hierarchy: v1 <base>/uid_*/job_<id>, v2 <scope>/job_<id> and
// <scope>/<sluid>; only those that exist. Error for a bad query or a node directory that
// cannot be listed.
Result<std::vector<std::string>> slurm_job_dirs(const MountedHierarchy& where, const SlurmJobQuery& q);

// The end of every process of job `q` in Slurm's cgroups, on every hierarchy in `where` (each
// v1 controller, and cgroup2), wherever below the job's directory it moved itself: SIGKILL
// until none is left or `wait` passes (kill_subtree). Then, on v1 hierarchies other than
// devices (sweep_slurm_job removes devices' and v2's), the job's cgroups are removed
// bottom-up once empty.
struct SlurmJobEnd {
    std::size_t killed = 0;
    std::vector<Survivor> survivors;  // alive after `wait`: the node is unsafe for the next job
    std::vector<std::string> failed;  // what could not be walked or removed, one line each
};
SlurmJobEnd end_slurm_job(const std::vector<MountedHierarchy>& where, const SlurmJobQuery& q,
                          std::chrono::milliseconds wait);

}  // namespace xpart::cgroup
