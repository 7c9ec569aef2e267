# The reshape tests' slurmds as a site runs them on a systemd node: each NodeName of the cluster
# an instance of the packaged slurmd@.service (etc/systemd), which the flow's RebootProgram
# switches (XPART_SLURMD_UNIT). Sourced by reshape_host.sh after slurm_cluster.sh; on where
# systemd is PID 1 and the unit is installed (slurmd_units_wanted), cluster_start and
# cluster_stop call these instead of running slurmd themselves.

slurmd_units_wanted() {
  [ "$(ps -o comm= -p 1)" = systemd ] && systemctl cat slurmd@.service >/dev/null 2>&1
}

# A runtime drop-in per NodeName (gone at the next boot; in XP_UNIT_DIR=/etc/systemd/system
# where the cluster must outlive a boot, tests/vm/reshape_power_cut_test): this cluster's slurm.conf and the
# node's settings (cluster_node's and cluster_cloud_node's VAR=VALUE pairs) in place of the
# site's /etc/default files, which name the VM's packaged node; the unit's other environment
# files (the reboot flag) kept. `%` is a unit specifier: doubled.
slurmd_units_start() {
  local n kv files dir=${XP_UNIT_DIR:-/run/systemd/system}
  files=$(systemctl cat slurmd@.service | sed -n 's/^EnvironmentFile=//p' | grep -v '/etc/default/')
  # As an admin sets a host up for the flow: the plain slurmd.service disabled and stopped
  # (the template Conflicts= it), put back as it was when the test ends.
  XP_RESTORE_SLURMD= XP_REENABLE_SLURMD=
  ! systemctl is-active -q slurmd.service || XP_RESTORE_SLURMD=1
  ! systemctl is-enabled -q slurmd.service 2>/dev/null || { XP_REENABLE_SLURMD=1; systemctl disable --quiet slurmd.service; }
  for n in "${XP_NODES[@]}" "${XP_CLOUD_NODES[@]}"; do
    mkdir -p "$dir/slurmd@$n.service.d"
    local envs; node_env_of "$n"
    {
      printf '[Service]\nEnvironmentFile=\n'
      printf 'EnvironmentFile=%s\n' $files
      for kv in "SLURM_CONF=$SLURM_CONF" "${envs[@]}"; do printf 'Environment="%s"\n' "${kv//%/%%}"; done
    } >"$dir/slurmd@$n.service.d/xpart-test.conf"
  done
  systemctl daemon-reload
  # The ExecStartPre asks slurmctld for the node's Gres=: once it answers.
  for _ in $(seq 100); do scontrol ping >/dev/null 2>&1 && break; sleep 0.1; done
  systemctl stop slurmd.service
  for n in "${XP_NODES[@]}"; do
    systemctl enable --now --quiet "slurmd@$n.service" || { journalctl -n 20 --no-pager -u "slurmd@$n.service"; fail "slurmd@$n did not start"; }
  done
}

slurmd_units_stop() {
  local n dir=${XP_UNIT_DIR:-/run/systemd/system}
  for n in "${XP_NODES[@]}" "${XP_CLOUD_NODES[@]}"; do
    systemctl disable --now --quiet "slurmd@$n.service" 2>/dev/null || true
    rm -rf "$dir/slurmd@$n.service.d" "/run/xpart/slurmd-reboot-$n"
  done
  systemctl daemon-reload
  systemctl reset-failed 'slurmd@*' 2>/dev/null || true
  [ -z "${XP_REENABLE_SLURMD:-}" ] || systemctl enable --quiet slurmd.service || true
  [ -z "${XP_RESTORE_SLURMD:-}" ] || systemctl start slurmd.service || true
}

# unit_states NODE...: "NODE enabled active" per NodeName, as systemctl has its unit.
unit_states() {
  local n
  for n; do echo "$n $(systemctl is-enabled "slurmd@$n.service" 2>/dev/null) $(systemctl is-active "slurmd@$n.service" 2>/dev/null)"; done
}

# expect_units UP DOWN...: UP's unit enabled and running, each DOWN's neither (no-op without units).
expect_units() {
  [ -n "${XP_SLURMD_UNITS:-}" ] || return 0
  local up=$1 n want
  shift
  want="$up enabled active"
  for n; do want+=$'\n'"$n disabled inactive"; done
  expect_eq "systemctl: slurmd@ units" "$(unit_states "$up" "$@")" "$want"
}
