#!/bin/bash
# Slurm PrologSlurmctld for geometry on demand (slurm.conf.reshape). A job that Slurm gave a
# powered-down sibling stays CONFIGURING until that sibling is up, and slurmctld looks at such
# jobs again only in its periodic job check (every 30 s; Slurm 24.11 makes srun wait for it
# too). A PrologSlurmctld ending is the other thing that looks: this one returns once the
# job's nodes have registered (`xpart reshape-request wait`: polls backing off to one per 2 s;
# a job whose nodes are up costs one scontrol call), once the job no longer waits, or after
# XPART_PROLOG_WAIT seconds (default 600, ResumeTimeout's). Slurm kills it when the job is
# cancelled. It always exits 0: what happens to a sibling that does not come up is Slurm's to
# decide (ResumeTimeout). Runs as SlurmUser on the controller; SLURM_CONF and XPART may come
# from /etc/default/xpart or /etc/default/xpart-reshape (Slurm passes the program none).
set -u
# Slurm may run it with descriptors closed: a pipe bash opens could take fd 0, 1 or 2.
for fd in 0 1 2; do [ -e /proc/self/fd/$fd ] || eval "exec $fd<>/dev/null"; done
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
. "$(dirname "$(readlink -f "$0")")/../xpart-hook.sh" xpart-reshape
out=$("$XPART" reshape-request wait --timeout "${XPART_PROLOG_WAIT:-600}" 2>&1)
[ -z "$out" ] || { echo "$out" >&2; logger -t xpart-prolog-ctld -- "$out" 2>/dev/null; }
exit 0
