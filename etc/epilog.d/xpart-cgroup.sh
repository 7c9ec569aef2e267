#!/bin/bash
# Slurm Epilog hook: remove the cgroups `xpart launch --confine=rank` left behind when a
# launcher was killed with SIGKILL (kill -9, or Slurm after KillWait), and then this job's own
# Slurm cgroups on this node that those kept busy (slurmstepd's rmdir of a task cgroup with a
# child fails, and so do the step's, the job's and the user's above it). Bottom-up, each only
# when it holds no process; other jobs' cgroups are never touched. Runs for every job: with
# nothing left over it is a no-op. On cgroup v1 (devices controller) and v2.
#
# Reads SLURM_JOB_ID, SLURMD_NODENAME and SLURM_JOB_SLUID (set by slurmd in the Epilog
# environment; the node name picks slurm_<node>, the cgroup prefix of multiple-slurmd builds
# such as Debian's; Slurm 26.05 names a job's v2 cgroup by its SLUID).
# XPART, the xpart program, may be set in /etc/default/xpart (default: xpart on PATH).
# Always exits 0: what stays is an empty cgroup or one a live process holds; neither harms the
# next job, and a non-zero Epilog would drain the node. What it did goes to slurmd's log.
set -u

[ -r /etc/default/xpart ] && . /etc/default/xpart
XPART=${XPART:-$(command -v xpart || echo /usr/local/bin/xpart)}

"$XPART" cgroup sweep --job "$SLURM_JOB_ID" ${SLURMD_NODENAME:+--node "$SLURMD_NODENAME"} \
  ${SLURM_JOB_SLUID:+--sluid "$SLURM_JOB_SLUID"} ||
  echo "xpart-cgroup.sh: sweep of job $SLURM_JOB_ID incomplete" >&2
exit 0
