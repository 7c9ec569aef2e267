# A private Slurm cluster on loopback for one test: real slurmctld and slurmd(s), auth/none,
# unique ClusterName, NodeNames, ports and one temporary directory; everything is removed
# on exit (daemons by PID, slurm_<node> cgroups depth first, the directory).
# Source it, then: cluster_init; cluster_node NAME GRES [GRES.CONF LINES...]; cluster_start
# PLUGINDIR; cluster_user SHORT and run jobs as that user (as_user); cluster_stop (also run by
# the EXIT trap).

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: $*"; }

# Root without Slurm is a failure, not a skip: CI runs as root and must have Slurm.
require_slurm() {
  [ "$(id -u)" = 0 ] || { echo "SKIP: needs root (cgroups, device nodes)"; exit 77; }
  local b
  for b in slurmctld slurmd srun sbatch squeue scontrol sinfo; do
    command -v "$b" >/dev/null || fail "$b not installed (apt-get install slurmctld slurmd slurm-client)"
  done
}

# The installed Slurm's own plugin directory (stock gres_gpu.so, libslurmfull.so): Debian's, or
# SchedMD's slurm-smd packages'.
stock_plugindir() {
  local d
  for d in ${XPART_SLURM_STOCK_PLUGINDIR:-} /usr/lib/*/slurm-wlm /usr/lib/*-linux-gnu/slurm /usr/lib64/slurm /usr/lib/slurm; do
    [ -r "$d/gres_gpu.so" ] && { echo "$d"; return 0; }
  done
  fail "no stock gres_gpu.so found (install slurmd)"
}

# devnode_tmpdir NAME: a new temporary directory where device nodes can be opened (the
# simulated nodes' /dev files): Debian 13 mounts /tmp as a nodev tmpfs (systemd's tmp.mount),
# where none can (EACCES); /var/tmp then.
devnode_tmpdir() {
  local base=/tmp
  findmnt -n -o OPTIONS --target /tmp | tr , '\n' | grep -qx nodev && base=/var/tmp
  mktemp -d "$base/$1.XXXXXX"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

cluster_init() {
  require_slurm
  XP_DIR=$(devnode_tmpdir xpart-slurm)
  chmod 755 "$XP_DIR"
  XP_TAG=$(basename "$XP_DIR" | tr -dc 'a-zA-Z0-9' | tr 'A-Z' 'a-z' | tail -c 7)
  XP_CLUSTER="xp${XP_TAG}"
  XP_NODES=()
  XP_CLOUD_NODES=()
  XP_PIDS=()
  XP_USERS=()
  XP_NODE_LINES=""
  XP_GRES_CONF=""
  # cgroup/v2 on a pure v2 node (cgroup2 at /sys/fs/cgroup), cgroup/v1 on a v1 or hybrid one.
  XP_CGROUP_PLUGIN=cgroup/v1
  [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && XP_CGROUP_PLUGIN=cgroup/v2
  XP_CGROUP_CONF="CgroupPlugin=$XP_CGROUP_PLUGIN
ConstrainDevices=yes
ConstrainCores=no
ConstrainRAMSpace=no"
  XP_EXTRA_CONF=""
  mkdir -p "$XP_DIR/state" "$XP_DIR/spool" "$XP_DIR/log" "$XP_DIR/run" "$XP_DIR/etc"
  trap cluster_stop EXIT
  XP_HOST=$(hostname -s)
  # The node's CPU layout as slurmd sees it, or slurmd complains.
  XP_LAYOUT=$(slurmd -C | head -1 | grep -o 'CPUs=[0-9]* Boards=[0-9]* SocketsPerBoard=[0-9]* CoresPerSocket=[0-9]* ThreadsPerCore=[0-9]*')
}

# node_env_set NAME VAR=VALUE...: NodeName NAME's slurmd environment (the array XP_ENV_<NAME>);
# node_env_of NAME: it, into the caller's `envs` array.
node_env_set() { declare -ga "XP_ENV_$1"; local -n _env="XP_ENV_$1"; _env=("${@:2}"); }
node_env_of() { local -n _env="XP_ENV_$1"; envs=("${_env[@]}"); }

# cluster_node SHORTNAME GRES [VAR=VALUE...]: a NodeName unique to this cluster (n1 ->
# xp<tag>n1); the VAR=VALUE pairs go into that slurmd's environment (XPART_ROOT, ...).
# XP_NODE_FEATURES, when set, gives the node (and a cluster_cloud_node) Features=.
cluster_node() {
  local short=$1 name="${XP_CLUSTER}$1" gres=$2
  shift 2
  node_env_set "$name" "$@"
  XP_NODES+=("$name")
  node_line "$short" "${gres:+Gres=$gres}"
}

# node_line SHORTNAME WORDS: the slurm.conf line of XP_CLUSTER<SHORTNAME> on a port of its own.
node_line() {
  XP_NODE_LINES+="NodeName=${XP_CLUSTER}$1 NodeHostname=$XP_HOST NodeAddr=127.0.0.1 Port=$(free_port) $XP_LAYOUT RealMemory=1000 $2 ${XP_NODE_FEATURES:+Features=$XP_NODE_FEATURES}
"
  eval "XP_NODE_$1=${XP_CLUSTER}$1"
}

# cluster_cloud_node SHORTNAME GRES [VAR=VALUE...]: a NodeName of the same host that starts
# powered down (State=CLOUD, no slurmd): a reshape flow sibling, brought up by a RebootProgram
# that starts `slurmd -N` as it (cluster_stop stops every slurmd of this cluster, by its -N
# name); the VAR=VALUE pairs are its unit's environment (slurmd_units.sh).
cluster_cloud_node() {
  local name="${XP_CLUSTER}$1"
  node_env_set "$name" "${@:3}"
  XP_CLOUD_NODES+=("$name")
  node_line "$1" "Gres=$2 State=CLOUD"
}

# cluster_start PLUGINDIR: writes the configuration and waits until every node is idle.
cluster_start() {
  local plugindir=$1 etc=$XP_DIR/etc
  XP_CTLD_PORT=$(free_port)
  cat >"$etc/slurm.conf" <<CONF
ClusterName=$XP_CLUSTER
SlurmctldHost=$XP_HOST(127.0.0.1)
SlurmctldPort=$XP_CTLD_PORT
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$XP_DIR/state
SlurmdSpoolDir=$XP_DIR/spool/%n
SlurmctldPidFile=$XP_DIR/run/slurmctld.pid
SlurmdPidFile=$XP_DIR/run/slurmd.%n.pid
SlurmctldLogFile=$XP_DIR/log/slurmctld.log
SlurmdLogFile=$XP_DIR/log/slurmd.%n.log
PluginDir=$plugindir
GresTypes=${XP_GRES_TYPES:-gpu}
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup,task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
ReturnToService=2
SlurmctldDebug=info
SlurmdDebug=debug
DebugFlags=Gres
SlurmctldTimeout=30
SlurmdTimeout=30
MessageTimeout=20
$XP_EXTRA_CONF
${XP_NODE_LINES}PartitionName=xp Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
  # From 25.11 slurmd on cgroup v2 moves itself into a child of its own cgroup and enables the
  # controllers there, which a cgroup holding other processes (the test's) refuses ("Cannot
  # migrate slurmd"): under systemd each slurmd gets a delegated scope of its own, as its unit
  # gives it on a site's node (systemd-run --scope execs slurmd: the pid stays the one tracked).
  XP_SLURMD_SCOPE=()
  if [ "$XP_CGROUP_PLUGIN" = cgroup/v2 ] && [ "$(ps -o comm= -p 1)" = systemd ] &&
    slurmd -V | awk '{split($2, v, "."); exit !(v[1] * 100 + v[2] >= 2511)}'; then
    XP_SLURMD_SCOPE=(systemd-run --scope --quiet --collect -p Delegate=yes)
  fi
  printf '%s\n' "$XP_CGROUP_CONF" >"$etc/cgroup.conf"
  printf '%s\n' "$XP_GRES_CONF" >"$etc/gres.conf"
  export SLURM_CONF=$etc/slurm.conf
  slurmctld -D -i -f "$SLURM_CONF" >"$XP_DIR/log/slurmctld.out" 2>&1 &
  XP_PIDS+=($!)
  local n
  # Or each slurmd as an instance of the packaged slurmd@.service (slurmd_units.sh).
  if [ -n "${XP_SLURMD_UNITS:-}" ]; then slurmd_units_start; else
    for n in "${XP_NODES[@]}"; do
      local envs; node_env_of "$n"
      env "${envs[@]}" "${XP_SLURMD_SCOPE[@]}" slurmd -D -N "$n" -f "$SLURM_CONF" >"$XP_DIR/log/slurmd.$n.out" 2>&1 &
      XP_PIDS+=($!)
    done
  fi
  cluster_wait_idle 60 "${XP_WANT_STATES:-idle}" ||
    { cluster_dump; fail "cluster $XP_CLUSTER: nodes not ${XP_WANT_STATES:-idle}"; }
}

# slurmd_restart SHORTNAME: stops that node's slurmd (SIGTERM: running steps' slurmstepd go on)
# and starts it again with its environment; returns once it has started.
slurmd_restart() {
  local node="${XP_CLUSTER}$1" pid started log
  log=$XP_DIR/log/slurmd.$node.log
  pid=$(pgrep -f "slurmd -D -N $node ") || fail "no slurmd for $node"
  started=$(grep -c 'slurmd started on' "$log" || true)
  kill -TERM "$pid"
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  ! kill -0 "$pid" 2>/dev/null || fail "slurmd of $node did not stop"
  local envs; node_env_of "$node"
  env "${envs[@]}" "${XP_SLURMD_SCOPE[@]}" slurmd -D -N "$node" -f "$SLURM_CONF" >>"$XP_DIR/log/slurmd.$node.out" 2>&1 &
  XP_PIDS+=($!)
  for _ in $(seq 300); do
    [ "$(grep -c 'slurmd started on' "$log" || true)" -gt "$started" ] && return 0
    sleep 0.1
  done
  fail "slurmd of $node did not start again"
}

# cluster_wait_idle SECONDS: every node idle (or the wanted state in $2).
cluster_wait_idle() {
  local deadline=$((SECONDS + $1)) want=${2:-idle} states
  while ((SECONDS < deadline)); do
    states=$(sinfo -h -N -o '%T' 2>/dev/null | sort -u | tr '\n' ' ')
    [ "$states" = "$want " ] && return 0
    sleep 0.2
  done
  echo "node states: $states" >&2
  return 1
}

cluster_dump() {
  local f
  for f in "$XP_DIR"/log/*; do echo "--- $f"; tail -n 40 "$f"; done >&2
  # slurmd@ units (slurmd_units.sh): what systemd did with each start, stop and restart.
  [ -z "${XP_SLURMD_UNITS:-}" ] || { echo "--- journal of slurmd@*"; journalctl --no-pager -o short-monotonic -n 120 -u 'slurmd@*'; } >&2
}

# cluster_user SHORT: an unprivileged user unique to this cluster (XP_USER_<SHORT> is its
# name), removed with its processes by cluster_stop, and a directory of its own for what its
# jobs write, $XP_DIR/user_<SHORT> (XP_UDIR_<SHORT>). Jobs are submitted as such users, as on
# a real site; only the daemons and admin commands (scontrol, sinfo, slurmd -G) run as root.
# The user must reach the build and source trees (XPART_BUILDDIR, XPART_SRCDIR) its jobs run
# programs from: a tree under a 0700 home such as /root is one clear failure here.
cluster_user() {
  local name="${XP_CLUSTER}$1" dir="$XP_DIR/user_$1" tree
  useradd -M -N -d / -s /bin/sh "$name" || fail "useradd $name"
  XP_USERS+=("$name")
  eval "XP_USER_$1=$name XP_UDIR_$1=$dir"
  install -d -o "$name" -g "$(id -g "$name")" -m 755 "$dir"
  for tree in ${XPART_BUILDDIR:-} ${XPART_SRCDIR:-}; do
    as_user "$name" test -r "$tree" -a -x "$tree" ||
      fail "user $name cannot read $tree: jobs run as an unprivileged user, so the build and source trees must be readable by others (not under a 0700 home such as /root)"
  done
}
# as_user NAME COMMAND...: runs COMMAND as NAME (its own uid and primary group, no other
# groups), with this environment (SLURM_CONF included) and a plain PATH led by the directory
# of the srun the daemons came with (a release's install, or Debian's /usr/bin).
as_user() {
  local name=$1 bin
  shift
  bin=$(dirname "$(command -v srun)")
  setpriv --reuid="$name" --regid="$(id -g "$name")" --clear-groups -- \
    env PATH="$bin:/usr/local/bin:/usr/bin:/bin" HOME=/ USER="$name" LOGNAME="$name" "$@"
}

cluster_stop() {
  local pid i u
  # Jobs first: a slurmstepd whose slurmd is gone outlives the test, waiting for it.
  if [ -n "${SLURM_CONF:-}" ] && ((${#XP_PIDS[@]})); then
    squeue -h -o %i 2>/dev/null | xargs -r scancel 2>/dev/null || true
    for _ in $(seq 50); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.1; done
  fi
  for ((i = ${#XP_PIDS[@]} - 1; i >= 0; i--)); do
    pid=${XP_PIDS[i]}
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${XP_PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  XP_PIDS=()
  [ -z "${XP_SLURMD_UNITS:-}" ] || slurmd_units_stop
  # slurmds that a RebootProgram started (cluster_cloud_node), not children of this shell.
  if ((${#XP_CLOUD_NODES[@]})); then
    pkill -TERM -f "^slurmd .*-N ${XP_CLUSTER}" 2>/dev/null || true
    for _ in $(seq 50); do pgrep -f "^slurmd .*-N ${XP_CLUSTER}" >/dev/null || break; sleep 0.1; done
    pkill -KILL -f "^slurmd .*-N ${XP_CLUSTER}" 2>/dev/null || true
    # The reshape flow's watchers (xpart-resume.sh's): they would end at their next poll.
    pkill -TERM -f "reshape-request watch ${XP_CLUSTER}" 2>/dev/null || true
  fi
  for u in "${XP_USERS[@]}"; do
    pkill -KILL -u "$u" 2>/dev/null || true
    for _ in $(seq 50); do pgrep -u "$u" >/dev/null || break; sleep 0.1; done
    userdel "$u" 2>/dev/null || true
  done
  XP_USERS=()
  local n d
  # On v2 each slurmd asked systemd for a scope of its own for its slurmstepds (Debian builds
  # Slurm with multiple-slurmd support): stop it, with whatever a killed step left there.
  if [ "${XP_CGROUP_PLUGIN:-}" = cgroup/v2 ]; then
    for n in "${XP_NODES[@]}" "${XP_CLOUD_NODES[@]}"; do systemctl stop "${n}_slurmstepd.scope" 2>/dev/null || true; done
  fi
  # Slurm 24.11's slurmstepd can still be leaving its cgroups when the daemons are gone: retry
  # for up to 5 s, then say what is left (a cleanup trap must not fail the test by itself).
  for n in "${XP_NODES[@]}" "${XP_CLOUD_NODES[@]}"; do
    for d in /sys/fs/cgroup/*/slurm_"$n"; do
      for _ in $(seq 50); do
        [ -d "$d" ] || break
        find "$d" -depth -type d -exec rmdir {} + 2>/dev/null && break
        sleep 0.1
      done
      [ ! -d "$d" ] || echo "cluster_stop: $d could not be removed (still in use)" >&2
    done
  done
  if [ -n "${XP_KEEP:-}" ]; then echo "kept $XP_DIR" >&2; elif [ -n "${XP_DIR:-}" ]; then rm -rf "$XP_DIR"; fi
}

