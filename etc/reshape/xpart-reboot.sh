#!/bin/bash
# Slurm RebootProgram for geometry on demand (slurm.conf.reshape), run by slurmd as root once
# the node it serves is idle after xpart-resume.sh's `scontrol reboot ASAP
# reason=xpart-reshape:<sibling>`; with SlurmdParameters=shutdown_on_reboot slurmd exits after
# it. `xpart reshape-request reboot` (man xpart) reshapes the host for the sibling if a job
# still waits for it, and once this slurmd has exited starts slurmd as the NodeName the host is
# then and powers the other down; a reboot that is no reshape runs XPART_REBOOT_FALLBACK.
# Settings, from /etc/default/xpart or /etc/default/xpart-reshape when present, else slurmd's
# environment: XPART, XPART_ROOT and XPART_NVML_LIBRARY (simulated nodes), XPART_RESHAPE_ARGS,
# XPART_SLURMD_START or XPART_SLURMD_UNIT, XPART_REBOOT_FALLBACK, XPART_RESHAPE_LOG.
set -u
. "$(dirname "$(readlink -f "$0")")/../xpart-hook.sh" xpart-reshape
export XPART_ROOT XPART_NVML_LIBRARY XPART_RESHAPE_ARGS XPART_SLURMD_START XPART_SLURMD_UNIT XPART_REBOOT_FALLBACK XPART_RESHAPE_LOG
exec "$XPART" reshape-request reboot
