#!/bin/bash
# Slurm ResumeProgram for geometry on demand (slurm.conf.reshape). Each host has one NodeName
# per MIG geometry (same NodeHostname, its own Port, the Gres of that geometry); one of them
# is up, the others are powered down. A job that asks for a partition type the up one lacks is
# given a powered-down sibling, and Slurm runs this with that sibling's name. `xpart
# reshape-request resume` asks Slurm to give up the host's up sibling: `scontrol reboot ASAP`
# (no new job starts there, running ones finish), whose RebootProgram (xpart-reboot.sh)
# reshapes the GPUs and starts slurmd as the sibling. A host asked for another sibling already
# queues this one: it is asked for once the host has become the other (xpart-prolog-ctld.sh).
# A detached `xpart reshape-request watch` per host withdraws a request whose jobs are gone
# and asks for a queued one, should a hook that does it have been killed.
# It returns at once: Slurm waits ResumeTimeout for the sibling to register. Runs as SlurmUser
# on the controller; XPART may come from /etc/default/xpart (or xpart-reshape).
set -u
# Slurm runs it with every descriptor closed: a pipe bash opens could take fd 0, 1 or 2.
for fd in 0 1 2; do [ -e /proc/self/fd/$fd ] || eval "exec $fd<>/dev/null"; done
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin  # Slurm passes no PATH
. "$(dirname "$(readlink -f "$0")")/../xpart-hook.sh" xpart-reshape
say() { [ -z "$1" ] || { echo "$1" >&2; logger -t xpart-resume -- "$1" 2>/dev/null; }; }
if [ "${1:-}" = --watch ]; then  # each line as it comes: the watcher runs for minutes
  "$XPART" reshape-request watch "$2" 2>&1 | while IFS= read -r line; do say "$line"; done; exit 0
fi
out=$("$XPART" reshape-request resume "${1:?usage: xpart-resume.sh <nodelist>}" 2>&1)
rc=$?
say "$out"
# A watcher per host, detached (Slurm kills what the program leaves in its group): Slurm can
# kill a cancelled job's EpilogSlurmctld before it runs, so the watcher withdraws too.
for node in $(scontrol show hostnames "$1" 2>/dev/null); do
  setsid -f "$0" --watch "$node" </dev/null
done
exit $rc
