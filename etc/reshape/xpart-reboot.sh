#!/bin/bash
# Slurm RebootProgram for geometry on demand (slurm.conf.reshape), run by slurmd as root once
# the node it serves is idle after xpart-resume.sh's `scontrol reboot ASAP
# reason=xpart-reshape:<sibling>`. With SlurmdParameters=shutdown_on_reboot slurmd exits after
# it instead of the host rebooting. It reshapes the host's MIG GPUs, or switches its AMD GPUs'
# compute partition mode, to the sibling's Gres, if a job still waits for it (`xpart reshape --slurm-node`: refused while
# any process runs on them, verified by discovery, put back on any failure), and once this slurmd has exited starts slurmd as the sibling and
# powers this NodeName down. A refused reshape leaves the geometry as it was, starts slurmd as
# this NodeName again, powers the sibling down with the cause as its reason (Slurm
# requeues the job that waited for it) and returns this NodeName to service.
#
# A reboot that is not a reshape runs XPART_REBOOT_FALLBACK (default: none, so nothing reboots
# by surprise; set it to e.g. "systemctl reboot" where this program serves both).
# Settings, from /etc/default/xpart or /etc/default/xpart-reshape when present, else slurmd's
# environment: XPART (the xpart binary), XPART_ROOT and XPART_NVML_LIBRARY (simulated nodes), XPART_RESHAPE_ARGS
# (e.g. "--xpart-conf /etc/slurm/xpart.conf"), XPART_SLURMD_START (how slurmd is started as a
# NodeName: default "slurmd -b -N", which daemonizes), XPART_RESHAPE_LOG (a file each line is
# appended to, besides syslog; slurmd started as the sibling inherits it).
set -u

. "$(dirname "$(readlink -f "$0")")/../xpart-hook.sh" xpart-reshape
export XPART_ROOT XPART_NVML_LIBRARY 2>/dev/null
log() {
  logger -t xpart-reboot -- "$*" 2>/dev/null || true
  echo "xpart-reboot: $*" >&2
  [ -z "${XPART_RESHAPE_LOG:-}" ] || echo "$(date '+%F %T') xpart-reboot: $*" >>"$XPART_RESHAPE_LOG"
}

# slurmd is this program's grandparent (slurmd -> sh -c -> here).
slurmd_pid=$(ps -o ppid= -p "$PPID" | tr -d ' ')
[ "$(cat "/proc/$slurmd_pid/comm" 2>/dev/null)" = slurmd ] || slurmd_pid=
# The NodeName that slurmd serves when it was started as one (-N NAME: several slurmds on one
# host, as the siblings' test clusters run), else any node of this host's names.
own=
if [ -n "$slurmd_pid" ]; then
  own=$(tr '\0' '\n' <"/proc/$slurmd_pid/cmdline" | awk 'n {print; exit} $0 == "-N" {n = 1}')
fi
# This host's node that Slurm is rebooting for a reshape, and the sibling it becomes.
read -r me target < <("$XPART" reshape-request reboot-target ${own:+--node "$own"} \
  --host "$(hostname -s)" --host "$(hostname)" 2>/dev/null)
if [ -z "${target:-}" ]; then
  if [ -n "${XPART_REBOOT_FALLBACK:-}" ]; then
    log "not a reshape: running $XPART_REBOOT_FALLBACK"
    exec $XPART_REBOOT_FALLBACK
  fi
  log "no node of this host waits for an xpart reshape, and XPART_REBOOT_FALLBACK is not set: nothing done"
  exit 1
fi

# A request whose job left once the reboot was issued (too late for the EpilogSlurmctld to
# withdraw it): the host stays as it is (`wanted` exits 7 when no job waits for the target).
"$XPART" reshape-request wanted "$target" >/dev/null 2>&1
if [ $? = 7 ]; then
  log "$me -> $target withdrawn: no job waits for $target"
  next=$me down=$target reason="xpart-reshape withdrawn: no job waits for $target" refused=1
# shellcheck disable=SC2086 # XPART_RESHAPE_ARGS is a list of options
elif out=$("$XPART" reshape --slurm-node "$target" ${XPART_RESHAPE_ARGS:-} 2>&1); then
  log "$me -> $target: ${out//$'\n'/ }"
  next=$target down=$me reason="xpart-reshape: host is $target now" refused=0
else
  why=$(head -1 <<<"$out" | cut -c1-200)
  log "$me -> $target refused: $why"
  next=$me down=$target reason="xpart-reshape refused: $why" refused=1
fi

# slurmd exits when this returns; the next slurmd starts once it has gone (the same Port and
# pid file may be reused). Slurm 22.05's slurmd can miss its own shutdown signal (sent while
# its message thread is between its shutdown check and accept()) and then sleeps until the
# next RPC reaches it, minutes later: every 10 s the signal is sent again, to that same
# process only (its start time, read now, must still match).
started=
[ -z "$slurmd_pid" ] || started=$(sed 's/.*) //' "/proc/$slurmd_pid/stat" 2>/dev/null | awk '{print $20}')
setsid -f bash -c '
  pid=$1 next=$2 down=$3 reason=$4 start=$5 refused=$6 started=$7 n=0
  while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; do
    sleep 0.1
    n=$((n + 1))
    if ((n % 100 == 0)) && [ -n "$started" ] &&
      [ "$(sed "s/.*) //" "/proc/$pid/stat" 2>/dev/null | awk "{print \$20}")" = "$started" ]; then
      logger -t xpart-reboot "slurmd $pid still runs $((n / 10)) s after its reboot: SIGTERM again"
      kill -TERM "$pid" 2>/dev/null
    fi
  done
  $start "$next" || logger -t xpart-reboot "starting slurmd as $next failed"
  scontrol update nodename="$down" state=POWER_DOWN_FORCE reason="$reason" ||
    logger -t xpart-reboot "powering $down down failed"
  [ "$refused" = 1 ] || exit 0
  # Refused or withdrawn: this NodeName comes back (Slurm set it DOWN at registration, as the reboot asked
  # nextstate=DOWN); return it to service once it answers.
  for _ in $(seq 600); do
    st=$(scontrol show node -o "$next" 2>/dev/null | grep -o "State=[^ ]*")
    case $st in *NOT_RESPONDING*|*REBOOT*|*POWER*|"") sleep 0.1 ;; *) break ;; esac
  done
  scontrol update nodename="$next" state=RESUME || logger -t xpart-reboot "resuming $next failed"
' xpart-reboot-finish "$slurmd_pid" "$next" "$down" "$reason" "${XPART_SLURMD_START:-slurmd -b -N}" "$refused" "$started" \
  </dev/null >/dev/null 2>&1
[ "$refused" = 0 ]
