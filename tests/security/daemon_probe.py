#!/usr/bin/python3
# Inside a job's task, as its user: daemon_probe.py PROBE FILES RUN_DIR. For every process of
# this user that is an MPS control daemon of this job (CUDA_MPS_PIPE_DIRECTORY under
# RUN_DIR/job_<SLURM_JOB_ID>/), what the user can open THROUGH it: ptrace_open_probe.py (PROBE)
# attaches and opens each file named in FILES inside the daemon. One JSON line per daemon:
# {"pid", "uuid" (its CUDA_VISIBLE_DEVICES), "open": {file: OK|ENXIO|EPERM|...}}, then one with
# what the task itself can open ({"pid": "self", ...}).
import errno, json, os, subprocess, sys

probe, files_list, run_dir = sys.argv[1:4]
files = open(files_list).read().split()
job_dir = os.path.join(run_dir, "job_" + os.environ["SLURM_JOB_ID"]) + "/"
me = os.getuid()

def environ_of(pid):
    try:
        raw = open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
    except OSError:
        return None
    return dict(e.decode(errors="replace").split("=", 1) for e in raw if b"=" in e)

for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
    try:
        if os.stat("/proc/" + pid).st_uid != me:
            continue
        argv = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")
    except OSError:
        continue
    env = environ_of(pid)
    if not env or not env.get("CUDA_MPS_PIPE_DIRECTORY", "").startswith(job_dir):
        continue
    if len(argv) < 2 or argv[1] != b"-f":  # the daemon, not a client or a server fork
        continue
    out = subprocess.run([sys.executable, probe, pid] + files, capture_output=True, text=True)
    if out.returncode != 0:
        print(json.dumps({"pid": pid, "error": out.stderr.strip()}), flush=True)
        continue
    opened = dict(line.rsplit(" ", 1) for line in out.stdout.splitlines())
    print(json.dumps({"pid": pid, "uuid": env.get("CUDA_VISIBLE_DEVICES", ""), "open": opened}), flush=True)

own = {}
for path in files:
    try:
        os.close(os.open(path, os.O_RDONLY))
        own[path] = "OK"
    except OSError as e:
        own[path] = errno.errorcode.get(e.errno, str(e.errno))
print(json.dumps({"pid": "self", "uuid": os.environ.get("CUDA_VISIBLE_DEVICES", ""), "open": own}), flush=True)