# gres_records NODE [VAR=VALUE...]: "index type uuid files" per gres/gpu record the xpart
# plugin registers on NODE (slurmd -G, run with the node's environment). Index, type and files
# are Slurm's own "Gres Name=gpu" lines, in record order; the UUID is the partition with those
# files in the node cache the same slurmd -G wrote (the plugin's per-record lines are debug,
# which -G does not print).
gres_records() {
  local node=$1 root; shift
  root=$(env "$@" printenv XPART_ROOT || true)
  # In the cluster's slurmd scope (25.11 on cgroup v2 sets its cgroup up even for -G).
  env "$@" "${XP_SLURMD_SCOPE[@]}" slurmd -G -N "$node" -f "$SLURM_CONF" 2>&1 | python3 -c '
import json, re, sys
root = sys.argv[1].rstrip("/")
lines = sys.stdin.readlines()  # slurmd -G writes the cache: read it only after it exited
uuid = {}
for g in json.load(open(root + "/run/xpart/node.json"))["gpus"]:
    for p in g["partitions"]:
        uuid[frozenset(root + f["path"] for f in p["device_files"])] = p["uuid"]
i = 0
for line in lines:
    m = re.search(r"Gres Name=gpu Type=(\S+) Count=1 .*File=(\S+)", line)
    if m:
        print(i, m[1], uuid.get(frozenset(m[2].split(",")), "?"), m[2])
        i += 1
' "${root:-/}"
}

# probe FILE...: "<file> OK|ENXIO|EPERM|..." per file, as open(2) answers inside the job.
XP_PROBE='import errno, os, sys
for p in sys.argv[1:]:
    try:
        os.close(os.open(p, os.O_RDONLY)); r = "OK"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    print(p, r)'

# mknod_dev PATH MAJOR MINOR
mknod_dev() { mkdir -p "$(dirname "$1")"; [ -e "$1" ] || mknod -m 666 "$1" c "$2" "$3"; }

# env_of OUTPUT VAR: the value printed by `env` in OUTPUT for VAR ("<unset>" when absent).
env_of() { local v; v=$(grep -m1 "^$2=" <<<"$1") && echo "${v#*=}" || echo "<unset>"; }

expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }
