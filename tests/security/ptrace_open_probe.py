#!/usr/bin/env python3
"""Make a process of one's own open device files, through ptrace, and say what it got.

The security tests run this as a job's user against a process of that same user (an MPS
control daemon xpart started for the job) to show that ptracing it gains nothing: the
target can open no device file that the job's devices cgroup refuses, so each file gives
the same answer here as the in-process probe run inside the job does.

usage: ptrace_open_probe.py PID FILE...
Prints "<file> OK" or "<file> <ERRNO name>" per file (the result of an openat() run by
the target). Exit 0; 3 (one line on stderr) if the pid cannot be attached (EPERM: another
user's process, Yama, non-dumpable); 2 not x86-64 Linux; 1 any other failure.

How: PTRACE_SEIZE + PTRACE_INTERRUPT; the path goes below the target's stack pointer past
the 128-byte red zone (PTRACE_POKEDATA); RIP is pointed at a `syscall` instruction and
PTRACE_SYSCALL runs the target to that syscall's exit (no single-step: its SIGTRAP would
reset a blocked or ignored SIGTRAP in the target); the result is read from RAX; an opened
fd is closed the same way; the original memory and registers are put back and the target
detached. Nothing is left behind in the target.
"""
import ctypes
import errno
import os
import platform
import signal
import sys

if not sys.platform.startswith("linux") or platform.machine() != "x86_64" \
        or ctypes.sizeof(ctypes.c_void_p) != 8:
    print("ptrace_open_probe: needs x86-64 Linux (and a 64-bit Python), not %s %s"
          % (sys.platform, platform.machine()), file=sys.stderr)
    sys.exit(2)

PEEKDATA, POKEDATA, CONT, GETREGS, SETREGS, SYSCALL, DETACH = 2, 5, 7, 12, 13, 24, 17
SEIZE, INTERRUPT, EVENT_STOP, O_TRACESYSGOOD = 0x4206, 0x4207, 128, 1
SYSCALL_STOP = signal.SIGTRAP | 0x80
NR_CLOSE, NR_OPENAT, AT_FDCWD = 3, 257, -100
OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC  # never block or leak the fd
RESTART_ERRNOS = (512, 513, 514, 516)  # ERESTARTSYS, -NOINTR, -NOHAND, _RESTARTBLOCK
WALL = 0x40000000
SYSCALL_INSN = b"\x0f\x05"

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]


class Regs(ctypes.Structure):  # struct user_regs_struct, x86-64
    _fields_ = [(n, ctypes.c_ulonglong) for n in (
        "r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags "
        "rsp ss fs_base gs_base ds es fs gs").split()]


class Failure(Exception):
    pass


def ptrace(req, pid, addr=0, data=0):
    ctypes.set_errno(0)
    r = libc.ptrace(req, pid, addr, data)
    e = ctypes.get_errno()
    if r == -1 and e:  # PEEKDATA may return -1 as data, hence the errno check
        raise OSError(e, os.strerror(e))
    return r


def get_regs(pid):
    regs = Regs()
    ptrace(GETREGS, pid, 0, ctypes.addressof(regs))
    return regs


def set_regs(pid, regs):
    ptrace(SETREGS, pid, 0, ctypes.addressof(regs))


def wait_stop(pid):
    """Wait for the next stop; (stopsig, is_event_stop). A dead target is a failure."""
    _, st = os.waitpid(pid, WALL)
    if not os.WIFSTOPPED(st):
        raise Failure("pid %d went away (status 0x%x)" % (pid, st))
    return os.WSTOPSIG(st), (st >> 16) == EVENT_STOP


def find_syscall(pid, regs):
    """Address of a `syscall` instruction in the target.

    Our choice: when the target is stopped in (or just after) a system call, orig_rax >= 0
    and RIP is right after the `syscall` it made, so RIP-2 (checked); otherwise the first
    0f 05 in the vDSO, else in any executable mapping (libc), read via /proc/PID/mem. The
    two bytes need not start an instruction there: we jump straight to them.
    """
    with open("/proc/%d/mem" % pid, "rb", buffering=0) as mem:
        if regs.orig_rax < (1 << 63):
            mem.seek(regs.rip - 2)
            if mem.read(2) == SYSCALL_INSN:
                return regs.rip - 2
        maps = [l.split() for l in open("/proc/%d/maps" % pid)]
        maps.sort(key=lambda m: m[-1] != "[vdso]")
        for m in maps:
            if "x" in m[1] and m[-1] != "[vsyscall]":
                lo, hi = (int(x, 16) for x in m[0].split("-"))
                try:
                    mem.seek(lo)
                    i = mem.read(hi - lo).find(SYSCALL_INSN)
                except OSError:
                    continue
                if i >= 0:
                    return lo + i
    raise Failure("no syscall instruction found in pid %d" % pid)


