#!/bin/sh
# Slurm SuspendProgram for geometry on demand (slurm.conf.reshape). A sibling NodeName is
# powered down by xpart-reboot.sh once its host has become another sibling: the host itself
# stays on, so there is nothing to do. Slurm requires the program for power saving.
exit 0
