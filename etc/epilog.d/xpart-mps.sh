#!/bin/bash
# Slurm Epilog hook: quit the job's CUDA MPS control daemons and remove their directories,
# whether the Prolog started them (`xpart mps start`) or the job's ranks did
# (`xpart launch --mps`, when a killed rank could not be the last one out). Then remove stale
# directories of jobs whose daemons are all gone. Runs for every job: with no daemons it is a
# no-op. Install it as (or call it from) the node's Epilog in slurm.conf.
#
# Reads SLURM_JOB_ID and SLURM_JOB_UID (set by Slurm in the Epilog environment).
# Exit non-zero only when a daemon could not be stopped: Slurm then drains the node, which is
# right, since a leftover daemon would serve the next job with the previous user's server.
set -u

[ -r /etc/default/xpart-mps ] && . /etc/default/xpart-mps
XPART=${XPART:-$(command -v xpart || echo /usr/local/bin/xpart)}

status=0
"$XPART" mps stop --job-id "$SLURM_JOB_ID" --uid "$SLURM_JOB_UID" || status=1
"$XPART" mps cleanup >/dev/null
exit $status
