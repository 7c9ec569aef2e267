#!/bin/bash
# Slurm Prolog hook (runs as root in slurmd): refuse to start jobs on a node whose GPU
# partitions are no longer those slurmd registered (MIG geometry reshaped, a MIG instance
# re-made with a new UUID, an AMD compute-mode switch). It runs `xpart node check`, which
# discovers the node and compares it with the node cache slurmd's xpart plugin wrote; on a
# difference it drains the node with the first difference as the reason and exits 1, so Slurm
# requeues the job (a failing Prolog is Slurm's health-check path). Install it as (or call it
# from) the node's Prolog in slurm.conf, e.g. Prolog=/etc/slurm/prolog.d/*.
#
# The admin's fix is to register the node as it is now: restart slurmd (or scontrol
# reconfigure), then `scontrol update NodeName=<node> State=RESUME`.
#
# Settings, from /etc/default/xpart or /etc/default/xpart-node-check (the Prolog environment is
# Slurm's, not slurmd's): XPART (the xpart binary), XPART_ROOT and XPART_NVML_LIBRARY (as
# slurmd has them, for a simulated node), XPART_NODE_CHECK_ARGS (e.g. "--vendor nvidia" when
# xpart.conf says Vendors=nvidia).
set -u

. "$(dirname "$(readlink -f "$0")")/../xpart-hook.sh" xpart-node-check
export XPART_ROOT XPART_NVML_LIBRARY 2>/dev/null

# shellcheck disable=SC2086 # XPART_NODE_CHECK_ARGS is a list of options
out=$("$XPART" node check ${XPART_NODE_CHECK_ARGS:-} 2>&1)
rc=$?
[ "$rc" = 0 ] && exit 0
echo "xpart-node-check.sh: job ${SLURM_JOB_ID:-?}: $out" | tr '\n' ' ' >&2
echo >&2
# Slurm's own drain reason for a failed Prolog ("Prolog error") does not say why: set ours.
reason="xpart: $(head -1 <<<"$out" | cut -c1-200); restart slurmd or scontrol reconfigure"
node=${SLURMD_NODENAME:-$(hostname -s)}
scontrol update NodeName="$node" State=DRAIN Reason="$reason" >/dev/null 2>&1 ||
  echo "xpart-node-check.sh: scontrol could not drain $node" >&2
exit 1
