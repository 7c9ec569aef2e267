# Sourced by the security tests: what /proc says of a process, each answer from ONE read of its
# stat. Two reads (an exists test, then status) call a process alive that was reaped between
# them: where init reaps orphans late (this machine's reaps every 2 s) a killed process stays
# a zombie that long, and a check landing on the reap read a dead sleeper as a survivor.

# proc_stat PID: the fields of /proc/PID/stat after "pid (comm) " (state, ppid, ...: field 3
# on); fails once it is gone.
proc_stat() {
  local s
  { s=$(<"/proc/$1/stat"); } 2>/dev/null || return 1
  echo "${s##*) }"
}
# running PID [START]: it exists, is neither a zombie nor dead, and (given START) started then:
# a pid the kernel handed to another process since is not the one recorded.
running() {
  local s
  s=$(proc_stat "$1") || return 1
  case $s in Z*|X*) return 1 ;; esac
  [ -z "${2:-}" ] || [ "$(cut -d' ' -f20 <<<"$s")" = "$2" ]
}
# start_time PID: when it started (stat field 22); with the pid, it names one process.
start_time() { local s; s=$(proc_stat "$1") && cut -d' ' -f20 <<<"$s"; }
# mps_daemons EXE DIR: the running control daemons of program EXE whose pipe directory is below
# DIR, parents only (the fake's servers are its children): "pid uid" lines.
mps_daemons() {
  local exe p s ppid uid
  exe=$(readlink -f "$1")
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/exe" 2>/dev/null)" = "$exe" ] || continue
    tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -q "^CUDA_MPS_PIPE_DIRECTORY=$2/" || continue
    s=$(proc_stat "${p#/proc/}") || continue
    case $s in Z*|X*) continue ;; esac
    ppid=$(cut -d' ' -f2 <<<"$s")
    [ "$(readlink "/proc/$ppid/exe" 2>/dev/null)" = "$exe" ] && continue
    uid=$(awk '/^Uid:/ {print $2}' "$p/status" 2>/dev/null)
    [ -n "$uid" ] && echo "${p#/proc/} $uid"
  done
  true
}
