#!/bin/bash
# `xpart cgroup` end to end, on both hierarchies: apply (with --create and --pid), probes by
# open() from the moved process, show, clear, bad options. Needs root.
set -u
X="${XPART_BUILDDIR:-$(pwd)}/xpart"
PREFIX="xpart_test_cli_$$_$RANDOM"
# Device nodes cannot be opened on a nodev /tmp (Debian 13's tmpfs): /var/tmp there.
DEV=$(mktemp -d "$(findmnt -n -o OPTIONS --target /tmp | tr , '\n' | grep -qx nodev && echo /var/tmp || echo /tmp)/xpart-cli-XXXXXX")
failures=0
# Hybrid (v1 devices + cgroup2 at unified/) tests both; a pure v2 node (cgroup2 at
# /sys/fs/cgroup, no v1 devices controller) tests v2 there.
V2=/sys/fs/cgroup/unified HIERS="v1 v2"
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && V2=/sys/fs/cgroup HIERS=v2
# What xpart says of a path outside every mount, and of --hierarchy v1 on a v2 path, by layout.
OUTSIDE="not below /sys/fs/cgroup/devices or /sys/fs/cgroup/unified"
WRONG_V1="--cgroup '$V2/${PREFIX}_x' is in the v2 hierarchy, not --hierarchy v1"
[ "$HIERS" = v2 ] && OUTSIDE="not below /sys/fs/cgroup" WRONG_V1="--hierarchy 'v1': this node mounts no cgroup v1 devices controller"
mount_of() { if [ "$1" = v1 ]; then echo /sys/fs/cgroup/devices; else echo "$V2"; fi; }
cleanup() {
    for d in /sys/fs/cgroup/devices/${PREFIX}_* "$V2"/${PREFIX}_*; do [ -d "$d" ] && rmdir "$d"; done
    rm -rf "$DEV"
}
trap cleanup EXIT
check() {  # check NAME EXPECTED ACTUAL
    if [ "$2" == "$3" ]; then echo "ok - $1"; else echo "FAIL - $1"; echo "  expected: $2"; echo "  actual:   $3"; failures=$((failures + 1)); fi
}
[ "$(id -u)" = 0 ] || { echo "FAIL - needs root"; exit 1; }
mknod "$DEV/nv0" c 195 0 && mknod "$DEV/nv1" c 195 1 && mknod "$DEV/render" c 226 128 || exit 1

# Moves itself in with --pid, then opens each node; prints one word per probe.
probe_script='
"$X" cgroup apply --cgroup "$CG" --hierarchy "$H" --allow "c 195:0 rw" --allow "c 226:128 r" --pid $$ >/dev/null || exit 9
for p in "$DEV/nv0:<>" "$DEV/nv1:<>" "$DEV/render:<" "$DEV/render:>"; do
  f=${p%:*}; mode=${p##*:}
  if [ "$mode" = "<" ]; then err=$( (exec 3<"$f") 2>&1 ); else err=$( (exec 3<>"$f") 2>&1 ); fi
  case "$err" in *"not permitted"*) echo -n "denied ";; *"No such device"*) echo -n "allowed ";; *) echo -n "other($err) ";; esac
done'

for H in $HIERS; do
    CG="${PREFIX}_$H"
    out=$("$X" cgroup apply --cgroup "$CG" --hierarchy "$H" --create --allow 'c 195:0 rw' --allow 'c 226:128 r')
    check "$H apply --create" "applied 2 allow rule(s) to $(mount_of $H)/$CG ($H)" "$out"
    got=$(X="$X" CG="$CG" H="$H" DEV="$DEV" bash -c "$probe_script")
    check "$H probes (rw allowed, other minor denied, read-only)" "allowed denied allowed denied " "$got"
    out=$("$X" cgroup show --cgroup "$CG" --hierarchy "$H" | tail -n +2)
    check "$H show" "$(printf 'policy deny-all\nallow c 195:0 rw\nallow c 226:128 r')" "$out"
    "$X" cgroup clear --cgroup "$CG" --hierarchy "$H" >/dev/null
    out=$("$X" cgroup show --cgroup "$CG" --hierarchy "$H" | tail -n +2)
    check "$H show after clear" "no xpart device rules (every device allowed by this cgroup)" "$out"
    out=$("$X" cgroup clear --cgroup "$CG" --hierarchy "$H" --remove)
    check "$H clear --remove" "removed $(mount_of $H)/$CG" "$out"
done

# Bad values: one line naming the option and the value, exit status 1.
while IFS='|' read -r name args expected; do
    out=$(eval "\"$X\" cgroup $args" 2>&1); rc=$?
    check "$name (exit 1)" 1 "$rc"
    check "$name (message)" "$expected" "$out"
