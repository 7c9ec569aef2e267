# Slurm's own gpu/nvml plugin (gpu_nvml.so), built from the Slurm source tree xpart was
# configured with and NVIDIA's nvml.h, run by the real slurmd against a simulated node.
# Source after slurm_cluster.sh. slurm_nvml_build DIR: builds DIR/gpu_nvml.so and
# DIR/node_root_preload.so, or SKIPs (77) when the source tree or nvml.h is missing.
# slurm_nvml_env ROOT DIR: the VAR=VALUE list that makes slurmd use it on the node at ROOT:
# the node's fake NVML (as libnvidia-ml.so and .so.1, the names Slurm dlopens and links) and
# the LD_PRELOAD that reads /proc/driver/nvidia* and /dev/nvidia* under ROOT.
slurm_nvml_build() {
  local dir=$1 src=${XPART_SLURM_SOURCE:-} nvml_h=${XPART_NVIDIA_NONFREE:-}/usr/include/nvml.h
  local here cc=${CC:-cc}
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  if [ -z "$src" ] || [ ! -r "$src/config.h" ] || [ ! -r "$src/src/plugins/gpu/nvml/gpu_nvml.c" ]; then
    echo "SKIP: no configured Slurm source tree in XPART_SLURM_SOURCE='$src' (configure --with-slurm-source)"
    exit 77
  fi
  # 22.05 keeps gres.h in src/common (23.02 moved it to src/interfaces). The expectations of
  # these tests (fatal() on an empty MIG GPU, the attribute-only MIG names) are 22.05's.
  if [ ! -r "$src/src/common/gres.h" ]; then
    echo "SKIP: $src is not a Slurm 22.05 tree: these comparisons are written for 22.05's gpu/nvml"
    exit 77
  fi
  if [ ! -r "$nvml_h" ]; then
    echo "SKIP: no nvml.h under XPART_NVIDIA_NONFREE='${XPART_NVIDIA_NONFREE:-}' (run scripts/nvidia-nonfree)"
    exit 77
  fi
  mkdir -p "$dir/lib"
  # As src/plugins/gpu/nvml/Makefile.am builds it, with MIG support (NVML API 11 has it).
  "$cc" -shared -fPIC -O1 -w -DHAVE_CONFIG_H -DHAVE_MIG_SUPPORT=1 -I"$src" -I"$src/src/common" \
    -I"$(dirname "$nvml_h")" "$src/src/plugins/gpu/nvml/gpu_nvml.c" \
    "$src/src/plugins/gpu/common/gpu_common.c" -o "$dir/gpu_nvml.so" -lm \
    "$XPART_BUILDDIR/sim/fake_nvml/.libs/libnvidia-ml.so.1" ||
    fail "building Slurm's gpu_nvml.so from $src"
  "$cc" -Wall -Wextra -Werror -shared -fPIC -o "$dir/node_root_preload.so" \
    "$here/node_root_preload.c" -ldl || fail "building node_root_preload.so"
}

slurm_nvml_env() {
  local root=$1 dir=$2 lib
  lib=$root/usr/lib/xpart-sim/libnvidia-ml.so.1
  mkdir -p "$dir/lib/$(basename "$root")"
  ln -sfn "$lib" "$dir/lib/$(basename "$root")/libnvidia-ml.so.1"
  ln -sfn "$lib" "$dir/lib/$(basename "$root")/libnvidia-ml.so"
  echo "XPART_ROOT=$root XPART_SIM_SPEC=$root/usr/lib/xpart-sim/nvml-spec.json" \
       "LD_LIBRARY_PATH=$dir/lib/$(basename "$root") LD_PRELOAD=$dir/node_root_preload.so"
}

# slurm_nvml_conf DIR NODE GRES PLUGINDIR: DIR/etc/slurm.conf for NODE and DIR/etc/gres.conf
# "AutoDetect=nvml"; echoes the slurm.conf path. Enough for slurmd -G and for a slurmd that
# loads its GRES and stops. PLUGINDIR: the gpu_nvml.so directory then the stock one, or the
# xpart plugin's directory then the stock one.
slurm_nvml_conf() {
  local dir=$1 node=$2 gres=$3 plugindir=$4
  mkdir -p "$dir/etc" "$dir/spool"
  cat >"$dir/etc/slurm.conf" <<CONF
ClusterName=${XP_CLUSTER}s
SlurmctldHost=$XP_HOST(127.0.0.1)
SlurmctldPort=$(free_port)
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdSpoolDir=$dir/spool
SlurmdPidFile=$dir/slurmd.pid
SlurmdLogFile=$dir/slurmd.log
SlurmdDebug=debug
PluginDir=$plugindir
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
GresTypes=gpu
NodeName=$node NodeHostname=$XP_HOST NodeAddr=127.0.0.1 Port=$(free_port) $XP_LAYOUT RealMemory=1000 Gres=$gres
PartitionName=xp Nodes=ALL Default=YES
CONF
  echo "AutoDetect=nvml" >"$dir/etc/gres.conf"
  echo "$dir/etc/slurm.conf"
}

# The host's CPUs as a simulator "cpus" list: Slurm converts NVML's affinity with the host's
# own CPU numbering and fails on CPUs the host does not have.
host_cpus() { echo "0-$(($(nproc --all) - 1))"; }
