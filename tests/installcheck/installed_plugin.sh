#!/bin/bash
# make installcheck: the INSTALLED programs and plugin work together, as an admin would use
# them. The installed xpart-sim builds the installed H100 spec with its default (installed)
# fake NVML; the installed xpart discovers it; then the installed slurmd reads the shipped
# etc/slurm.conf.fragment, cgroup.conf (cgroup/v1 on a v1 or hybrid host, as it says) and
# gres.conf.autodetect (PluginDir pointed at the installed plugin, Debian's plugins after it)
# and `slurmd -G` must list the plugin's records for node mig01 exactly as the fragment's Gres=
# declares them. The installed SPANK plugin xpart.so, loaded by the installed srun through the
# installed example plugstack.conf (its path pointed at DESTDIR), must add the --xpart-*
# options to `srun --help`.
# Environment (from the installcheck-local rule): DESTDIR, XPART_SRCDIR, XPART_BINDIR,
# XPART_PKGDATADIR, XPART_PKGLIBDIR, XPART_SLURM_PLUGINDIR (empty: plugin not built),
# XPART_STOCK_PLUGINDIR, XPART_SPANK_PLUGIN (yes/no: built), XPART_DOCDIR.
set -euo pipefail
D=${DESTDIR:-}
S=${XPART_SRCDIR:?}
bin=$D${XPART_BINDIR:?}
pass=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
fail() { echo "FAIL: $*"; echo "$pass passed, 1 failed"; exit 1; }

