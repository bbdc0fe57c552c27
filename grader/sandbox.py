"""The bubblewrap sandbox every run of student code goes through.

A sandbox sees the system (``/usr``, ``/etc``, ...) and the Python installation read-only, the packages
``ttt`` and ``grader`` read-only (not the project folder around them), a private HOME and /tmp, no
network, its own pid namespace, no kernel keyrings (a seccomp filter, :func:`refused_calls_filter`), and
only the folders it is given. Limits: address space, processes,
file size, open files (rlimits); CPU time and stalls are watched from outside (:class:`Tree`,
:func:`run_limited`), from a cgroup of the sandbox's own where one can be made (see ``grader.processes``).

When run as root, each sandbox runs under a uid of its own (61000 and up): bwrap, started as root, builds
the mounts, then ``setpriv`` switches to that uid with every capability gone before the command runs.
bwrap cannot do the mounts after the switch itself: it resolves every bound path as the calling user,
and the installation may live in a folder only root can enter (``/root/.pyenv``). As an ordinary user,
bwrap runs in a user namespace under the caller's own uid.

A unit's writable folders are the grader's to remove once its sandbox is gone, whatever the student's code
left in them (:func:`remove_folder`).

``python -m grader.sandbox kernel CONNECTION_FILE [--memory-mb N] -- ARGV...`` starts a Jupyter kernel in
a sandbox (see :func:`kernel_main`); ``python -m grader.sandbox check`` says whether a sandbox can start here.
"""

from __future__ import annotations

import argparse
import errno
import fcntl
import functools
import os
import platform
import random
import resource
import shutil
import signal
import stat
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

from grader.course import MEMORY_MB
from grader.processes import ChosenWait, Cgroup, Descendants, die_with_parent, every_pid, libc_prctl, runqueue_waits

__all__ = ["Limits", "Sandbox", "SandboxUnavailable", "Tree", "available", "refused_calls_filter", "refused_calls_program",
           "remove_folder", "run_limited", "kernel_main"]

