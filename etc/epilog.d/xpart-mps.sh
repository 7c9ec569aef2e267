#!/bin/bash
# Slurm Epilog hook (runs as root in slurmd): stop the job's CUDA MPS control daemons and
# remove the job's directory /run/xpart/job_<id>, whether the Prolog started the daemons
# (`xpart mps start`) or the job's ranks did (`xpart launch --mps`, when a killed rank could
# not be the last one out). Runs for every job: with nothing there it is a no-op. Install it
# as (or call it from) the node's Epilog in slurm.conf.
#
# Root signals only daemons it recorded itself and that are still the same processes (pid,
# start time, uid); the ranks' daemons are stopped by a child that became the job's user.
# Reads SLURM_JOB_ID, SLURM_JOB_UID and SLURM_JOB_GID (set by slurmd; users cannot).
# Exits non-zero only when a daemon root started survives SIGKILL: the node is then unsafe
# for the next job and draining it is right. Whatever a user did is one line in slurmd's log.
set -u

[ -r /etc/default/xpart-mps ] && . /etc/default/xpart-mps
XPART=${XPART:-$(command -v xpart || echo /usr/local/bin/xpart)}

status=0
"$XPART" mps stop --job-id "$SLURM_JOB_ID" || status=1
"$XPART" mps cleanup >/dev/null
exit $status
