#!/bin/bash
# Slurm Prolog hook (runs as root in slurmd): give each GPU job on this node its private
# directory, /run/xpart/job_<id>/user (0700, the job user's; only root can create names in
# /run/xpart, so no other user can squat it), and for jobs that ask for MPS start one CUDA MPS
# control daemon per GPU instance (MIG) or per whole GPU, as the job's user, with their pipe
# and log directories there. Install it as (or call it from) the node's Prolog in slurm.conf,
# e.g. Prolog=/etc/slurm/prolog.d/*.
#
# Which jobs get MPS: those submitted with a constraint naming the node feature "xpart-mps"
# (sbatch --constraint=xpart-mps; add Features=xpart-mps to the GPU nodes), or every GPU job
# when XPART_MPS_PROLOG=always is set in /etc/default/xpart (or /etc/default/xpart-mps).
#
# What it reads (Slurm sets these in the Prolog environment; users cannot): SLURM_JOB_ID,
# SLURM_JOB_UID, SLURM_JOB_GID, SLURM_JOB_CONSTRAINTS, and the job's partitions from
# CUDA_VISIBLE_DEVICES (MIG UUIDs, set by the xpart gres plugin) or SLURM_JOB_GPUS.
# Ranks started with `xpart launch --mps` then use these daemons; the Epilog hook stops them.
#
# Always exits 0: a failing Prolog drains the node, and a user must not be able to drain a
# node (a failed MPS start can come from what the user did in their own directory). A failed
# start is one line in slurmd's log and is recorded for the job: its `xpart launch --mps`
# ranks fail with that line, and the job's other work runs.
set -u

. "$(dirname "$(readlink -f "$0")")/../xpart-hook.sh" xpart-mps

# A job without GPUs on this node has nothing to serve.
[ -n "${CUDA_VISIBLE_DEVICES:-}${SLURM_JOB_GPUS:-}" ] || exit 0

# What an Epilog began and could not finish (slurmd killed mid-Epilog) goes first.
"$XPART" mps cleanup >/dev/null

case ",${SLURM_JOB_CONSTRAINTS:-}," in
    *,xpart-mps,*) mps=start ;;
    *) [ "${XPART_MPS_PROLOG:-}" = always ] && mps=start || mps=prepare ;;
esac
"$XPART" mps "$mps" --job-id "$SLURM_JOB_ID" --uid "$SLURM_JOB_UID" ||
  echo "xpart-mps.sh: job $SLURM_JOB_ID: MPS not started on this node (see the line above)" >&2
exit 0
