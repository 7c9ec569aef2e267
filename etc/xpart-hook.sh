# Sourced first by each of xpart's Slurm hooks, from beside them (the package installs them
# together under /usr/share/xpart/hooks/etc: link a hook into place rather than copy it):
#   . "$(dirname "$(readlink -f "$0")")/../xpart-hook.sh" SETTINGS
# Reads /etc/default/xpart, every hook's settings, then /etc/default/SETTINGS when given
# (xpart-mps, xpart-node-check, xpart-reshape: the older per-hook files), and finds the xpart
# program: XPART when set, else xpart on PATH, else /usr/bin/xpart, else /usr/local/bin/xpart.
# Slurm 26.05 runs the RebootProgram with SLURM_NODE_NAME alone in its environment: no PATH
# exported (bash's own default has "." in it), so one is set.
case $(export -p) in *" PATH="*) ;; *) export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin ;; esac
[ -r /etc/default/xpart ] && . /etc/default/xpart
[ -n "${1:-}" ] && [ -r "/etc/default/$1" ] && . "/etc/default/$1"
if [ -z "${XPART:-}" ]; then
  XPART=$(command -v xpart) || { XPART=/usr/bin/xpart; [ -x "$XPART" ] || XPART=/usr/local/bin/xpart; }
fi
