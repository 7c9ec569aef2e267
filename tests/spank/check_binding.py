#!/usr/bin/python3
# check_binding.py NODE_JSON ROOT MODE < task reports: for every task, the partitions it was
# told of must be exactly the partitions it can open (MODE "exact"), or a subset of them
# ("advisory": --xpart-confine=no, the environment only advises; "launch": advisory under
# `xpart launch`, which narrows only the vendor list, so GPU_DEVICE_ORDINAL and
# SLURM_STEP_GPUS stay the step's and only have to contain it). A partition is openable when
# every device file only it has (its MIG CI capability, its XCP render node) opens: OK, or
# ENXIO/ENODEV (allowed by the cgroup, no device behind it; ENODEV where opening a render node
# loaded the kernel's drm module, as on a real Debian node); EPERM is refused.
# Prints one line per task; exits 1 on the first violation.
import json, sys
node = json.load(open(sys.argv[1]))
root, mode = sys.argv[2], sys.argv[3]
ALLOWED = ("OK", "ENXIO", "ENODEV")

# Records in the gres plugin's order (GPUs with a pending MIG change register none).
records = [(g, p) for g in node["gpus"] if g["mode"] != "mig-pending" for p in g["partitions"]]
count = {}
for g, p in records:
    for f in p["device_files"]:
        count[f["path"]] = count.get(f["path"], 0) + 1
own = [[root + f["path"] for f in p["device_files"] if count[f["path"]] == 1] for g, p in records]
by_uuid = {p["uuid"]: i for i, (g, p) in enumerate(records) if g["vendor"] == "nvidia"}

def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)

tasks = [json.loads(l) for l in sys.stdin if l.startswith("{")]
if not tasks:
    fail("no task reported")
for t in sorted(tasks, key=lambda t: int(t["env"]["SLURM_LOCALID"])):
    env, opened = t["env"], t["open"]
    tid = env["SLURM_LOCALID"]
    openable = {i for i, files in enumerate(own)
                if files and all(opened.get(f) in ALLOWED for f in files)}
    for i, files in enumerate(own):
        if any(opened.get(f) not in ALLOWED + ("EPERM",) for f in files):
            fail(f"task {tid}: unexpected open() result {[opened.get(f) for f in files]}")
    slurm = {int(x) for x in env.get("SLURM_STEP_GPUS", "").split(",") if x != ""}
    told = set()
    # "-1": told no device, which no row's task may be (each can open one of the step's).
    nothing = env.get("CUDA_VISIBLE_DEVICES", env.get("ROCR_VISIBLE_DEVICES")) == "-1"
    if nothing:
        fail(f"task {tid}: told no device (-1)")
    if "CUDA_VISIBLE_DEVICES" in env and not nothing:
        for tok in env["CUDA_VISIBLE_DEVICES"].split(","):
            if tok not in by_uuid:
                fail(f"task {tid}: CUDA_VISIBLE_DEVICES token {tok} is not a partition of this node")
            told.add(by_uuid[tok])
    if "ROCR_VISIBLE_DEVICES" in env and not nothing:
        # ROCm counts the KFD nodes whose render node this process can open, in KFD order.
        visible = sorted((i for i in openable if records[i][0]["vendor"] == "amd"),
                         key=lambda i: records[i][1]["kfd_node"])
        for tok in env["ROCR_VISIBLE_DEVICES"].split(","):
            if not tok.isdigit() or int(tok) >= len(visible):
                fail(f"task {tid}: ROCR_VISIBLE_DEVICES={env['ROCR_VISIBLE_DEVICES']} names no "
                     f"openable XCP (it can open {len(visible)})")
            told.add(visible[int(tok)])
    vendor = env.get("CUDA_VISIBLE_DEVICES", env.get("ROCR_VISIBLE_DEVICES"))
    if mode == "launch":
        if not told <= slurm:
            fail(f"task {tid}: told {sorted(told)}, outside SLURM_STEP_GPUS={sorted(slurm)}")
    elif env.get("GPU_DEVICE_ORDINAL") != vendor:
        fail(f"task {tid}: GPU_DEVICE_ORDINAL={env.get('GPU_DEVICE_ORDINAL')} but the vendor list is {vendor}")
    if mode != "launch" and slurm != told:
        fail(f"task {tid}: SLURM_STEP_GPUS={sorted(slurm)} but the vendor list names {sorted(told)}")
    ok = told == openable if mode == "exact" else told <= openable and told
    print(f"task {tid}: told {sorted(told)} openable {sorted(openable)} cgroup {t['cgroup'].rsplit('/', 1)[-1]}")
    if not ok:
        fail(f"task {tid}: told {sorted(told)}, can open {sorted(openable)} ({mode})")
