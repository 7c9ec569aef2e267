#!/usr/bin/env python3
"""An unprivileged user attacking what root's MPS Prolog/Epilog touch, in a loop.

Run as the attacking job user while root runs the real hooks for job after job. Each kind of
attack is tried again and again until the stop file appears, against whatever job the test
names in the job file. What it aims at (root-owned): TARGET_DIR (a directory) and
TARGET_FILE (a 0600 file); the pids of VICTIMS (root's and another user's processes).
INSTANCES names the MPS instances the Prolog makes (gpu2-gi7,...): their paths are attacked
in every round, whether or not they exist yet.
Prints one line: "<kind> <attempts>" for each kind, space separated.
usage: mps_racer.py RUN_DIR JOB_FILE STOP_FILE TARGET_DIR TARGET_FILE INSTANCES VICTIM_PID...
"""
import os
import sys

run_dir, job_file, stop_file, target_dir, target_file, names = sys.argv[1:7]
victims = [int(p) for p in sys.argv[7:]]
counts = {k: 0 for k in ("swap-mps-dir", "link-log-file", "link-pipe-dir", "plant-records",
                         "plant-pid-file", "squat-next-job", "replace-leaf")}


def identity(pid):
    """'pid start uid' as the kernel says, or None."""
    try:
        stat = open("/proc/%d/stat" % pid).read()
        start = stat[stat.rindex(")") + 2:].split()[19]
        uid = [l.split()[1] for l in open("/proc/%d/status" % pid) if l.startswith("Uid:")][0]
        return "%d %s %s" % (pid, start, uid)
    except (OSError, ValueError, IndexError):
        return None


def quietly(fn, *args):
    try:
        fn(*args)
    except OSError:
        pass


def force_link(target, path):
    quietly(os.unlink, path)
    quietly(os.rename, path, path + ".gone")  # a directory: move it aside
    quietly(os.symlink, target, path)


def write(path, text):
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError:
        pass


records = "".join("gpu0-gi%d MIG-planted %s\n" % (i, identity(v)) for i, v in enumerate(victims) if identity(v))
while not os.path.exists(stop_file):
    try:
        job = open(job_file).read().strip()
    except OSError:
        continue
    if not job.isdigit():  # read while the test rewrote it
        continue
    leaf = os.path.join(run_dir, "job_" + job, "user")
    mps = os.path.join(leaf, "mps")
    # Every other job, attacks inside the MPS directory (any of them makes that start fail);
    # in between, only the others, so that starts run under attack too.
    if (int(job) // 2) % 2 == 0:
        for inst in names.split(","):
            quietly(os.makedirs, os.path.join(mps, inst, "log"))
            force_link(target_file, os.path.join(mps, inst, "log", "control.log"))
            counts["link-log-file"] += 1
            force_link(target_dir, os.path.join(mps, inst, "pipe"))
            counts["link-pipe-dir"] += 1
        # The whole MPS directory swapped for a link to root's directory.
        quietly(os.rename, mps, mps + ".old")
        quietly(os.symlink, target_dir, mps)
        counts["swap-mps-dir"] += 1
    for inst in names.split(","):
        write(os.path.join(mps, inst, "pipe", "nvidia-cuda-mps-control.pid"), "%d\n" % victims[0])
        counts["plant-pid-file"] += 1
    # Records the Epilog's user-side stop reads, naming root's and another user's processes.
    quietly(os.makedirs, os.path.join(leaf, "step_0"))
    write(os.path.join(leaf, "step_0", "daemons"), records)
    counts["plant-records"] += 1
    # Names only root may create.
    try:
        nxt = os.path.join(run_dir, "job_%d" % (int(job) + 1))
        os.mkdir(nxt, 0o777)
        print("SQUATTED " + nxt, file=sys.stderr)
    except (OSError, ValueError):
        pass
    counts["squat-next-job"] += 1
    try:
        os.rename(leaf, leaf + ".x")
        print("RENAMED " + leaf, file=sys.stderr)
    except OSError:
        pass
    quietly(os.symlink, target_dir, leaf + ".link")
    counts["replace-leaf"] += 1
print(" ".join("%s %d" % kv for kv in counts.items()))
