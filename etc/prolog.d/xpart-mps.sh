#!/bin/bash
# Slurm Prolog hook: start one CUDA MPS control daemon per GPU instance (MIG) or per whole GPU
# of the job on this node, pre-started for the job's user. Install it as (or call it from) the
# node's Prolog in slurm.conf, e.g. Prolog=/etc/slurm/prolog.d/*.
#
# Which jobs get MPS: those submitted with a constraint naming the node feature "xpart-mps"
# (sbatch --constraint=xpart-mps; add Features=xpart-mps to the GPU nodes), or every GPU job
# when XPART_MPS_PROLOG=always is set in /etc/default/xpart-mps.
#
# What it reads (Slurm sets these in the Prolog environment): SLURM_JOB_ID, SLURM_JOB_UID,
# SLURM_JOB_GID, SLURM_JOB_CONSTRAINTS, and the job's partitions from CUDA_VISIBLE_DEVICES
# (MIG UUIDs, set by the xpart gres plugin) or SLURM_JOB_GPUS.
# Ranks started with `xpart launch --mps` then use these daemons; the Epilog hook stops them.
# A failure exits non-zero: Slurm then drains the node and requeues the job, and the reason
# (one line from xpart) is in the slurmd log.
set -u

[ -r /etc/default/xpart-mps ] && . /etc/default/xpart-mps
XPART=${XPART:-$(command -v xpart || echo /usr/local/bin/xpart)}

case ",${SLURM_JOB_CONSTRAINTS:-}," in
    *,xpart-mps,*) ;;
    *) [ "${XPART_MPS_PROLOG:-}" = always ] || exit 0 ;;
esac
# A job without GPUs on this node has nothing to serve.
[ -n "${CUDA_VISIBLE_DEVICES:-}${SLURM_JOB_GPUS:-}" ] || exit 0

# Left-overs of a node crash (daemons gone, directories still there) go first.
"$XPART" mps cleanup >/dev/null
exec "$XPART" mps start --job-id "$SLURM_JOB_ID" --uid "$SLURM_JOB_UID"
