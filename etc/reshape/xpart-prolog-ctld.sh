#!/bin/bash
# Slurm PrologSlurmctld for geometry on demand (slurm.conf.reshape). A job that Slurm gave a
# powered-down sibling stays CONFIGURING until that sibling is up, and slurmctld looks at such
# jobs again only in its periodic job check (every 30 s; Slurm 24.11 makes srun wait for it
# too). A PrologSlurmctld ending is the other thing that looks: this one returns once the
# job's nodes are up, so the job starts the moment the host has reshaped and slurmd has
# registered as the sibling. Other jobs (nodes up already) return after one scontrol call.
# It always exits 0 and never waits past the job leaving CONFIGURING (a refused reshape
# requeues it) or XPART_PROLOG_WAIT seconds (default 600, ResumeTimeout's): what happens to
# a sibling that does not come up is Slurm's to decide (ResumeTimeout).
# Runs as SlurmUser on the controller; needs nothing but scontrol (which reads the default
# slurm.conf, or SLURM_CONF from /etc/default/xpart-reshape: Slurm passes the program none).
set -u
# Slurm may run it with descriptors closed: a pipe bash opens could take fd 0, 1 or 2.
for fd in 0 1 2; do [ -e /proc/self/fd/$fd ] || eval "exec $fd<>/dev/null"; done
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
[ -r /etc/default/xpart-reshape ] && . /etc/default/xpart-reshape

job=${SLURM_JOB_ID:-} nodes=${SLURM_JOB_NODELIST:-}
[ -n "$job" ] && [ -n "$nodes" ] || exit 0
deadline=$((SECONDS + ${XPART_PROLOG_WAIT:-600}))
while ((SECONDS < deadline)); do
  states=$(scontrol show node -o "$nodes" 2>/dev/null | grep -o 'State=[^ ]*') || exit 0
  case $states in
    *POWER*|*NOT_RESPONDING*) ;;  # powered down, powering up: not registered yet
    *) exit 0 ;;
  esac
  case $(scontrol show job -o "$job" 2>/dev/null | grep -o 'JobState=[^ ]*') in
    JobState=CONFIGURING) sleep 0.2 ;;
    *) exit 0 ;;  # requeued (a refused reshape), cancelled, or started after all
  esac
done
exit 0