HOME = "/home/student"
FIRST_UID = 61000
UID_COUNT = 4000  # 61000-64999: below nobody (65534)
UID_STATE = Path("/tmp/.ttt-sandbox-uid")  # the last uid given out, for round-robin
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
KERNEL_ENV_PREFIXES = ("NBGRADER_", "TTT_GRADER_", "JPY_", "PYDEVD_")
KERNEL_ENV_NAMES = frozenset({"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                              "VECLIB_MAXIMUM_THREADS", "MALLOC_ARENA_MAX"})
# a host pid means nothing inside; ipykernel would take the sandbox's init (pid 1) for a dead parent and stop.
# The kernel dies with its launcher anyway (bwrap --die-with-parent)
# JPY_PARENT_PID: ipykernel would compare it with the sandbox's init; the grader's folders and read-only
# mounts: the sandbox has its own (a kernel told about them would try to make its own user namespace)
KERNEL_ENV_DROPPED = frozenset({"JPY_PARENT_PID", "TTT_GRADER_KERNELS", "TTT_GRADER_READ_ONLY", "TTT_GRADER_RUN",
                                "TTT_GRADER_WORKER"})


# -- no kernel keyrings ------------------------------------------------------------------------
# Linux keeps a uid's keyrings (user, user-session, persistent) after its last process ends, and the
# sandbox uids come back (round-robin): a key one unit adds would be found by a later unit under the
# same uid. So no process in a sandbox may use the keyrings at all: bwrap loads this seccomp filter
# (classic BPF, ``bwrap --seccomp FD``) just before it runs the command, and add_key, request_key and
# keyctl fail with EPERM. (libseccomp's Python bindings are not on PyPI; pyseccomp, a ctypes wrapper of
# the C library, has had no release since 2021: the few instructions are written here instead.)
# The keyrings are not also cleared when a root sandbox ends: with every keyring call refused, nothing
# in a later sandbox can reach what a uid's keyrings hold, and clearing them would take a process of
# the grader's switched to that uid (keyctl acts on the caller's own) at the end of every sandbox.
#
# Nor may it change how it is scheduled: a process that lowers its own priority (nice, SCHED_IDLE) or
# pins threads to one core makes time spent waiting for a core, which the stall rule does not count as
# chosen (``grader.processes.ChosenWait``), so a sandbox that sleeps could hide its wait behind idle
# spinners that cost it little CPU. setpriority, sched_setparam, sched_setaffinity and sched_setattr
# fail with EPERM; sched_setscheduler is allowed only to ask for the ordinary policy (SCHED_OTHER), which
# libzmq asks for on each of its threads and aborts the kernel if refused.
REFUSED_CALLS = {  # platform.machine(): (AUDIT_ARCH_* of its system calls, numbers of add_key, request_key,
    # keyctl; setpriority, sched_setparam, sched_setaffinity, sched_setattr; sched_setscheduler)
    "x86_64": (0xC000003E, (248, 249, 250, 141, 142, 203, 314), 144),
    "aarch64": (0xC00000B7, (217, 218, 219, 140, 118, 122, 274), 119),
}
X32_CALLS = 0x40000000  # x86_64's x32 calls: the same numbers with this bit, the same architecture
_BPF_LOAD = 0x20  # BPF_LD | BPF_W | BPF_ABS: load the 32-bit word at offset k of struct seccomp_data
_BPF_IF_EQUAL, _BPF_IF_AT_LEAST = 0x15, 0x35  # BPF_JMP | BPF_JEQ / BPF_JGE | BPF_K: compare with k, then skip jt or jf
_BPF_RETURN = 0x06  # BPF_RET | BPF_K: the verdict k
_SECCOMP_ALLOW, _SECCOMP_EPERM = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW; SECCOMP_RET_ERRNO with errno EPERM
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data: int nr; __u32 arch; ...
_POLICY = 24  # ... args[1], its low 32 bits (little-endian): sched_setscheduler's policy
_SCHED_OTHER = 0


def _bpf(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    """One instruction of a classic BPF program (struct sock_filter: u16 code, u8 jt, u8 jf, u32 k)."""
    return struct.pack("=HBBI", code, jt, jf, k)


def refused_calls_program(machine: str | None = None) -> bytes | None:
    """Return the seccomp filter (compiled classic BPF) that refuses the kernel keyrings and scheduling changes on `machine`
    (default: this one), or None for a machine it has no numbers for (then no filter is loaded).

    A call of another architecture than the machine's own (i386's int 0x80 on x86_64, 32-bit ARM
    on aarch64) is refused whatever it is: its numbers differ, and nothing in a sandbox makes one.
    """
    machine = machine or platform.machine()
    if machine not in REFUSED_CALLS:
        return None
    arch, calls, set_policy = REFUSED_CALLS[machine]
    refused = [(_BPF_IF_AT_LEAST, X32_CALLS)] if machine == "x86_64" else []
    refused += [(_BPF_IF_EQUAL, number) for number in calls]
    program = [_bpf(_BPF_LOAD, _ARCH),
               _bpf(_BPF_IF_EQUAL, arch, jt=1),  # the machine's own calls: go on to their number
               _bpf(_BPF_RETURN, _SECCOMP_EPERM),  # another architecture's: refused
               _bpf(_BPF_LOAD, _NR)]
    for index, (test, number) in enumerate(refused):  # a match jumps over the ones left and the 4 below, to EPERM
        program.append(_bpf(test, number, jt=len(refused) - index + 3))
    program += [_bpf(_BPF_IF_EQUAL, set_policy, jf=2),  # any other call: ALLOW
                _bpf(_BPF_LOAD, _POLICY),
                _bpf(_BPF_IF_EQUAL, _SCHED_OTHER, jf=1),  # sched_setscheduler(pid, SCHED_OTHER, ...): ALLOW
                _bpf(_BPF_RETURN, _SECCOMP_ALLOW), _bpf(_BPF_RETURN, _SECCOMP_EPERM)]
    return b"".join(program)


def refused_calls_filter() -> int | None:
    """Return a file descriptor (close-on-exec) bwrap reads the seccomp filter from (``--seccomp FD``),
    the read end of a pipe that holds all of it; None where there is no filter for this machine. The
    caller passes it on (``pass_fds``, or inheritable before exec) and closes its own copy."""
    program = refused_calls_program()
    if program is None:
        return None
    read, write = os.pipe()
    try:
        os.write(write, program)  # a few dozen bytes: far less than a pipe holds
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)
    return read


class SandboxUnavailable(RuntimeError):
    """No sandbox can be started on this machine; the message says what is missing and how to get it."""


@dataclass(frozen=True)
class Limits:
    """The rlimits of every process in a sandbox (core dumps are always off)."""

    memory_mb: int = MEMORY_MB  # RLIMIT_AS
    processes: int = 128  # RLIMIT_NPROC, counted on the sandbox's own uid
    file_mb: int = 256  # RLIMIT_FSIZE; also the size of each private tmpfs (/tmp, HOME, /dev/shm)
    open_files: int = 256  # RLIMIT_NOFILE


def _is_root() -> bool:
    """Return whether this process runs as root (then each sandbox gets a uid of its own)."""
    return os.geteuid() == 0


def _tool(name: str) -> str | None:
    """Return the real path of the program `name` (on PATH or in /usr/bin), or None when there is none."""
    found = shutil.which(name) or shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin")
    return os.path.realpath(found) if found else None


def _not_started(why: object) -> str:
    return f"bubblewrap could not start a sandbox: {why}."


@functools.cache
def available() -> str | None:
    """Return None when a sandbox can be started here, else the reason (one sentence); starts one once to know."""
    if not sys.platform.startswith("linux"):
        return "The sandbox needs Linux (bubblewrap runs only there)."
    if _tool("bwrap") is None:
        return ("bubblewrap is not installed: apt-get install bubblewrap (dnf install bubblewrap, "
                "pacman -S bubblewrap), or run make setup as root.")
    if _is_root() and _tool("setpriv") is None:
        return "setpriv is missing (it gives each sandbox a uid of its own when run as root): apt-get install util-linux."
    probe = Sandbox._unchecked()
    seccomp = refused_calls_filter()  # the probe loads the filter too: a bwrap that cannot is no sandbox
    try:
        done = subprocess.run(probe.command([_tool("true") or "/usr/bin/true"], cwd="/", seccomp=seccomp),
                              preexec_fn=probe._set_limits, pass_fds=() if seccomp is None else (seccomp,),
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return _not_started(error)
    finally:
        if seccomp is not None:
            os.close(seccomp)
    if done.returncode == 0:
        return None
    said = done.stderr.decode(errors="replace").strip().splitlines()
    said = said[-1] if said else f"exit status {done.returncode}"
    if not _is_root() and any(word in said.lower() for word in ("namespace", "uid map", "operation not permitted")):
        return (f"bubblewrap cannot create a user namespace ({said}): allow unprivileged user namespaces "
                "(sysctl -w kernel.unprivileged_userns_clone=1 on older Debian, user.max_user_namespaces=15000, "
                "or on Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0), or run as root.")
    return _not_started(said)


def _uids_in_use() -> set[int]:
    """Return every uid and gid some process on the machine has now (real, effective, saved or file system)."""
    used = set()
    for pid in every_pid():
        try:
            with open(f"/proc/{pid}/status", "rb") as status:
                for line in status:
                    if line.startswith((b"Uid:", b"Gid:")):
                        used.update(int(word) for word in line.split()[1:])
        except OSError:
            continue
    return used


def _free_uid() -> int:
    """Return a uid from 61000 up that no process has now, taking them round-robin so a uid comes back late."""
    fd = None
    try:
        fd = os.open(UID_STATE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        if os.fstat(fd).st_uid != os.geteuid():  # someone else's file: do not trust what it says
            os.close(fd)
            fd = None
    except OSError:
        fd = None
    try:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
            text = os.pread(fd, 32, 0).decode(errors="replace").strip()
            last = int(text) if text.isdigit() else FIRST_UID - 1
        else:
            last = FIRST_UID + random.randrange(UID_COUNT)
        used = _uids_in_use()
        for step in range(1, UID_COUNT + 1):
            uid = FIRST_UID + (last - FIRST_UID + step) % UID_COUNT
            if uid not in used:
                break
        else:
            raise SandboxUnavailable(f"every sandbox uid ({FIRST_UID}-{FIRST_UID + UID_COUNT - 1}) is in use.")
        if fd is not None:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(uid).encode(), 0)
        return uid
    finally:
        if fd is not None:
            os.close(fd)


def _chown_tree(top: Path, uid: int) -> None:
    """Give the folder `top` and everything in it to `uid` (group too), never following a symbolic link; `top`
    keeps search permission for others, so that bwrap (root without its capabilities) can enter it."""
    os.chown(top, uid, uid, follow_symlinks=False)
    os.chmod(top, os.stat(top).st_mode & 0o7777 | 0o711)
    for folder, subfolders, files in os.walk(top):
        for name in subfolders + files:
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


def _installation() -> list[str]:
    """Return the folders the sandbox's Python needs read-only: the Python, the venv, the packages ttt and grader."""
    places = []
    for prefix in (sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix):
        places += [os.path.abspath(prefix), os.path.realpath(prefix)]
    for package in ("ttt", "grader"):
        spec = find_spec(package)
        for location in (spec.submodule_search_locations or []) if spec else []:
            places.append(os.path.realpath(location))
    return places


def _under(path: str, folder: str) -> bool:
    """Return whether `path` is `folder` or inside it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


class Sandbox:
    """A bubblewrap sandbox: the command line that runs a program in it, and a way to start one."""

    def __init__(self, writable: Sequence[Path] = (), *, read_only: Sequence[Path] = (),
                 env: Mapping[str, str] | None = None, limits: Limits = Limits(), uid: int | None = None) -> None:
        """Set up a sandbox (chowning `writable` to its uid when root); raises SandboxUnavailable when there is none."""
        reason = available()
        if reason is not None:
            raise SandboxUnavailable(reason)
        self._setup(writable, read_only, env, limits, uid)
        if self.root:
            for folder in self.writable:
                _chown_tree(Path(folder), self.uid)

    @classmethod
    def _unchecked(cls) -> Sandbox:
        """Return a sandbox with no folders of its own, made without asking available() (which uses it)."""
        sandbox = cls.__new__(cls)
        sandbox._setup((), (), None, Limits(), None)
        return sandbox

    def _setup(self, writable, read_only, env, limits, uid) -> None:
        self.root = _is_root()
        if not self.root and uid not in (None, os.getuid()):
            raise ValueError(f"as an ordinary user the sandbox runs under your own uid ({os.getuid()}), not {uid}")
        if self.root and uid == 0:
            raise ValueError("a sandbox never runs as root (uid 0)")
        self.uid = (uid if uid is not None else _free_uid()) if self.root else os.getuid()
        self.limits = limits
        self.writable = [self._existing(folder) for folder in writable]
        self.read_only = [self._existing(folder) for folder in read_only]
        self.env = {"PATH": f"{os.path.abspath(sys.prefix)}/bin:/usr/local/bin:/usr/bin:/bin", "HOME": HOME,
                    "TMPDIR": "/tmp", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg",
                    "MPLCONFIGDIR": "/tmp/matplotlib"}
        self.env.update(env or {})

    @staticmethod
    def _existing(folder: str | Path) -> str:
        """Return the real path of `folder`; raises FileNotFoundError when it is not a folder."""
        path = os.path.realpath(folder)
        if not os.path.isdir(path):
            raise FileNotFoundError(f"no folder {folder} to put in the sandbox")
        return path

    def _mounts(self) -> list[str]:
        """Return bwrap's options that build the sandbox's file system."""
        size = str(self.limits.file_mb * 2**20)
        options = []
        bound = ["/etc", "/proc", "/dev"]  # folders whose whole content exists inside
        for folder in SYSTEM_FOLDERS:
            if os.path.islink(folder):
                options += ["--symlink", os.readlink(folder), folder]
            elif os.path.isdir(folder):
                options += ["--ro-bind", folder, folder]
                bound.append(folder)
        # /proc read-only: a process could otherwise lower its own session's share of the machine by
        # writing /proc/self/autogroup (no system call to refuse), and its waits for a core, which it
        # chose, would count as the machine's load (grader.processes.ChosenWait)
        options += ["--ro-bind", "/etc", "/etc", "--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev",
                    "--perms", "1777", "--size", size, "--tmpfs", "/tmp",
                    "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm",
                    "--perms", "0755", "--size", size, "--tmpfs", "/home",
                    # as root the folder belongs to root, and the sandbox's uid must write in it
                    "--perms", "0777" if self.root else "0700", "--dir", HOME]
        made = {"/tmp", "/home", HOME}  # these exist inside, empty
        binds = {}
        for path in _installation():
            if os.path.isdir(path) and not any(_under(path, folder) for folder in ("/usr", "/etc")):
                binds.setdefault(path, "--ro-bind")
        for path in self.writable:
            binds[path] = "--bind"
        for path in self.read_only:
            binds[path] = "--ro-bind"
        # parents before what they hold, so a folder bound inside another one stays on top of it
        for path in sorted(binds, key=lambda path: path.count("/")):
            parents = []
            parent = os.path.dirname(path)
            while parent != "/" and parent not in made and not any(_under(parent, folder) for folder in bound):
                parents.append(parent)
                parent = os.path.dirname(parent)
            for parent in reversed(parents):  # bwrap would make them 0700, closed to the sandbox's uid
                options += ["--perms", "0755", "--dir", parent]
                made.add(parent)
            options += [binds[path], path, path]
            bound.append(path)
        return options

    def command(self, argv: Sequence[str], *, cwd: str | Path, seccomp: int | None) -> list[str]:
        """Return the full command line that runs `argv` in the sandbox with `cwd` as its current folder;
        `seccomp` is the file descriptor bwrap reads the seccomp filter from (:func:`refused_calls_filter`; it
        must reach bwrap open), None only where this machine has no filter."""
        bwrap = _tool("bwrap") or "bwrap"
        if self.root:  # no user namespace: setpriv inside needs the root that builds the mounts
            options = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                       "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                       "--cap-add", "CAP_SETPCAP"]
            inner = [_tool("setpriv") or "setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups",
                     "--inh-caps=-all", "--bounding-set=-all", "--"]
        else:  # RLIMIT_NPROC is set inside the user namespace, where it counts only the sandbox's processes
            options = ["--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
            prlimit = _tool("prlimit")
            if prlimit and _under(prlimit, "/usr"):
                inner = [prlimit, f"--nproc={self.limits.processes}", "--"]
            else:
                inner = [os.path.abspath(sys.executable), "-S", "-c",
                         "import os, resource, sys; n = int(sys.argv[1]); "
                         "resource.setrlimit(resource.RLIMIT_NPROC, (n, n)); os.execvp(sys.argv[2], sys.argv[2:])",
                         str(self.limits.processes)]
        options += ["--die-with-parent", "--new-session", *self._mounts(), "--clearenv"]
        if seccomp is not None:
            options += ["--seccomp", str(seccomp)]
        for name, value in self.env.items():
            options += ["--setenv", name, value]
        return [bwrap, *options, "--chdir", str(cwd), "--", *inner, *argv]

    def _set_limits(self) -> None:
        """Set this process's rlimits to the sandbox's (run after fork, before exec; exec and children inherit them)."""
        mb = 2**20
        wanted = [(resource.RLIMIT_FSIZE, self.limits.file_mb * mb), (resource.RLIMIT_NOFILE, self.limits.open_files),
                  (resource.RLIMIT_CORE, 0)]
        if self.root:  # root is exempt; the uid setpriv switches to is not. Otherwise set inside (see command)
            wanted.append((resource.RLIMIT_NPROC, self.limits.processes))
        # the address space last: this is a copy of the grader until exec, often already larger than the
        # cap, so nothing may be allocated after it (a MemoryError here fails the launch)
        wanted.append((resource.RLIMIT_AS, self.limits.memory_mb * mb))
        for which, value in wanted:
            resource.setrlimit(which, (value, value))

    def popen(self, argv: Sequence[str], *, cwd: str | Path, **popen_kwargs) -> subprocess.Popen:
        """Return the running process (bwrap, outside) that runs `argv` in the sandbox; Popen's options pass through."""
        before = popen_kwargs.pop("preexec_fn", None)
        libc_prctl()  # looked up here, in the parent
        group = Cgroup.new()  # the sandbox's CPU time is read from it (see Tree)
        join = group.opened() if group is not None else None

        def prepare() -> None:
            if join is not None:  # first: bwrap and all it starts are counted from their first instruction
                try:
                    os.write(join, b"0")
                except OSError:
                    pass  # not counted by a cgroup: Tree reads the processes instead
            if before is not None:
                before()
            die_with_parent()  # before the limits: a call through ctypes allocates
            self._set_limits()

        seccomp = refused_calls_filter()
        passed = tuple(popen_kwargs.pop("pass_fds", ())) + (() if seccomp is None else (seccomp,))
        try:
            process = subprocess.Popen(self.command(argv, cwd=cwd, seccomp=seccomp), preexec_fn=prepare,
                                       pass_fds=passed, **popen_kwargs)
        except BaseException:
            if group is not None:
                group.remove()
            raise
        finally:
            if join is not None:
                os.close(join)
            if seccomp is not None:
                os.close(seccomp)
        if group is not None and getattr(Cgroup.of(process.pid), "path", None) != group.path:
            group.remove()  # the process could not join it
        return process


class Tree:
    """The processes of one sandbox seen from outside: their CPU time, whether any runs, and a kill for all.

    Where the sandbox has a cgroup of its own (:meth:`Sandbox.popen` and :func:`kernel_main` make
    one where they can), everything is read from it: a reading costs the same however many processes
    the machine runs, and counts every process that ran in the sandbox, short-lived ones too. Otherwise
    (`cgroup` False, or none was made) the processes are found by walking down from the outer one.
    """

    def __init__(self, pid: int, *, cgroup: bool = True) -> None:
        """Watch the sandbox whose outer process (bwrap, started by us) is `pid`."""
        self.pid = pid
        self.cgroup = Cgroup.of(pid) if cgroup else None
        self._walk = Descendants(pid)
        self._lock = threading.Lock()
        self._waits: dict[int, int] = {}  # thread id -> its nanoseconds waiting for a core at the last reading
        self._waited = 0  # nanoseconds the sandbox's threads have waited for a core, as far as read

    def _members(self) -> list[int]:
        """Return the pids of the processes that run now (the outer one first; an exited one waiting to be reaped is left out)."""
        if self.cgroup is not None:
            return sorted(self.cgroup.pids(), key=lambda pid: pid != self.pid)
        return [pid for pid, status in self._walk.members() if status.state != "Z"]

    def cpu_seconds(self) -> float:
        """Return the CPU seconds (user + system) every process of the sandbox has used so far; never decreases.

        Without a cgroup, a process that exits between readings and is reaped by no one (SIGCHLD
        ignored) is missed: such work shows as a stall to run_limited.
        """
        if self.cgroup is not None:
            return self.cgroup.cpu_seconds()
        with self._lock:
            return self._walk.cpu_seconds()

    def waiting_seconds(self) -> float:
        """Return the seconds the sandbox's threads have spent waiting for a core so far (runnable, not
        running), summed over its threads; never decreases. Read from ``/proc/TID/schedstat`` of the
        threads in its cgroup (or of its processes, found from the outer one).

        A thread is read while it runs: what a thread waited after the last reading before it ended,
        and all a thread waited that came and went between two readings, is lost. Lost wait shows as
        time the sandbox chose to wait (:class:`grader.processes.ChosenWait`), so a sandbox that starts
        many short-lived processes on a busy machine may be found waiting more than it did.
        """
        with self._lock:
            tids = self.cgroup.tids() if self.cgroup is not None else self._walk.tids()
            now = runqueue_waits(tids)
            for tid, waited in now.items():
                before = self._waits.get(tid, 0)
                self._waited += waited - before if waited >= before else waited  # a smaller one: a new thread, same id
            self._waits = now
            return self._waited / 1e9

    def alive(self) -> bool:
        """Return whether any process of the sandbox still runs."""
        return bool(self._members())

    def processes(self) -> list[int]:
        """Return the host pids of the sandbox's processes that run now (the outer bwrap first)."""
        return self._members()

    def kill(self) -> None:
        """SIGKILL every process of the sandbox and return once none runs (the outer one may stay unreaped)."""
        if self.cgroup is not None:
            self.cgroup.kill()
            return
        while True:
            members = self._members()
            if not members:
                return
            for pid in members:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            deadline = time.monotonic() + 10
            while set(members) & set(self._members()) and time.monotonic() < deadline:
                time.sleep(0.005)

    def close(self) -> None:
        """Remove the sandbox's cgroup, once its processes are gone and the outer one is reaped (its
        CPU time stays readable); a cgroup left behind is removed by the next sandbox made here."""
        if self.cgroup is not None:
            self.cgroup.remove()


def run_limited(tree: Tree, *, cpu_seconds: float | None, stall_seconds: float = 60.0, poll: float = 0.25,
                done: Callable[[], bool]) -> str | None:
    """Return None once done() is true, "cpu" when the tree has used more than `cpu_seconds` since the call,
    "stall" when it has chosen to wait (:class:`grader.processes.ChosenWait`: slept, or waited on
    something other than a core) `stall_seconds` in all since the call, "dead" when none of it runs.

    Kills nothing.
    """
    start = tree.cpu_seconds()
    waits = ChosenWait(tree)
    waits.begin()
    while True:
        if done():
            return None
        if not tree.alive():
            return None if done() else "dead"
        if cpu_seconds is not None and tree.cpu_seconds() - start > cpu_seconds:
            return "cpu"
        if waits.look() >= stall_seconds:
            return "stall"
        time.sleep(poll)


def copy_folder(source: Path, target: Path, *, most_bytes: int = 32 * 2**20, leave_out: tuple[str, ...] = (".ipynb",)) -> None:
    """Copies the regular files of `source` (not its subfolders, never following a symbolic link,
    none larger than `most_bytes`, none whose name ends as `leave_out` says: the notebooks, whose
    graded copy holds the hidden tests) into the new folder `target`: a unit's files, for a sandbox
    to work on while the originals stay as they were."""
    target.mkdir(parents=True, exist_ok=True)
    for entry in os.scandir(source):
        if entry.name.endswith(leave_out):
            continue
        if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_size <= most_bytes:
            shutil.copyfile(entry.path, target / entry.name, follow_symlinks=False)


def _opened_folder(name: str | Path, at: int | None = None) -> int:
    """Return a file descriptor of the folder `name` (in the folder of descriptor `at`), which this process
    may now list and empty whatever its mode was; never follows a symbolic link (then OSError)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=at)
    except PermissionError:  # a folder of our own we took the right to read from (root is never refused)
        try:
            os.chmod(name, 0o700, dir_fd=at, follow_symlinks=False)
        except (ValueError, NotImplementedError):  # Linux changes no link's mode: it is one
            raise NotADirectoryError(f"{name} is a symbolic link, not a folder") from None
        fd = os.open(name, flags, dir_fd=at)
    try:
        os.fchmod(fd, 0o700)  # the folder itself, opened: writable again, for what it holds to leave it
    except BaseException:
        os.close(fd)
        raise
    return fd


def remove_folder(folder: str | Path) -> None:
    """Remove the folder `folder` and everything in it, however a unit's code left it: files and folders
    it made unreadable or unwritable (chmod 000), folders nested any depth, any number of files. Never
    follows a symbolic link (a link is removed, not what it points to). Run once the unit's sandbox is
    gone, by root or by the sandbox's own uid (an ordinary user's sandbox runs under the user's uid);
    nothing when the folder is gone already; raises OSError when something could not be removed.

    A folder's files are removed where they are, its folders moved up into `folder` itself and emptied
    there in turn: the depth costs no recursion, no long path and no open folder per level
    (shutil.rmtree recurses, and stops past about 1,000 levels).
    """
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            os.unlink(folder)
            return
        top = _opened_folder(folder)
    except FileNotFoundError:
        return
    root = os.geteuid() == 0  # moves any folder; another uid moves only a folder it may write in
    moved = 0  # a folder moved up is named .removed-N, N from here, never over a folder that is there
    try:
        while entries := list(os.scandir(top)):
            progress, failure = False, None
            folders = deque()  # the folders in `folder` to empty and remove, each found once
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.name)
                    else:
                        os.unlink(entry.name, dir_fd=top)
                        progress = True
                except FileNotFoundError:
                    progress = True  # gone already
                except OSError as error:
                    failure = error
            while folders:
                name = folders.popleft()
                try:
                    inner = _opened_folder(name, top)
                    try:
                        for held in list(os.scandir(inner)):
                            if not held.is_dir(follow_symlinks=False):
                                os.unlink(held.name, dir_fd=inner)
                                continue
                            if not root:
                                os.chmod(held.name, 0o700, dir_fd=inner, follow_symlinks=False)
                            while True:  # over a file or an empty folder it is one less to remove
                                moved += 1
                                try:
                                    os.rename(held.name, f".removed-{moved}", src_dir_fd=inner, dst_dir_fd=top)
                                    break
                                except (NotADirectoryError, FileExistsError):
                                    continue
                                except OSError as error:
                                    if error.errno != errno.ENOTEMPTY:
                                        raise
                            folders.append(f".removed-{moved}")
                    finally:
                        os.close(inner)
                    os.rmdir(name, dir_fd=top)
                    progress = True
                except FileNotFoundError:
                    progress = True
                except OSError as error:
                    failure = error
            if not progress:  # a whole pass removed nothing: it stays
                raise failure
    finally:
        os.close(top)
    os.rmdir(folder)


def kernel_main(args: Sequence[str]) -> None:
    """Replace this process with a Jupyter kernel in a sandbox; returns only by raising.

    `args`: CONNECTION_FILE [--memory-mb N] -- ARGV... The folder of the connection file (the kernel's
    own, for its ipc sockets) and the current folder (the unit's notebooks) are writable inside; the
    environment inside holds only the allowed variables of ours (NBGRADER_*, TTT_GRADER_*, JPY_*, ...).
    The kernelspec must say ``"interrupt_mode": "message"``: a SIGINT sent to this process (bwrap, once
    exec'd) ends the whole sandbox instead of reaching the kernel.
    """
    args = list(args)
    if "--" not in args:
        raise SystemExit("usage: python -m grader.sandbox kernel CONNECTION_FILE [--memory-mb N] -- ARGV...")
    split = args.index("--")
    parser = argparse.ArgumentParser(prog="python -m grader.sandbox kernel")
    parser.add_argument("connection_file")
    parser.add_argument("--memory-mb", type=int, default=Limits.memory_mb)
    options = parser.parse_args(args[:split])
    argv = args[split + 1:]
    if not argv:
        raise SystemExit("python -m grader.sandbox kernel: no kernel command after --")
    cwd = Path.cwd().resolve()
    run = Path(options.connection_file).resolve().parent
    env = {name: value for name, value in os.environ.items()
           if (name.startswith(KERNEL_ENV_PREFIXES) or name in KERNEL_ENV_NAMES) and name not in KERNEL_ENV_DROPPED}
    work = run / "work"  # the kernel works in a copy of the notebook's folder: what it writes stays there
    copy_folder(cwd, work)
    sandbox = Sandbox([run], env=env, limits=Limits(memory_mb=options.memory_mb))
    seccomp = refused_calls_filter()
    if seccomp is not None:
        os.set_inheritable(seccomp, True)  # bwrap, exec'd in this process's place, reads it
    command = sandbox.command(argv, cwd=work, seccomp=seccomp)
    group = Cgroup.new()  # this process (bwrap, once exec'd) and all it starts: their CPU time is read from it
    if group is not None:
        try:
            group.join()
        except OSError:
            group.remove()
    die_with_parent()  # a grading worker killed outright takes its kernel's sandbox with it
    sandbox._set_limits()
    os.execv(command[0], command)


def main(args: Sequence[str] | None = None) -> int:
    """Run ``python -m grader.sandbox kernel ...`` or ``... check``; return the exit status."""
    args = list(sys.argv[1:] if args is None else args)
    if args[:1] == ["kernel"]:
        try:
            kernel_main(args[1:])
        except SandboxUnavailable as error:
            print(f"No sandbox: {error}", file=sys.stderr)
        return 1
    if args[:1] == ["check"]:
        reason = available()
        print(reason or "A sandbox can start here.")
        if reason is None and refused_calls_program() is None:
            print(f"Its processes may use the kernel keyrings: the grader has no seccomp filter for {platform.machine()} "
                  f"(only for {', '.join(REFUSED_CALLS)}).")
        return 0 if reason is None else 1
    print("usage: python -m grader.sandbox kernel CONNECTION_FILE [--memory-mb N] -- ARGV...\n"
          "       python -m grader.sandbox check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