done <<EOT
bad rule|apply --cgroup ${PREFIX}_x --allow 'c 1:x rw'|xpart cgroup: --allow: device rule 'c 1:x rw': bad minor 'x' (expected a number or '*')
bad hierarchy|apply --cgroup ${PREFIX}_x --hierarchy v3 --allow 'c 1:3 rw'|xpart cgroup: --hierarchy 'v3': expected v1, v2 or auto
bad pid|apply --cgroup ${PREFIX}_x --pid 12x --allow 'c 1:3 rw'|xpart cgroup: --pid '12x': expected a process id
bad policy|apply --cgroup ${PREFIX}_x --policy open --allow 'c 1:3 rw'|xpart cgroup: --policy 'open': expected deny-all or deny-managed
outside cgroupfs|show --cgroup /tmp|xpart cgroup: --cgroup '/tmp': $OUTSIDE
wrong hierarchy|show --cgroup $V2/${PREFIX}_x --hierarchy v1|xpart cgroup: $WRONG_V1
empty set|apply --cgroup ${PREFIX}_x|xpart cgroup: apply: give --allow, --partitions or --baseline (an empty set would deny every device)
missing cgroup|apply --cgroup ${PREFIX}_gone --hierarchy v2 --allow 'c 1:3 rw'|xpart cgroup: cgroup $V2/${PREFIX}_gone is not a v2 cgroup ($V2/${PREFIX}_gone/cgroup.controllers: No such file or directory)
unknown partition|apply --cgroup ${PREFIX}_x --partitions MIG-zz|xpart cgroup: --partitions: partition 'MIG-zz': no such partition on this node
bad job id|sweep --job 7x|xpart cgroup: --job '7x': expected a decimal Slurm job id
bad node|sweep --job 7 --node ../x|xpart cgroup: --node '../x': expected a Slurm NodeName
bad sweep hierarchy|sweep --hierarchy v3|xpart cgroup: --hierarchy 'v3': expected v1, v2 or auto
bad sluid|sweep --job 7 --sluid s0123/../9ABCD|xpart cgroup: --sluid 's0123/../9ABCD': expected a Slurm SLUID (s and 13 base-32 digits, as in SLURM_JOB_SLUID)
sluid without job|sweep --sluid s0123456789ABC|xpart cgroup: sweep: --sluid 's0123456789ABC' needs --job
job and cgroup|sweep --job 7 --cgroup ${PREFIX}_x|xpart cgroup: sweep: give --job or --cgroup, not both
deny under deny-all|apply --cgroup ${PREFIX}_x --policy deny-all --deny 'c 1:3 r' --allow 'c 1:5 r'|xpart cgroup: --deny needs --policy deny-managed (deny-all denies everything not allowed)
EOT

# sweep: leftover rank cgroups below a parent, on both hierarchies. rank0: launcher gone, empty
# (removed); rank1: launcher gone, a process inside (kept); rank2: the pid is this shell, not
# an xpart process (removed); other: not a rank cgroup (untouched).
sleep 0 & dead=$!; wait $dead
for H in $HIERS; do
    P="$(mount_of $H)/${PREFIX}_sweep_$H"
    mkdir "$P" "$P/xpart_rank0_$dead" "$P/xpart_rank1_$dead" "$P/xpart_rank2_$$" "$P/other"
    sleep 300 & sleeper=$!
    echo $sleeper >"$P/xpart_rank1_$dead/cgroup.procs"
    out=$("$X" cgroup sweep --cgroup "$P" --dry-run)
    check "$H sweep --dry-run" "$(printf 'would remove %s\nkept %s: busy (1 process(es))\nwould remove %s' \
        "$P/xpart_rank0_$dead" "$P/xpart_rank1_$dead" "$P/xpart_rank2_$$")" "$out"
    check "$H sweep --dry-run removes nothing" "4" "$(find "$P" -mindepth 1 -type d | wc -l)"
    out=$("$X" cgroup sweep --cgroup "$P"); rc=$?
    check "$H sweep" "$(printf 'removed %s\nkept %s: busy (1 process(es))\nremoved %s' \
        "$P/xpart_rank0_$dead" "$P/xpart_rank1_$dead" "$P/xpart_rank2_$$")" "$out"
    check "$H sweep exit status" 0 "$rc"
    check "$H sweep left the busy and the foreign cgroup" "$(printf '%s\n%s' "$P/other" "$P/xpart_rank1_$dead")" \
        "$(find "$P" -mindepth 1 -type d | sort)"
    kill $sleeper; wait $sleeper 2>/dev/null
    for d in "$P/xpart_rank1_$dead" "$P/other" "$P"; do
        for _ in $(seq 50); do rmdir "$d" 2>/dev/null && break; sleep 0.1; done
    done
