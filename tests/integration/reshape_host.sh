# Simulated one-GPU hosts, each as one NodeName per geometry of a private cluster, wired for
# geometry on demand as etc/slurm.conf.reshape says (the Resume, Suspend and Reboot programs of
# etc/reshape): sourced by the reshape tests and `scripts/demo reshape`, after slurm_cluster.sh
# and cluster_init. Needs B (build tree: xpart, xpart-sim, the gres plugin) and S (source
# tree: etc/reshape). job_field and wait_state below read and wait for the jobs.
# XP_RESUME_TIMEOUT: slurm.conf's ResumeTimeout (120 s: a reshape in a loaded node VM fits).

. "$(dirname "${BASH_SOURCE[0]}")/slurmd_units.sh"
# On a systemd node with the packaged unit, each NodeName's slurmd is a slurmd@ instance, as
# on a site's node (the RebootProgram switches them); else slurmd runs as a child of the test.
XP_SLURMD_UNITS=
XP_UNIT_ENV=()
slurmd_units_wanted && XP_SLURMD_UNITS=1 XP_UNIT_ENV=(XPART_SLURMD_UNIT=slurmd@%n.service)

# reshape_host_start PRODUCT SMALL BIG: an A100 host laid out as 7 x SMALL, up as
# $XP_NODE_small (Gres=gpu:SMALL:7); $XP_NODE_big (Gres=gpu:BIG:2) powered down; returns once
# Slurm is up. Sets root (the host's simulated tree) and nvml (its fake NVML).
reshape_host_start() {
  reshape_mig_host "" "$@"
  reshape_cluster_start
}

# reshape_mig_host TAG PRODUCT SMALL BIG: the host in $XP_DIR/host$TAG, as the NodeNames
# ${TAG}small and ${TAG}big (XP_NODE_<TAG>small, ...). Sets root and nvml.
reshape_mig_host() {
  local tag=$1 product=$2 small=$3 big=$4
  root=$XP_DIR/host$tag
  nvml=$root/usr/lib/xpart-sim/libnvidia-ml.so.1
  python3 - "$product" "$small" >"$XP_DIR/host$tag.json" <<'PY'
import json, sys
product, small = sys.argv[1:]
print(json.dumps({"name": "reshape-host", "cpus": "0-7", "numa": [{"node": 0, "cpus": "0-7"}],
  "nvidia": {"driver_version": "550.54.15", "gpus": [
    {"product": product, "uuid": "GPU-a1000000-0000-4000-8000-0000000000f1", "pci_bus_id": "0000:3b:00.0",
     "minor": 0, "numa_node": 0, "mig": "enabled",
     "instances": [{"profile": small, "start": s, "uuid": "MIG-a1000000-0000-5000-8000-0000000000%02d" % s}
                   for s in range(7)]}]}}))
PY
  "$B/xpart-sim" build "$XP_DIR/host$tag.json" "$root" >/dev/null
  # The siblings' shared feature (Slurm 24.11 resets a powered-down CLOUD node's NodeHostName).
  local XP_NODE_FEATURES="xpart_host_$XP_CLUSTER$tag"
  local env=(XPART_ROOT="$root" XPART_NVML_LIBRARY="$nvml" XPART="$B/xpart" "${XP_UNIT_ENV[@]}"
    XPART_RESHAPE_ARGS="--xpart-conf $XP_DIR/etc/xpart.conf" XPART_RESHAPE_LOG="$XP_DIR/log/reshape.log")
  cluster_node "${tag}small" "gpu:$small:7" "${env[@]}"
  cluster_cloud_node "${tag}big" "gpu:$big:2" "${env[@]}"
  siblings_conf "$tag" small "gpu:$small:7" big "gpu:$big:2" "2x$big" --nvml-library "$nvml"
}

