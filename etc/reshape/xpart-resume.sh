#!/bin/bash
# Slurm ResumeProgram for geometry on demand (slurm.conf.reshape). Each host has one NodeName
# per MIG geometry (same NodeHostname, its own Port, the Gres of that geometry); one of them
# is up, the others are powered down. A job that asks for a partition type the up one lacks is
# given a powered-down sibling, and Slurm runs this with that sibling's name. It asks Slurm to
# give up the host's active sibling: `scontrol reboot ASAP` (no new job starts there, running
# ones finish), whose RebootProgram (xpart-reboot.sh) reshapes the GPUs and starts slurmd as
# the sibling. It returns at once: Slurm waits ResumeTimeout for the sibling to register.
# Runs as SlurmUser on the controller; needs nothing but scontrol.
set -u
# Slurm runs it with every descriptor closed: a pipe bash opens could take fd 0, 1 or 2.
for fd in 0 1 2; do [ -e /proc/self/fd/$fd ] || eval "exec $fd<>/dev/null"; done
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin  # Slurm passes no PATH

log() { logger -t xpart-resume -- "$*" 2>/dev/null || true; echo "xpart-resume: $*" >&2; }

# "name host state group" for every node of the cluster, from `scontrol show node -o`. A
# host's siblings share a feature xpart_host_<host> (Slurm 24.11 resets a powered-down CLOUD
# node's NodeHostName to its NodeName); without one, NodeHostName groups them (22.05).
nodes=$(scontrol show node -o 2>/dev/null | awk '{
  name = host = state = group = ""
  for (i = 1; i <= NF; i++) {
    if ($i ~ /^NodeName=/) name = substr($i, 10)
    else if ($i ~ /^NodeHostName=/) host = substr($i, 14)
    else if ($i ~ /^State=/) state = substr($i, 7)
    else if ($i ~ /^AvailableFeatures=/) {
      n = split(substr($i, 19), f, ",")
      for (j = 1; j <= n; j++) if (f[j] ~ /^xpart_host_/) group = f[j]
    }
  }
  print name, host, state, (group != "" ? group : "host:" host)
}') || { log "scontrol show node failed"; exit 1; }

rc=0
for target in $(scontrol show hostnames "${1:?usage: xpart-resume.sh <nodelist>}"); do
  group=$(awk -v t="$target" '$1 == t {print $4}' <<<"$nodes")
  # The sibling that is up: same group, not this one, not powered down or going down.
  active=$(awk -v t="$target" -v g="$group" \
    '$4 == g && $1 != t && $3 !~ /POWER(ED|ING)_DOWN|POWER_DOWN/ {print $1; exit}' <<<"$nodes")
  if [ -z "$group" ]; then
    log "$target: no such node"; rc=1
  elif [ -z "$active" ]; then
    # Nothing to give up: the host's slurmd is down (a host off, a slurmd that did not start).
    # Slurm marks $target DOWN after ResumeTimeout and requeues its job.
    log "$target: no sibling of $group is up to reshape from"; rc=1
  elif scontrol reboot ASAP nextstate=DOWN reason="xpart-reshape:$target" "$active"; then
    log "$target: asked $active ($group) to reshape"
  else
    log "$target: scontrol reboot $active failed"; rc=1
  fi
done
exit $rc
