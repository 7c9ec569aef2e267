#!/bin/bash
# Slurm Epilog hook (runs as root in slurmd): end the job's CUDA MPS control daemons and
# remove the job's directory /run/xpart/job_<id>, whether the Prolog started the daemons
# (`xpart mps start`), slurmstepd did (`--xpart-mps`) or the job's ranks did (`xpart launch
# --mps`, when a killed rank could not be the last one out). Runs for every job: with nothing
# there it is a no-op. Install it as (or call it from) the node's Epilog in slurm.conf.
#
# Every daemon root started runs in a cgroup root made for it (xpart/job_<id>/... on the v1
# devices hierarchy where mounted, else on cgroup v2); ending the job ends those cgroups,
# whatever the user did to the job's directory. The ranks' own daemons are stopped by a child that became the job's user. Root
# never reads /tmp. Reads SLURM_JOB_ID (set by slurmd; users cannot).
# One line in slurmd's log says which daemons it ended and what it could not. Exits non-zero
# only when something root started survives SIGKILL: the node is then unsafe for the next
# job, and Slurm drains it ("Epilog error") with that line in slurmd's log.
set -u

. "$(dirname "$(readlink -f "$0")")/../xpart-hook.sh" xpart-mps

status=0
"$XPART" mps stop --job-id "$SLURM_JOB_ID" || status=1
"$XPART" mps cleanup >/dev/null
exit $status