# reshape_amd_host TAG: one MI300X in SPX/NPS1 at 0000:05:00.0 in $XP_DIR/host$TAG, with
# `xpart-sim driver` playing amdgpu (stopped with the cluster), as the NodeNames ${TAG}spx
# (Gres=gpu:spx:1, up) and ${TAG}cpx (Gres=gpu:cpx:8, powered down). Sets root.
reshape_amd_host() {
  local tag=$1
  root=$XP_DIR/host$tag
  printf '%s\n' '{"name": "reshape-amd", "cpus": "0-7", "numa": [{"node": 0, "cpus": "0-7"}],' \
    ' "amd": {"gpus": [{"model": "MI300X", "unique_id": 16404946649897475633, "pci_bus_id": "0000:05:00.0",' \
    '   "numa_node": 0, "compute_partition": "SPX", "memory_partition": "NPS1", "xcp_naming": "underscore"}]}}' \
    >"$XP_DIR/host$tag.json"
  "$B/xpart-sim" build "$XP_DIR/host$tag.json" "$root" >/dev/null
  start_ready "driver$tag" "$B/xpart-sim" driver "$XP_DIR/host$tag.json" "$root"
  local XP_NODE_FEATURES="xpart_host_$XP_CLUSTER$tag"
  # The NodeName placed by %n, as a site's `systemctl start slurmd@%n` would have it.
  local env=(XPART_ROOT="$root" XPART="$B/xpart" "${XP_UNIT_ENV[@]}" XPART_SLURMD_START="slurmd -b -N %n"
    XPART_RESHAPE_ARGS="--xpart-conf $XP_DIR/etc/xpart.conf" XPART_RESHAPE_LOG="$XP_DIR/log/reshape.log")
  cluster_node "${tag}spx" "gpu:spx:1" "${env[@]}"
  cluster_cloud_node "${tag}cpx" "gpu:cpx:8" "${env[@]}"
  siblings_conf "$tag" spx gpu:spx:1 cpx gpu:cpx:8 cpx
}

# siblings_conf TAG UP UP_GRES DOWN DOWN_GRES GEOMETRY [XPART ARGS]: the gres.conf lines of the
# host's siblings as `xpart discover --siblings` writes them (the current geometry and GEOMETRY),
# under the cluster's names ${TAG}UP and ${TAG}DOWN; fails unless its slurm.conf lines give them
# the Gres the cluster's node lines do. slurmctld loads a CLOUD node's GRES from gres.conf when
# it starts (read_config.c), long before the node registers, and keeps only GPU records with a
# file (gres.c): each partition is named there by files of its GPU.
siblings_conf() {
  local tag=$1 up=$2 up_gres=$3 down=$4 down_gres=$5 geometry=$6 nodes conf first second
  shift 6
  local -a args=("$B/xpart" --root "$root" discover --siblings --node-name "${XP_CLUSTER}$tag" --geometry "$geometry"
                 --xpart-conf /dev/null "$@")
  nodes=$("${args[@]}" --slurm-conf | grep -v '^#') || fail "xpart discover --siblings --slurm-conf failed"
  [ "$(sed 's/.* \(Gres=[^ ]*\) .*/\1/' <<<"$nodes" | paste -sd' ')" = "Gres=$up_gres Gres=$down_gres" ] &&
    [ "$(grep -c ' State=CLOUD$' <<<"$nodes")" = 1 ] && [[ $(tail -n1 <<<"$nodes") == *" State=CLOUD" ]] ||
    fail "xpart discover --siblings: expected $up_gres (up) and $down_gres (CLOUD), got: $nodes"
  first=$(sed -n '1s/^NodeName=\([^ ]*\) .*/\1/p' <<<"$nodes")
  second=$(sed -n '2s/^NodeName=\([^ ]*\) .*/\1/p' <<<"$nodes")
  conf=$("${args[@]}" --gres-conf | grep -v '^#') || fail "xpart discover --siblings --gres-conf failed"
  XP_GRES_CONF+=$(sed "s/^NodeName=$first /NodeName=${XP_CLUSTER}$tag$up /; s/^NodeName=$second /NodeName=${XP_CLUSTER}$tag$down /" <<<"$conf")$'\n'
}

# start_ready NAME COMMAND...: COMMAND in the background, stopped with the cluster; returns
# once it has printed "ready" (sets LAST_PID).
start_ready() {
  local name=$1; shift
  "$@" >"$XP_DIR/log/$name.out" 2>>"$XP_DIR/log/$name.log" &
  LAST_PID=$!
  XP_PIDS+=("$LAST_PID")
  for _ in $(seq 100); do grep -qx ready "$XP_DIR/log/$name.out" && return 0; sleep 0.1; done
  fail "$name did not start: $(cat "$XP_DIR/log/$name.log")"
}

# reshape_cluster_start: etc/reshape's programs and slurm.conf.reshape's settings, then
# cluster_start, which returns once the active node is idle and its siblings powered down.
reshape_cluster_start() {
  # Slurm runs the ResumeProgram with every descriptor closed: keep what it says on stderr.
  printf '#!/bin/sh\nXPART=%s exec %s "$@" 2>>%s <&- >&-\n' "$B/xpart" "$S/etc/reshape/xpart-resume.sh" \
    "$XP_DIR/log/resume.log" >"$XP_DIR/resume.sh"
  chmod 755 "$XP_DIR/resume.sh"
  # Slurm gives a PrologSlurmctld or EpilogSlurmctld no SLURM_CONF: scontrol would read
  # /etc/slurm, not this cluster. What `xpart reshape-request` says goes to the log.
  local hook
  for hook in prolog epilog; do
    printf '#!/bin/sh\nSLURM_CONF=%s XPART=%s XPART_RESHAPE_TURN_DIR=%s exec %s "$@" 2>>%s\n' "$XP_DIR/etc/slurm.conf" \
      "$B/xpart" "$XP_DIR/turns" "$S/etc/reshape/xpart-$hook-ctld.sh" "$XP_DIR/log/$hook-ctld.log" >"$XP_DIR/$hook-ctld.sh"
    chmod 755 "$XP_DIR/$hook-ctld.sh"
  done
  # Slurm 26.05 runs the RebootProgram (its reboot "power action") with SLURM_NODE_NAME alone in
  # its environment, where older series pass slurmd's: each NodeName's settings in a file it
  # reads then, as a site's /etc/default/xpart-reshape.
  local n kv
  mkdir -p "$XP_DIR/env"
  for n in "${XP_NODES[@]}" "${XP_CLOUD_NODES[@]}"; do
    local envs; node_env_of "$n"
    { printf 'export SLURM_CONF=%q\n' "$XP_DIR/etc/slurm.conf"
      for kv in "${envs[@]}"; do printf 'export %s=%q\n' "${kv%%=*}" "${kv#*=}"; done; } >"$XP_DIR/env/$n"
  done
  printf '#!/bin/bash\n[ -z "${SLURM_NODE_NAME:-}" ] || . %q/env/"$SLURM_NODE_NAME"\nexec %q "$@"\n' \
    "$XP_DIR" "$S/etc/reshape/xpart-reboot.sh" >"$XP_DIR/reboot.sh"
  chmod 755 "$XP_DIR/reboot.sh"
  XP_EXTRA_CONF="ResumeProgram=$XP_DIR/resume.sh
SuspendProgram=$S/etc/reshape/xpart-suspend.sh
RebootProgram=$XP_DIR/reboot.sh
PrologSlurmctld=$XP_DIR/prolog-ctld.sh
EpilogSlurmctld=$XP_DIR/epilog-ctld.sh
SlurmdParameters=shutdown_on_reboot
SuspendTime=31536000
ResumeTimeout=${XP_RESUME_TIMEOUT:-120}
SuspendTimeout=1
SlurmctldParameters=power_save_interval=1
PrivateData=cloud"
  XP_WANT_STATES="idle idle~" cluster_start "$B/gres_plugin/.libs:$(stock_plugindir)"
}

# powered_down NODE: it reaches idle~ (SuspendTimeout after the RebootProgram powered it down).
powered_down() {
  for _ in $(seq 100); do [ "$(sinfo -h -n "$1" -o %T)" = "idle~" ] && return 0; sleep 0.2; done
  fail "$1: $(sinfo -h -n "$1" -o %T), want idle~ (powered down)"
}

# refused_reason NODE: waits for NODE's reason to say a reshape was refused, and prints it.
refused_reason() {
  local reason=
  for _ in $(seq 600); do
    reason=$(scontrol show node -o "$1" | grep -o 'Reason=xpart-reshape refused.*' || true)
    [ -n "$reason" ] && break
    sleep 0.2
  done
  [ -n "$reason" ] || { cluster_dump; fail "no refusal in $1's reason"; }
  echo "$reason"
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

# partitions: what discovery sees on the MIG host now, "type uuid device-files" lines;
# partition_counts: the same counted by type ("7 1g.10gb").
partitions() {
  "$B/xpart" --root "$root" discover --json --nvml-library "$nvml" |
    python3 -c 'import json,sys
for g in json.load(sys.stdin)["gpus"]:
    for p in g["partitions"]: print(p["type"], p["uuid"], ",".join(f["path"] for f in p["device_files"]))'
}
partition_counts() { partitions | awk '{print $1}' | sort | uniq -c | xargs; }

# edit_nvml_state CODE [ARG]: the fake NVML's state changed by CODE (nvml_state_edit).
edit_nvml_state() { "$S/tests/integration/nvml_state_edit" "$root/usr/lib/xpart-sim" "$@"; }
# gpu_power_on: the MIG host's GPU as a power cycle leaves it: in MIG mode (a real GPU keeps
# it across a reboot) with none of its instances.
gpu_power_on_code='for gpu in state["gpus"]: gpu["instances"] = []'
gpu_power_on() { edit_nvml_state "$gpu_power_on_code"; }
# The partitions a MIG host's sibling's geometry has, counted by type (small and big: the
# types reshape_host_start was given).
partitions_of() { if [ "$1" = "$XP_NODE_big" ]; then echo "2 $big"; else echo "7 $small"; fi; }

# reshape_halfway TO GRES: a job of $U for GRES makes the MIG host reshape to TO; the fake NVML
# stops `xpart reshape` as it makes its second GPU instance (the old geometry gone, one of TO's
# made), and the fault is cleared for what comes next. Sets cut_job, cut_stopped (the stopped
# reshape's pid) and cut_half (the partitions made).
reshape_halfway() {
  kill_fault "nvmlDeviceCreateGpuInstanceWithPlacement#2" stop
  cut_job=$(as_user "$U" sbatch --parsable -o /dev/null --gres="gpu:$2:1" --wrap true)
  cut_stopped=$(stopped_reshape "$1")
  cut_half=$(partition_counts 2>/dev/null)
  kill_fault ""
}

# came_back FROM TO JOB: after a power cut halfway through a reshape from FROM to TO, the host
# must come back by itself, never run a job on a half-made geometry, never be INVAL: JOB (it
# waited for TO) runs there, on TO's whole geometry, FROM powered down. A requeued job is held
# back by Slurm (about 3 minutes): released, as an admin would. Waits 10 minutes at most.
# Sets came_back_requeues.
came_back() {
  local from=$1 to=$2 job=$3 st states= deadline=$((SECONDS + 600))
  while ((SECONDS < deadline)); do
    st=$(job_field "$job" JobState)
    states+=" $(sinfo -h -n "$from,$to" -o %T | sort -u | xargs)"
    [ "$st" = COMPLETED ] && break
    case $st in FAILED|CANCELLED|TIMEOUT|NODE_FAIL|BOOT_FAIL) break ;; esac
    [ "$(job_field "$job" Restarts)" = 0 ] || scontrol update jobid="$job" StartTime=now 2>/dev/null || true
    sleep 0.5
  done
  [ "$st" = COMPLETED ] || { cluster_dump; journalctl -n 30 --no-pager -u "slurmd@*"; cat "$XP_DIR"/log/reshape.log "$XP_DIR"/log/resume.log >&2; fail "job $job after the power cut: $st"; }
  [[ $states != *inval* ]] || fail "a sibling was INVAL after the power cut:$states"
  expect_eq "job $job ran on" "$(job_field "$job" NodeList)" "$to"
  expect_eq "partitions after the power cut" "$(partition_counts)" "$(partitions_of "$to")"
  powered_down "$from"
  expect_units "$to" "$from"
  came_back_requeues=$(job_field "$job" Restarts)
}

# kill_fault CALL [kill|stop]: the fake NVML's fault at that call from now on ("": none).
kill_fault() {
  python3 - "$root/usr/lib/xpart-sim/nvml-spec.json" "$1" "${2:-kill}" <<'PY'
import json, os, sys
path, fault, kind = sys.argv[1:]
spec = json.load(open(path))
spec["nvidia"]["faults"] = {fault: kind} if fault else {}
json.dump(spec, open(path + ".new", "w"))
os.rename(path + ".new", path)
PY
}

# stopped_reshape TO: the pid of `xpart reshape --slurm-node TO` once a `stop` fault has
# stopped it (SIGSTOP), waited for 120 s at most.
stopped_reshape() {
  local p
  for _ in $(seq 600); do
    for p in $(pgrep -f "reshape --slurm-node $1( |\$)"); do
      [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = T ] && { echo "$p"; return 0; }
    done
    sleep 0.2
  done
  cluster_dump
  fail "no reshape to $1 stopped at its fault"
}
