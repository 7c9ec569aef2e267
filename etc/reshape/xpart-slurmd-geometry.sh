#!/bin/bash
# ExecStartPre of slurmd@.service: makes the geometry of NodeName $1 (its Gres= in slurmctld)
# whole before slurmd registers it: `xpart reshape --slurm-node` (man xpart), nothing to do when
# the GPUs have it. Settings as xpart-reboot.sh's (/etc/default/xpart-reshape).
set -u
. "$(dirname "$(readlink -f "$0")")/../xpart-hook.sh" xpart-reshape
export XPART_ROOT XPART_NVML_LIBRARY
# shellcheck disable=SC2086 # XPART_RESHAPE_ARGS: words
exec "$XPART" reshape --slurm-node "${1:?the NodeName}" ${XPART_RESHAPE_ARGS:-}