class Target:
    def __init__(self, pid):
        self.pid, self.signals, self.saved_mem, self.moved = pid, [], {}, False
        try:
            ptrace(SEIZE, pid, 0, O_TRACESYSGOOD)
        except OSError as e:
            if e.errno == errno.EPERM:
                print("ptrace_open_probe: cannot attach to pid %d: %s" % (pid, e.strerror),
                      file=sys.stderr)
                sys.exit(3)
            raise Failure("cannot attach to pid %d: %s" % (pid, e.strerror))
        try:
            # The stop comes in the kernel's exit-to-user path (get_signal), before any
            # syscall restart: a syscall cut short shows orig_rax = its number, rax =
            # -ERESTART*, RIP after its `syscall`. Putting these registers back at a stop
            # of the same kind (release()) makes the kernel restart it as if we never came.
            self.regs = self.stop()
            if self.regs.cs != 0x33:
                raise Failure("pid %d is not a 64-bit process" % pid)
            self.syscall = find_syscall(pid, self.regs)
        except BaseException:
            self.detach()
            raise

    def stop(self, resume=False):
        """PTRACE_INTERRUPT (resume: the stopped target) to a PTRACE_EVENT_STOP; regs."""
        ptrace(INTERRUPT, self.pid)
        if resume:
            ptrace(CONT, self.pid, 0, 0)
        while True:
            sig, event = wait_stop(self.pid)
            if event:
                return get_regs(self.pid)
            self.signals.append(sig)  # a signal's delivery stop came first: hold it back
            ptrace(CONT, self.pid, 0, 0)  # the trap is taken before any user code runs

    def poke(self, addr, data):
        """Write bytes at addr (8-byte aligned), keeping the old words for release()."""
        data += b"\0" * (-len(data) % 8)
        for off in range(0, len(data), 8):
            a = addr + off
            if a not in self.saved_mem:
                self.saved_mem[a] = ptrace(PEEKDATA, self.pid, a)
            ptrace(POKEDATA, self.pid, a, int.from_bytes(data[off:off + 8], "little"))

    def call(self, nr, *args):
        """Run one syscall in the target; its return value (negative: -errno)."""
        while True:
            regs = Regs.from_buffer_copy(self.regs)
            regs.rax, regs.rip = nr, self.syscall
            regs.orig_rax = 2**64 - 1  # "not in a syscall": no restart logic on our regs
            for name, v in zip(("rdi", "rsi", "rdx"), args):
                setattr(regs, name, v % 2**64)
            set_regs(self.pid, regs)
            self.moved, entered = True, False
            while True:  # to our syscall's entry stop, then its exit stop
                ptrace(SYSCALL, self.pid, 0, 0)
                sig, event = wait_stop(self.pid)
                if event:
                    continue
                if sig != SYSCALL_STOP:
                    self.signals.append(sig)  # someone else's signal: hold it back
                    continue
                if entered:
                    break
                r = get_regs(self.pid)
                if r.rip != self.syscall + 2 or r.orig_rax != nr:
                    raise Failure("pid %d ran off (rip 0x%x)" % (self.pid, r.rip))
                entered = True
            r = ctypes.c_longlong(get_regs(self.pid).rax).value
            if -r not in RESTART_ERRNOS:  # cut short by a signal: just run it again
                return r

    def open_result(self, path):
        # The path goes below RSP, past the 128-byte red zone the target may be using.
        data = os.fsencode(path) + b"\0"
        addr = (self.regs.rsp - 128 - len(data) - 64) & ~15
        self.poke(addr, data)
        fd = self.call(NR_OPENAT, AT_FDCWD, addr, OPEN_FLAGS)
        if fd < 0:
            return errno.errorcode.get(-fd, str(-fd))
        self.call(NR_CLOSE, fd)
        return "OK"

    def detach(self):
        ptrace(DETACH, self.pid, 0, 0)
        for s in self.signals:  # held-back signals, sent again (now as SI_USER)
            os.kill(self.pid, s)

    def release(self):
        """Put memory and registers back exactly and detach."""
        if self.moved:
            # We are at a syscall-exit stop, where restart logic is already behind us:
            # go back to an interrupt stop in get_signal, like the one we came in at.
            self.stop(resume=True)
        for a, word in self.saved_mem.items():
            ptrace(POKEDATA, self.pid, a, word % 2**64)
        set_regs(self.pid, self.regs)
        self.detach()


def main():
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        print("usage: ptrace_open_probe.py PID FILE...", file=sys.stderr)
        return 1
    pid, files = int(sys.argv[1]), sys.argv[2:]
    try:
        target = Target(pid)
        try:
            results = [(f, target.open_result(f)) for f in files]
        finally:
            target.release()
    except (Failure, OSError) as e:
        print("ptrace_open_probe: %s" % e, file=sys.stderr)
        return 1
    for f, r in results:
        print(f, r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