tmp=$(mktemp -d /tmp/xpart-installcheck-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

v=$("$bin/xpart" --version) || fail "installed $bin/xpart --version"
ok "$v"

spec=$D${XPART_PKGDATADIR:?}/specs/h100-80gb.json
[ -r "$spec" ] || fail "spec not installed: $spec"
"$bin/xpart-sim" build "$spec" "$tmp/root" || fail "installed xpart-sim build $spec"
nvml=$tmp/root/usr/lib/xpart-sim/libnvidia-ml.so.1
installed_nvml=$D${XPART_PKGLIBDIR:?}/sim/libnvidia-ml.so.1
[ -r "$installed_nvml" ] || fail "fake NVML not installed: $installed_nvml"
# The default --nvml-lib of the installed xpart-sim is the installed fake (not the build tree's).
"$bin/xpart-sim" build --help | grep -qF "$installed_nvml" ||
    fail "installed xpart-sim's default --nvml-lib is not $installed_nvml"
cmp -s "$nvml" "$installed_nvml" || fail "the root's fake NVML is not the installed one"
ok "installed xpart-sim built $spec with the installed fake NVML"

uuids=$(XPART_NVML_LIBRARY=$nvml "$bin/xpart" --root "$tmp/root" discover --json |
    grep -oE 'MIG-[0-9a-f-]{36}' | sort -u)
[ "$(wc -l <<<"$uuids")" = 5 ] || fail "installed xpart discover found MIG UUIDs: '$uuids'"
ok "installed xpart discover: 5 MIG devices"

if [ -z "${XPART_SLURM_PLUGINDIR:-}" ]; then
    echo "$pass passed, 0 failed (gres plugin not built: slurmd check not run)"
    exit 0
fi
plugindir=$D$XPART_SLURM_PLUGINDIR
[ -r "$plugindir/gres_gpu.so" ] || fail "plugin not installed: $plugindir/gres_gpu.so"
[ -n "${XPART_STOCK_PLUGINDIR:-}" ] || fail "no Debian Slurm plugin dir found by configure"
command -v slurmd >/dev/null || fail "slurmd not installed"

# The shipped fragment, with the installed plugin dir first, plus what a whole slurm.conf
# needs (state and spool under $tmp). Everything else is exactly as shipped.
conf=$tmp/etc
mkdir -p "$conf" "$tmp/spool" "$tmp/state"
{
    echo "ClusterName=xpic$$"
    echo "SlurmctldHost=$(hostname -s)(127.0.0.1)"
    echo "AuthType=auth/none"
    echo "CredType=cred/none"
    echo "SlurmdSpoolDir=$tmp/spool"
    echo "StateSaveLocation=$tmp/state"
    echo "SlurmdPidFile=$tmp/slurmd.pid"
    echo "SlurmdLogFile=$tmp/slurmd.log"
    echo "SlurmdDebug=info"
    sed "s|^PluginDir=.*|PluginDir=$plugindir:$XPART_STOCK_PLUGINDIR|" "$S/etc/slurm.conf.fragment"
} >"$conf/slurm.conf"
grep -q "^PluginDir=$plugindir:" "$conf/slurm.conf" || fail "the fragment has no PluginDir line"
# The shipped cgroup.conf is for a pure v2 node; on a v1 or hybrid one (slurmd -G starts the
# cgroup plugin, which refuses v2 there) make the one change the file itself says to make.
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
    cp "$S/etc/cgroup.conf" "$conf/cgroup.conf"
else
    sed 's|^CgroupPlugin=cgroup/v2$|CgroupPlugin=cgroup/v1|' "$S/etc/cgroup.conf" >"$conf/cgroup.conf"
    grep -qx 'CgroupPlugin=cgroup/v1' "$conf/cgroup.conf" || fail "etc/cgroup.conf has no CgroupPlugin=cgroup/v2 line"
fi
cp "$S/etc/gres.conf.autodetect" "$conf/gres.conf"
cp "$S/etc/xpart.conf" "$conf/xpart.conf"

out=$(XPART_ROOT=$tmp/root XPART_NVML_LIBRARY=$nvml slurmd -G -f "$conf/slurm.conf" -N mig01 2>&1) ||
    fail "slurmd -G failed: $out"
# Slurm's own lines for what registered; the UUIDs from the node cache the installed discovery
# module wrote during that slurmd -G (the plugin's per-record lines are debug).
records=$(sed -n 's/.*Gres Name=gpu Type=\([^ ]*\) Count=1 .*/\1/p' <<<"$out")
grep -q "gres/gpu: 5 GPU partition(s) registered" <<<"$out" ||
    fail "slurmd -G: no xpart registration line: $out"
cached=$(python3 -c 'import json, sys
print("\n".join(sorted({p["uuid"] for g in json.load(open(sys.argv[1]))["gpus"] for p in g["partitions"] if p["uuid"].startswith("MIG-")})))' \
    "$tmp/root/run/xpart/node.json") || fail "slurmd -G wrote no node cache under $tmp/root/run/xpart"
[ "$cached" = "$uuids" ] ||
    fail "the node cache slurmd -G wrote differs from xpart discover: $cached"
declared=$(grep -o '^NodeName=mig01 .*Gres=[^ ]*' "$S/etc/slurm.conf.fragment" | sed 's/.*Gres=//' |
    tr ',' '\n' | sed 's/^gpu://' | sort | tr '\n' ' ')
registered=$(sort <<<"$records" | uniq -c | awk '{print $2 ":" $1}' | sort | tr '\n' ' ')
[ "$declared" = "$registered" ] ||
    fail "slurm.conf.fragment declares '$declared', the installed plugin registered '$registered'"
ok "installed slurmd loaded the installed gres_gpu.so: 5 MIG records as the fragment declares ($registered)"

if [ "${XPART_SPANK_PLUGIN:-no}" = yes ]; then
    spank=$plugindir/xpart.so
    [ -r "$spank" ] || fail "SPANK plugin not installed: $spank"
    example=$D${XPART_DOCDIR:?}/examples/plugstack.conf
    [ -r "$example" ] || fail "plugstack.conf example not installed: $example"
    command -v srun >/dev/null || fail "srun not installed"
    sed "s|^required /usr/lib/[^ ]*/xpart\.so\$|required $spank|" "$example" >"$conf/plugstack.conf"
    grep -qxF "required $spank" "$conf/plugstack.conf" ||
        fail "the installed plugstack.conf has no 'required /usr/lib/.../xpart.so' line"
    echo "PlugStackConfig=$conf/plugstack.conf" >>"$conf/slurm.conf"
    help=$(SLURM_CONF=$conf/slurm.conf srun --help 2>&1) || fail "srun --help with the plugstack.conf line: $help"
    for opt in --xpart-bind --xpart-confine --xpart-mps; do
        grep -qF -- "$opt" <<<"$help" || fail "srun --help through the installed xpart.so lacks $opt"
    done
    ok "installed srun loaded the installed xpart.so through the shipped plugstack.conf line"
fi
echo "$pass passed, 0 failed"
