# task_probe.py RECORDS ROOT: run inside each task. Compares what the gres plugin told the task
# (SLURM_STEP_GPUS, CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL) with the
# records whose every device file it can open (open(2): OK/ENXIO/ENODEV = allowed by the
# device cgroup, EPERM = denied). RECORDS: "index type uuid files" lines (slurmd -G); ROOT: the
# simulated node, for the KFD topology ROCm counts in. Prints one line:
#   task <localid> told=<SLURM_STEP_GPUS> open=<indices> OK|MISMATCH <what differs>
import errno, os, re, sys

records = []
for line in open(sys.argv[1]):
    idx, _type, uuid, files = line.split()
    records.append((int(idx), uuid, files.split(',')))

def openable(path):
    try:
        os.close(os.open(path, os.O_RDONLY))
    except OSError as e:
        return e.errno in (errno.ENXIO, errno.ENODEV)
    return True

def render_minor(files):
    for f in files:
        m = re.search(r'/renderD(\d+)$', f)
        if m:
            return int(m.group(1))
    return None

opens = [i for i, _u, files in records if all(openable(f) for f in files)]
nvidia = {i for i, _u, files in records if any('/dev/nvidia' in f for f in files)}
amd = {i for i, _u, files in records if render_minor(files) is not None}
by_uuid = {u: i for i, u, _f in records if i in nvidia}

# ROCm numbers the GPU agents it can open in KFD node order.
kfd_of_minor = {}
topo = os.path.join(sys.argv[2], 'sys/class/kfd/kfd/topology/nodes')
if os.path.isdir(topo):
    for n in os.listdir(topo):
        for line in open(os.path.join(topo, n, 'properties')):
            k, _, v = line.partition(' ')
            if k == 'drm_render_minor' and int(v) > 0:
                kfd_of_minor[int(v)] = int(n)
rocm_order = sorted((i for i in opens if i in amd),
                    key=lambda i: kfd_of_minor[render_minor(records[i][2])])

def tokens(name):
    v = os.environ.get(name)
    return None if v is None else v.split(',')

def told(name, resolve):
    """The records a variable names; None when unset; 'bad' for a token naming none."""
    toks = tokens(name)
    if toks is None:
        return None
    out = []
    for t in toks:
        i = resolve(t)
        if i is None:
            return 'bad:' + t
        out.append(i)
    return sorted(out)

def index_in(lst):
    return lambda t: lst[int(t)] if t.isdigit() and int(t) < len(lst) else None

want_all = sorted(opens) or None
want_nv = sorted(i for i in opens if i in nvidia) or None
want_amd = sorted(i for i in opens if i in amd) or None
checks = [
    ('SLURM_STEP_GPUS', told('SLURM_STEP_GPUS', lambda t: int(t) if t.isdigit() else None), want_all),
    ('CUDA_VISIBLE_DEVICES', told('CUDA_VISIBLE_DEVICES', by_uuid.get), want_nv),
    ('ROCR_VISIBLE_DEVICES', told('ROCR_VISIBLE_DEVICES', index_in(rocm_order)), want_amd),
    ('GPU_DEVICE_ORDINAL', told('GPU_DEVICE_ORDINAL',
                                lambda t: by_uuid.get(t, index_in(sorted(opens))(t))), want_all),
]
bad = ['%s=%s names %s' % (n, os.environ.get(n, '<unset>'), got) for n, got, want in checks
       if got != want]
def ranges(ids):  # 0,1,2,5 -> 0-2,5
    out = []
    for i in ids:
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return ','.join(str(a) if a == b else '%d-%d' % (a, b) for a, b in out) or '-'

print('task %s told=%s open=%s %s' % (os.environ.get('SLURM_LOCALID', '?'),
                                      os.environ.get('SLURM_STEP_GPUS', '<unset>'),
                                      ranges(opens),
                                      'MISMATCH ' + '; '.join(bad) if bad else 'OK'))