done
# sweep --job: whatever of the job is left anywhere below its directory (here in a cgroup its
# user made below the batch step, as v1 lets a user) is killed, one line says so, and the
# job's cgroups go; with one process SIGKILL cannot end (frozen by v1's freezer), exit 5 and
# a line naming it.
node="${PREFIX}node"
for H in $HIERS; do
    made=
    if [ "$H" = v1 ]; then
        base=/sys/fs/cgroup/devices/slurm_$node job=$base/uid_4242/job_9 hide=$job/step_batch/hide
    else
        [ -d "$V2/system.slice" ] || { mkdir "$V2/system.slice"; made=$V2/system.slice; }
        base=$V2/system.slice/${node}_slurmstepd.scope job=$base/job_9 hide=$job/step_batch/user/hide
    fi
    mkdir -p "$hide" && chown 4242:4242 "$hide" "$hide/cgroup.procs"
    sleep 300 & sleeper=$!
    echo $sleeper >"$hide/cgroup.procs"
    out=$("$X" cgroup sweep --job 9 --node "$node" 2>&1); rc=$?
    check "$H sweep --job: what it killed, first" "job 9: killed 1 process(es) left in its cgroups" "$(head -1 <<<"$out")"
    check "$H sweep --job exit status" 0 "$rc"
    { wait $sleeper; } 2>/dev/null; check "$H sweep --job: the hidden process was SIGKILLed" 137 "$?"
    check "$H sweep --job: the job's cgroups, the user's among them, removed" "" "$(find "$base" -mindepth 1 -type d)"
    rmdir "$base" ${made:+"$made"}
done
if [ "$HIERS" = "v1 v2" ]; then
    ice=/sys/fs/cgroup/freezer/slurm_$node/uid_4242/job_9/step_batch/ice
    mkdir -p "$ice" && chown 4242:4242 "$ice" "$ice/cgroup.procs"
    sleep 300 & sleeper=$!
    echo $sleeper >"$ice/cgroup.procs"; echo FROZEN >"$ice/freezer.state"
    out=$("$X" cgroup sweep --job 9 --node "$node" --gpus MIG-a 2>&1 >/dev/null); rc=$?
    check "sweep --job: a process outliving SIGKILL" "xpart cgroup: sweep: job 9: pid $sleeper outlived SIGKILL in $ice, keeping the job's device rules (GPUs MIG-a): the node is not safe for the next job" "$out"
    check "sweep --job exit status with a survivor" 5 "$rc"
    echo THAWED >"$ice/freezer.state"; wait $sleeper 2>/dev/null
    for d in "$ice" "${ice%/*}" "${ice%/*/*}" "${ice%/*/*/*}" "/sys/fs/cgroup/freezer/slurm_$node"; do
        for _ in $(seq 50); do rmdir "$d" 2>/dev/null && break; sleep 0.1; done
    done
fi

# A job this node never ran: nothing found, nothing done, success (an Epilog for every job).
out=$("$X" cgroup sweep --job 4294967290 --node "${PREFIX}_node" 2>&1); rc=$?
check "sweep --job of an unknown job (output)" "" "$out"
check "sweep --job of an unknown job (exit 0)" 0 "$rc"

# The shipped Epilog passes Slurm's variables through, the SLUID only where Slurm sets one
# (26.05). A stand-in xpart records its arguments; the copy run (with the hooks' library
# beside it, as installed) reads no /etc/default file.
# The stand-in exits with $STUB_RC: 5 (a process outlived SIGKILL) fails the Epilog, so Slurm
# drains the node; any other failure does not.
stub=$(mktemp -d); printf '#!/bin/sh\necho "$@" >>%s/args\nexit ${STUB_RC:-0}\n' "$stub" >"$stub/xpart"; chmod +x "$stub/xpart"
mkdir "$stub/epilog.d"
sed "s|/etc/default/|$stub/no-defaults/|g" "${XPART_SRCDIR:?}/etc/xpart-hook.sh" >"$stub/xpart-hook.sh"
cat "$stub/xpart-hook.sh" "${XPART_SRCDIR:?}/etc/epilog.d/xpart-cgroup.sh" | grep -v '^ *#' | grep -q /etc/default &&
  { echo "FAIL: the Epilog or its library reads /etc/default beyond the copy's reach" >&2; exit 1; }
cp "${XPART_SRCDIR:?}/etc/epilog.d/xpart-cgroup.sh" "$stub/epilog.d/epilog.sh"
epilog() { env -i PATH=/usr/bin:/bin XPART="$stub/xpart" SLURM_JOB_ID=7 SLURMD_NODENAME=n1 "$@" bash "$stub/epilog.d/epilog.sh"; }
epilog; epilog SLURM_JOB_SLUID=s0123456789ABC; epilog CUDA_VISIBLE_DEVICES=MIG-a,MIG-b; epilog SLURM_JOB_GPUS=0,1
check "Epilog's sweep arguments, without and with a SLUID, with the job's GPUs" \
    "$(printf 'cgroup sweep --job 7 --node n1\ncgroup sweep --job 7 --node n1 --sluid s0123456789ABC\ncgroup sweep --job 7 --node n1 --gpus MIG-a,MIG-b\ncgroup sweep --job 7 --node n1 --gpus 0,1')" \
    "$(cat "$stub/args")"
for case in "0 0" "1 0" "5 1"; do
    read -r xpart_rc want <<<"$case"
    epilog STUB_RC="$xpart_rc" >/dev/null 2>&1; rc=$?
    check "Epilog's status when xpart cgroup sweep exits $xpart_rc" "$want" "$rc"
done
rm -rf "$stub"

left=$(ls -d /sys/fs/cgroup/devices/${PREFIX}* "$V2"/${PREFIX}* 2>/dev/null)
check "no test cgroup left" "" "$left"
[ $failures -eq 0 ]
