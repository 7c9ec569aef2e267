#!/bin/bash
# ExecStartPre of slurmd@.service (root): `xpart reshape-request unit-start` (man xpart) makes
# the geometry of NodeName $1 whole before slurmd registers it (nothing to do when the GPUs have
# it), and tells the unit whether this start is a reboot's (slurmd -b). Settings as
# xpart-reboot.sh's (/etc/default/xpart-reshape).
set -u
. "$(dirname "$(readlink -f "$0")")/../xpart-hook.sh" xpart-reshape
export XPART_ROOT XPART_NVML_LIBRARY XPART_RESHAPE_ARGS XPART_RESHAPE_LOG XPART_SLURMD_UNIT
exec "$XPART" reshape-request unit-start "${1:?the NodeName}"
