#!/usr/bin/python3
# Inside a task: task_report.py FILES [OUT_DIR]. One JSON line with what the task was told (the
# GPU variables) and what it can open (open(2) on each file named in FILES: OK/ENXIO =
# openable, as a node without a driver answers; EPERM = denied by the device cgroup), printed
# or written to OUT_DIR/task.<local id> (srun interleaves long lines of several tasks).
import errno, json, os, sys
opened = {}
for path in open(sys.argv[1]).read().split():
    try:
        os.close(os.open(path, os.O_RDONLY))
        opened[path] = "OK"
    except OSError as e:
        opened[path] = errno.errorcode.get(e.errno, str(e.errno))
names = ("SLURM_LOCALID", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
         "SLURM_STEP_GPUS", "XPART_PARTITION", "XPART_CPUS", "CUDA_MPS_PIPE_DIRECTORY",
         "CUDA_MPS_LOG_DIRECTORY", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")
cgroup = [l.split(":", 2)[2].strip() for l in open("/proc/self/cgroup") if ":devices:" in l]
line = json.dumps({"env": {n: os.environ[n] for n in names if n in os.environ},
                   "open": opened, "cgroup": cgroup[0] if cgroup else "",
                   "cpus": sorted(os.sched_getaffinity(0))})
if len(sys.argv) > 2:
    with open(os.path.join(sys.argv[2], "task." + os.environ["SLURM_LOCALID"]), "w") as f:
        f.write(line + "\n")
else:
    print(line, flush=True)
