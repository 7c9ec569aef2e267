#!/bin/bash
# Slurm Epilog hook: end every process the job left in its Slurm cgroups, on every hierarchy
# (each v1 controller, and cgroup2), wherever below the job's directory it moved itself (on v1
# a job's user can make cgroups there before xpart's SPANK plugin takes the directories back);
# then remove the cgroups `xpart launch --confine=rank` left behind when a
# launcher was killed with SIGKILL (kill -9, or Slurm after KillWait), and then this job's own
# Slurm cgroups on this node that those kept busy (slurmstepd's rmdir of a task cgroup with a
# child fails, and so do the step's, the job's and the user's above it). Bottom-up, each only
# when it holds no process; other jobs' cgroups are never touched. Runs for every job: with
# nothing left over it is a no-op. On cgroup v1 (devices controller) and v2.
#
# Reads SLURM_JOB_ID, SLURMD_NODENAME, SLURM_JOB_SLUID and the job's GPUs (CUDA_VISIBLE_DEVICES,
# else SLURM_JOB_GPUS: only named in the line about a survivor) (set by slurmd in the Epilog
# environment; the node name picks slurm_<node>, the cgroup prefix of multiple-slurmd builds
# such as Debian's; Slurm 26.05 names a job's v2 cgroup by its SLUID).
# XPART, the xpart program, may be set in /etc/default/xpart or /etc/default/xpart-cgroup
# (xpart-hook.sh finds it otherwise).
# Exits non-zero only when a process of the job outlives SIGKILL (xpart exits 5): it keeps the
# job's device rules, so the node is not safe for the next job, and Slurm drains it ("Epilog
# error") with xpart's line naming the pid, the cgroup and the job's GPUs in slurmd's log.
# Anything else (an empty cgroup that stays) harms no job: exit 0. What it did goes to
# slurmd's log.
set -u

. "$(dirname "$(readlink -f "$0")")/../xpart-hook.sh" xpart-cgroup

gpus=${CUDA_VISIBLE_DEVICES:-${SLURM_JOB_GPUS:-}}
"$XPART" cgroup sweep --job "$SLURM_JOB_ID" ${SLURMD_NODENAME:+--node "$SLURMD_NODENAME"} \
  ${SLURM_JOB_SLUID:+--sluid "$SLURM_JOB_SLUID"} ${gpus:+--gpus "$gpus"}
case $? in
  0) ;;
  5) exit 1 ;;
  *) echo "xpart-cgroup.sh: sweep of job $SLURM_JOB_ID incomplete" >&2 ;;
esac
exit 0
