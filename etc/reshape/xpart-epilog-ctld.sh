#!/bin/bash
# Slurm EpilogSlurmctld for geometry on demand (slurm.conf.reshape): a job that leaves (ended,
# cancelled while it waited, requeued, held) withdraws each reshape request it made that no
# other job waits for (`xpart reshape-request withdraw`: `scontrol cancel_reboot` of the host's
# up sibling, which Slurm undrains, and the sibling it asked for powered down again). Without
# it a cancelled job's request drains the host and reshapes it for nobody. Runs as SlurmUser on
# the controller; SLURM_CONF and XPART may come from /etc/default/xpart (or xpart-reshape).
set -u
for fd in 0 1 2; do [ -e /proc/self/fd/$fd ] || eval "exec $fd<>/dev/null"; done
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
. "$(dirname "$(readlink -f "$0")")/../xpart-hook.sh" xpart-reshape
out=$("$XPART" reshape-request withdraw 2>&1)
[ -z "$out" ] || { echo "$out" >&2; logger -t xpart-epilog-ctld -- "$out" 2>/dev/null; }
exit 0
