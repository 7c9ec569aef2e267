# A simulated one-GPU A100 host as two NodeNames of a private cluster, one per MIG geometry,
# wired for geometry on demand as etc/slurm.conf.reshape says (the Resume, Suspend and Reboot
# programs of etc/reshape): sourced by reshape_flow_test and `scripts/demo reshape`, after
# slurm_cluster.sh and cluster_init.
# reshape_host_start PRODUCT SMALL BIG: the host laid out as 7 x SMALL, up as $XP_NODE_small
# (Gres=gpu:SMALL:7); $XP_NODE_big (Gres=gpu:BIG:2) powered down; returns once Slurm is up.
# Needs B (build tree: xpart, xpart-sim, the gres plugin) and S (source tree: etc/reshape).
# Sets root (the host's simulated tree) and nvml (its fake NVML). job_field and wait_state
# below read and wait for the jobs.
reshape_host_start() {
  local product=$1 small=$2 big=$3
  root=$XP_DIR/host
  nvml=$root/usr/lib/xpart-sim/libnvidia-ml.so.1
  python3 - "$product" "$small" >"$XP_DIR/host.json" <<'PY'
import json, sys
product, small = sys.argv[1:]
print(json.dumps({"name": "reshape-host", "cpus": "0-7", "numa": [{"node": 0, "cpus": "0-7"}],
  "nvidia": {"driver_version": "550.54.15", "gpus": [
    {"product": product, "uuid": "GPU-a1000000-0000-4000-8000-0000000000f1", "pci_bus_id": "0000:3b:00.0",
     "minor": 0, "numa_node": 0, "mig": "enabled",
     "instances": [{"profile": small, "start": s, "uuid": "MIG-a1000000-0000-5000-8000-0000000000%02d" % s}
                   for s in range(7)]}]}}))
PY
  "$B/xpart-sim" build "$XP_DIR/host.json" "$root" >/dev/null
  # The siblings' shared feature (Slurm 24.11 resets a powered-down CLOUD node's NodeHostName).
  local XP_NODE_FEATURES="xpart_host_$XP_CLUSTER"
  cluster_node small "gpu:$small:7" XPART_ROOT="$root" XPART_NVML_LIBRARY="$nvml" XPART="$B/xpart" \
    XPART_RESHAPE_ARGS="--xpart-conf $XP_DIR/etc/xpart.conf" XPART_RESHAPE_LOG="$XP_DIR/log/reshape.log"
  cluster_cloud_node big "gpu:$big:2"
  # slurmctld loads a CLOUD node's GRES from gres.conf when it starts (read_config.c), long
  # before the node registers, and keeps only GPU records with a file (gres.c): each partition
  # of the sibling's geometry is named by files its GPU's partitions share, nvidia0 and
  # nvidiactl (MultipleFiles=: 24.11 refuses the same File= twice, and MultipleFiles wants
  # two). slurmd's discovered records replace them.
  local files="MultipleFiles=$root/dev/nvidia0,$root/dev/nvidiactl"
  XP_GRES_CONF="NodeName=$XP_NODE_big Name=gpu Type=$big $files
NodeName=$XP_NODE_big Name=gpu Type=$big $files"
  # Slurm runs the ResumeProgram with every descriptor closed: keep what it says on stderr.
  printf '#!/bin/sh\nexec %s "$@" 2>>%s <&- >&-\n' "$S/etc/reshape/xpart-resume.sh" "$XP_DIR/log/resume.log" \
    >"$XP_DIR/resume.sh"
  chmod 755 "$XP_DIR/resume.sh"
  XP_EXTRA_CONF="ResumeProgram=$XP_DIR/resume.sh
SuspendProgram=$S/etc/reshape/xpart-suspend.sh
RebootProgram=$S/etc/reshape/xpart-reboot.sh
SlurmdParameters=shutdown_on_reboot
SuspendTime=31536000
ResumeTimeout=120
SuspendTimeout=5
PrivateData=cloud"
  XP_WANT_STATES="idle idle~" cluster_start "$B/gres_plugin/.libs:$(stock_plugindir)"
}

# job_field JOB KEY: one field of `scontrol show job -o`.
job_field() { scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# wait_state JOB STATE SECONDS
wait_state() {
  local deadline=$((SECONDS + $3)) st
  while ((SECONDS < deadline)); do
    st=$(job_field "$1" JobState)
    [ "$st" = "$2" ] && return 0
    case $st in FAILED|CANCELLED|TIMEOUT|NODE_FAIL|BOOT_FAIL|OUT_OF_MEMORY) break ;; esac
    sleep 0.5
  done
  cluster_dump; cat "$XP_DIR"/log/reshape.log "$XP_DIR"/log/resume.log >&2 2>/dev/null || true
  fail "job $1: $st, want $2"
}
