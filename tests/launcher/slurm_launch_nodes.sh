# The two simulated nodes of the launcher's Slurm tests and benchmark, on a private cluster
# (tests/integration/slurm_cluster.sh): m1 = the A100 MIG guide node, a1 = 8 x MI300X in CPX
# mode (64 XCPs), our gres/gpu plugin, no gres.conf. Source after slurm_cluster.sh with B and
# S set, then call launch_cluster_start: it sets XP_NODE_m1/a1, $XP_DIR/{m1,a1}.json (the
# discovered nodes) and XL, a wrapper running xpart with XPART_ROOT of the node it runs on.

# node_py JSON EXPR: evaluates a Python expression over the discovered node `n`.
node_py() { python3 -c "import json, sys; n = json.load(open(sys.argv[1])); print($2)" "$1"; }
# The node's Gres= value: gpu:<type>:<count> per partition type.
gres_of() {
  node_py "$1" "','.join('gpu:%s:%d' % (t, c) for t, c in __import__('collections').Counter(p['type'] for g in n['gpus'] for p in g['partitions']).items())"
}

launch_cluster_start() {
  [ -x "$B/xpart" ] || fail "$B/xpart not built"
  [ -x "$B/xpart-sim" ] || fail "$B/xpart-sim not built"
  [ -x "$B/sim/fake_mps/nvidia-cuda-mps-control" ] || fail "fake MPS daemon not built"
  [ -r "$B/gres_plugin/.libs/gres_gpu.so" ] || fail "gres_gpu.so not built (configure --with-slurm-source)"
  FAKE_MPS=$B/sim/fake_mps/nvidia-cuda-mps-control
  "$B/xpart-sim" build "$S/sim/specs/a100-guide.json" "$XP_DIR/m1" >/dev/null
  "$B/xpart-sim" build "$S/sim/specs/mi300x-cpx-8gpu.json" "$XP_DIR/a1" >/dev/null
  M_NVML=$XP_DIR/m1/usr/lib/xpart-sim/libnvidia-ml.so.1
  XPART_NVML_LIBRARY=$M_NVML "$B/xpart" --root "$XP_DIR/m1" discover --json >"$XP_DIR/m1.json"
  "$B/xpart" --root "$XP_DIR/a1" discover --json >"$XP_DIR/a1.json"
  cluster_node m1 "$(gres_of "$XP_DIR/m1.json")" XPART_ROOT="$XP_DIR/m1" XPART_NVML_LIBRARY="$M_NVML"
  cluster_node a1 "gpu:cpx:64" XPART_ROOT="$XP_DIR/a1"
  # The MIG node offers the feature jobs ask for to get the Prolog's MPS daemons
  # (etc/prolog.d/xpart-mps.sh: sbatch/srun --constraint=xpart-mps).
  XP_NODE_LINES=${XP_NODE_LINES/"NodeName=$XP_NODE_m1 "/"NodeName=$XP_NODE_m1 Features=xpart-mps "}
  cluster_start "$B/gres_plugin/.libs:$(stock_plugindir)"

  # Tasks get srun's environment, not slurmd's: this wrapper points xpart at its node's root.
  XL=$XP_DIR/xl
  cat >"$XL" <<W
#!/bin/sh
case "\$SLURMD_NODENAME" in
  $XP_NODE_m1) export XPART_ROOT=$XP_DIR/m1 XPART_NVML_LIBRARY=$M_NVML ;;
  $XP_NODE_a1) export XPART_ROOT=$XP_DIR/a1 ;;
  *) echo "xl: unknown node '\$SLURMD_NODENAME'" >&2; exit 1 ;;
esac
exec "$B/xpart" "\$@"
W
  chmod +x "$XL"
}
