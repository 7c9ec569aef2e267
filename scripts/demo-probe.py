#!/usr/bin/env python3
"""Runs inside each rank of the demo jobs: which partition the rank got and what it can open.

argv: NODE_JSON (xpart discover --json of this node). Reads XPART_PARTITION (set by the
SPANK plugin or xpart launch), XPART_STEP_GPUS or SLURM_STEP_GPUS (the step's GRES indices),
XPART_CPUS, CUDA_MPS_PIPE_DIRECTORY (its MPS daemon: found in the records xpart keeps, checked
against /proc).
Prints one line: own partition files (must open: ENXIO = allowed, no driver behind it), the
step's other partitions, and the rest of the node (must be refused: EPERM).
"""
import errno
import json
import os
import sys


def probe(path):
    try:
        os.close(os.open(path, os.O_RDONLY))
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def records_of(pipe):
    """The records file naming the daemon of this pipe directory (<dir>/<instance>/pipe): root's
    <job dir>/mps when the Prolog started it (<job dir>/user/mps/...), root's
    <job dir>/mps.step_<s> when slurmstepd did (<job dir>/user/mps_step_<s>/...), else
    <dir>/daemons."""
    base = os.path.dirname(os.path.dirname(pipe))
    job_dir = os.path.dirname(os.path.dirname(base))
    if base.endswith("/user/mps"):
        return os.path.join(job_dir, "mps")
    if os.path.basename(base).startswith("mps_step_"):
        return os.path.join(job_dir, "mps." + os.path.basename(base)[4:])
    return os.path.join(base, "daemons")


def log_tail(pipe):
    """The last lines of the daemon's control.log (<dir>/<instance>/log): why it ended."""
    try:
        lines = open(os.path.join(os.path.dirname(pipe), "log", "control.log")).read().splitlines()
        return " / ".join(lines[-3:])
    except OSError as e:
        return "no control.log (%s)" % e


def mps_daemon(pipe):
    """The recorded daemon of this rank's instance, checked to be that very process (pid, start
    time, real uid: no pid file, NVIDIA's daemon writes none)."""
    instance = os.path.basename(os.path.dirname(pipe))
    records = records_of(pipe)
    try:
        rec = [line.split() for line in open(records) if line.split()[:1] == [instance]]
        if len(rec) != 1:
            return "NOT RECORDED in %s" % records
        _, _, pid, start, uid = rec[0]
        stat = open("/proc/%s/stat" % pid).read()
        fields = stat[stat.rfind(")") + 2:].split()
        real = next(l.split()[1] for l in open("/proc/%s/status" % pid) if l.startswith("Uid:"))
        if fields[0] == "Z" or fields[19] != start or real != uid:
            return "NOT RUNNING (pid %s is no longer the recorded daemon; %s: %s)" % (
                pid, "state " + fields[0] if fields[19] == start else "other process", log_tail(pipe))
        return "pid %s alive as uid %s, %s%% threads" % (
            pid, uid, os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "100"))
    except (OSError, ValueError, StopIteration) as e:
        return "NOT RUNNING (%s; %s)" % (e, log_tail(pipe))


def main():
    node = json.load(open(sys.argv[1]))
    root = os.environ.get("XPART_ROOT", "")
    # GRES index order = discovery order of bindable partitions (pending MIG GPUs have none).
    parts = [(g, p) for g in node["gpus"] for p in g["partitions"]]
    mine_id = os.environ["XPART_PARTITION"]
    step_gpus = os.environ.get("XPART_STEP_GPUS", os.environ.get("SLURM_STEP_GPUS", ""))
    step = {int(i) for i in step_gpus.split(",") if i != ""}

    def key(g, p):
        return p["uuid"] if g["vendor"] == "nvidia" else "%s/%d" % (p["uuid"], p["index"])

    def own_files(p):
        return [root + f["path"] for f in p["device_files"] if not f["shared"]]

    mine = [(i, g, p) for i, (g, p) in enumerate(parts) if key(g, p) == mine_id]
    if len(mine) != 1:
        print("rank %s: partition %s not found on this node" % (os.environ.get("SLURM_PROCID"), mine_id))
        return 1
    mi, mg, mp = mine[0]
    mine_files = set(own_files(mp))

    step_files = {f for i in step for f in own_files(parts[i][1])}

    def tally(indices, minus):
        # A file shared with a partition the rank may use (the parent /dev/nvidiaN, a GI's
        # cap) is not another partition's: leave it out of that partition's count.
        files = sorted({f for i in indices for f in own_files(parts[i][1])} - minus)
        res = [probe(f) for f in files]
        return "%d/%d %s" % (len(res), len(files), ",".join(sorted(set(res))) or "-")

    own = [probe(f) for f in sorted(mine_files)]
    peers = [i for i in step if i != mi]
    rest = [i for i in range(len(parts)) if i not in step]
    mps = os.environ.get("CUDA_MPS_PIPE_DIRECTORY")
    daemon = "-"
    if mps:
        daemon = mps_daemon(mps)
    print("rank %-2s %-11s %-44s own %d/%d %s | step's other partitions %s | rest of node %s | cpus %s | mps %s%s" % (
        os.environ.get("SLURM_PROCID", "?"), mp["type"], mine_id, len(own), len(own),
        ",".join(sorted(set(own))), tally(peers, mine_files), tally(rest, step_files),
        os.environ.get("XPART_CPUS", "-"), daemon,
        (" " + os.path.basename(os.path.dirname(mps))) if mps else ""))
    return 0


sys.exit(main())
