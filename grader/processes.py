"""The grader's processes: workers that die with their parent, subreapers that adopt what their
kernels leave behind, and one sweeper that finds processes by the grader's marks in their
environment (``TTT_GRADER_WORKER``: the worker a kernel belongs to; ``TTT_GRADER_RUN``: the
grading run) and stops them. Every way the grader ends processes it started goes through
``stop_processes``.

A sandbox's CPU time is read from its own accounting, never by scanning every process on the
machine: a :class:`Cgroup` of its own (``ttt-sandbox-<pid>-<n>``, cgroup v2 ``cpu.stat`` or v1
``cpuacct.usage``) where this process may make one, which counts every process that ever ran in
it, short-lived ones included; otherwise :class:`Descendants`, the processes found by walking down
from the sandbox's outer process (``/proc/PID/task/*/children``), at a cost that grows with the
sandbox's processes, not the machine's. ``TTT_GRADER_NO_CGROUP=1`` asks for the second everywhere.
"""

from __future__ import annotations

import functools
import itertools
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

WORKER_ENV, RUN_ENV = "TTT_GRADER_WORKER", "TTT_GRADER_RUN"
NO_CGROUP_ENV = "TTT_GRADER_NO_CGROUP"  # "1": sandboxes get no cgroup; their CPU is read from their processes
CGROUP_PREFIX = "ttt-sandbox-"  # a sandbox's cgroup: ttt-sandbox-<pid of the process that made it>-<n>


@functools.lru_cache(maxsize=None)
def libc_prctl():
    """Returns libc's prctl, or None off Linux (looked up once, before any fork: a child of a
    threaded process must not load a library)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def die_with_parent() -> None:
    """Asks Linux to kill this process when the process that started it dies, even by SIGKILL
    (a killed grader leaves no workers, a killed worker no sandbox); it survives exec."""
    call = libc_prctl()
    if call is not None:
        call(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def subreaper() -> None:
    """Makes this process adopt the orphans among its descendants (on Linux), so that it can stop
    what its kernels leave behind, detached processes included."""
    call = libc_prctl()
    if call is not None:
        call(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def every_pid() -> Iterator[int]:
    """Yields the id of every process on the machine we may see (the one scan of the machine: for the
    sweeper and the sandbox's choice of a free uid, never for watching a sandbox)."""
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if entry.name.isdigit():
            yield int(entry.name)


@dataclass(frozen=True)
class Stat:
    """What /proc/PID/stat says of a process: its parent, its state (``Z``: exited, not reaped), the
    CPU seconds it used and those of its children it reaped, and when it started (clock ticks)."""

    ppid: int
    state: str
    cpu: float
    reaped_cpu: float
    start: int


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def stat(pid: int) -> Stat | None:
    """Returns process `pid`'s /proc/PID/stat, or None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read()
        fields = text[text.rindex(b")") + 2:].split()
        return Stat(int(fields[1]), fields[0].decode(), (int(fields[11]) + int(fields[12])) / _TICK,
                    (int(fields[13]) + int(fields[14])) / _TICK, int(fields[19]))
    except (OSError, ValueError, IndexError):
        return None


def children(pid: int) -> list[int]:
    """Returns the children of process `pid` (of each of its threads), read from ``/proc/PID/task/*/children``."""
    found = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children", "rb") as handle:
                found += [int(word) for word in handle.read().split()]
        except (OSError, ValueError):
            continue
    return found


def descendants(pid: int) -> list[int]:
    """Returns process `pid` and all its descendants, parents before children (none when it is gone)."""
    if not os.path.exists(f"/proc/{pid}"):
        return []
    found, index = [pid], 0
    while index < len(found) and len(found) < 100_000:
        found += children(found[index])
        index += 1
    return found


def _processes() -> list[tuple[int, int, dict[str, str]]]:
    """Returns (pid, parent pid, grader variables of its environment) for each process we may see."""
    found = []
    for pid in every_pid():
        status = stat(pid)
        if status is None:
            continue
        try:
            raw = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:  # a process that has exited and waits to be reaped has none; still listed, to be reaped
            raw = b""
        env = dict(v.split("=", 1) for v in raw.decode(errors="replace").split("\0") if v.startswith("TTT_GRADER_"))
        found.append((pid, status.ppid, env))
    return found


def stop_processes(match) -> list[int]:
    """Kills (SIGKILL) every process for which ``match(pid, parent pid, environment)`` holds,
    reaps those that are this process's children; returns their ids."""
    me = os.getpid()
    killed = [(pid, ppid) for pid, ppid, env in _processes() if pid != me and match(pid, ppid, env)]
    for pid, _ in killed:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for pid, ppid in killed:
        if ppid == me:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
    return [pid for pid, _ in killed]


def _listdir(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def runqueue_waits(tids: list[int]) -> dict[int, int]:
    """Returns, for each of the threads `tids` still there, the nanoseconds it has spent waiting for a
    core so far (runnable, not running: the second field of ``/proc/TID/schedstat``; a wait still
    under way is counted once the thread runs)."""
    found = {}
    for tid in tids:
        try:
            with open(f"/proc/{tid}/schedstat", "rb") as handle:
                found[tid] = int(handle.read().split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return found


def alive(pid) -> bool:
    """True if a process `pid` exists."""
    try:
        os.kill(int(pid), 0)
        return True
    except (OSError, ValueError):
        return False



# -- a sandbox's CPU time -----------------------------------------------------------------------


class Descendants:
    """The CPU seconds of a process and its descendants, read from /proc/PID/stat of those alone.

    Each reading adds what the processes seen now used since the last reading, and what their reaped
    children used; a child seen before and reaped since was counted already up to then, so its part
    is taken off. A process that exits between readings and is reaped by no one (SIGCHLD ignored) is
    missed: only a cgroup counts it.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._seen: dict[tuple[int, int], tuple[float, float]] = {}  # (pid, start) -> (own CPU, reaped children's)
        self._total = 0.0

    def members(self) -> list[tuple[int, Stat]]:
        """Returns each process of the tree with its stat, the top one first."""
        found = []
        for pid in descendants(self.pid):
            status = stat(pid)
            if status is not None:
                found.append((pid, status))
        return found

    def tids(self) -> list[int]:
        """Returns the ids of the threads (tasks) of the tree's processes that run now."""
        return [int(tid) for pid in descendants(self.pid) for tid in _listdir(f"/proc/{pid}/task") if tid.isdigit()]

    def cpu_seconds(self) -> float:
        """Returns the CPU seconds the tree has used so far (never decreasing); not thread-safe."""
        now = {(pid, status.start): (status.cpu, status.reaped_cpu) for pid, status in self.members()}
        own = reaped = 0.0
        for key, (used, children_used) in now.items():
            used_before, reaped_before = self._seen.get(key, (0.0, 0.0))
            own += max(0.0, used - used_before)
            reaped += max(0.0, children_used - reaped_before)
        gone = sum(used + children_used for key, (used, children_used) in self._seen.items() if key not in now)
        self._total += own + max(0.0, reaped - gone)
        self._seen = now
        return self._total


@functools.cache
def _hierarchies() -> tuple[tuple[int, str], ...]:
    """Returns (version, mount point) of each cgroup hierarchy that can count CPU time: cgroup2 mounts
    first, then cgroup v1 mounts with the cpuacct controller."""
    found: list[tuple[int, str]] = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return ()
    for line in lines:
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        point = fields[4].replace("\\040", " ")
        if tail[0] == "cgroup2":
            found.insert(sum(version == 2 for version, _ in found), (2, point))
        elif tail[0] == "cgroup" and "cpuacct" in tail[2].split(","):
            found.append((1, point))
    return tuple(found)


def _cgroup_path(pid: int | str, version: int, point: str) -> str | None:
    """Returns the folder of process `pid`'s cgroup in the hierarchy mounted at `point`, or None."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if (version == 2 and number == "0" and controllers == "") or (version == 1 and "cpuacct" in controllers.split(",")):
            return os.path.join(point, path.lstrip("/"))
    return None


class Cgroup:
    """A cgroup of one sandbox: every process in it and every process they start are counted in its
    CPU time (``cpu_seconds``), short-lived ones included; ``kill`` ends them all; ``remove`` deletes it."""

    _made = itertools.count()

    def __init__(self, path: str, version: int) -> None:
        self.path, self.version = path, version
        self._last = 0.0

    @classmethod
    def new(cls, *, versions: tuple[int, ...] = (2, 1)) -> Cgroup | None:
        """Returns a new empty cgroup under this process's own (cgroup v2 first, then v1 with cpuacct,
        of `versions`), or None where none can be made here (no cgroup hierarchy we may write in, or
        ``TTT_GRADER_NO_CGROUP=1``). Removes first what a killed run left there: empty cgroups of
        ours whose maker is gone."""
        if os.environ.get(NO_CGROUP_ENV) == "1":
            return None
        for version, point in _hierarchies():
            if version not in versions:
                continue
            parent = _cgroup_path("self", version, point)
            for place in (parent, point) if parent and parent != point else (point,):
                if not os.path.isdir(place) or not os.access(place, os.W_OK):
                    continue
                _sweep(place)
                path = os.path.join(place, f"{CGROUP_PREFIX}{os.getpid()}-{next(cls._made)}")
                try:
                    os.mkdir(path)
                except OSError:
                    continue
                group = cls(path, version)
                if os.access(group._file("cgroup.procs"), os.W_OK) and group.cpu_seconds() == 0.0:
                    return group
                group.remove()
        return None

    @classmethod
    def of(cls, pid: int) -> Cgroup | None:
        """Returns the sandbox cgroup process `pid` is in, or None when it is in none (or in ours)."""
        for version, point in _hierarchies():
            path = _cgroup_path(pid, version, point)
            if (path and os.path.basename(path).startswith(CGROUP_PREFIX) and path != _cgroup_path("self", version, point)
                    and os.path.isdir(path)):
                return cls(path, version)
        return None

    def _file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def opened(self) -> int:
        """Returns a file descriptor (close-on-exec) that moves the process writing ``b"0"`` to it into
        this cgroup: opened before a fork, written by the child before it runs anything else."""
        return os.open(self._file("cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)

    def join(self) -> None:
        """Moves this process into the cgroup (the processes it starts from now on are in it too)."""
        fd = self.opened()
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)

    def cpu_seconds(self) -> float:
        """Returns the CPU seconds every process that was ever in the cgroup has used (the last reading once it is gone)."""
        try:
            if self.version == 2:
                with open(self._file("cpu.stat"), "rb") as handle:
                    for line in handle:
                        if line.startswith(b"usage_usec "):
                            self._last = max(self._last, int(line.split()[1]) / 1e6)
                            break
            else:
                with open(self._file("cpuacct.usage"), "rb") as handle:
                    self._last = max(self._last, int(handle.read()) / 1e9)
        except (OSError, ValueError):
            pass
        return self._last

    def pids(self) -> list[int]:
        """Returns the processes in the cgroup now (an exited one waiting to be reaped is not)."""
        try:
            with open(self._file("cgroup.procs"), "rb") as handle:
                return [int(word) for word in handle.read().split()]
        except (OSError, ValueError):
            return []

    def tids(self) -> list[int]:
        """Returns the ids of the threads (tasks) in the cgroup now (v1 ``tasks``, v2 ``cgroup.threads``)."""
        try:
            with open(self._file("tasks" if self.version == 1 else "cgroup.threads"), "rb") as handle:
                return [int(word) for word in handle.read().split()]
        except (OSError, ValueError):
            return []

    def kill(self) -> None:
        """SIGKILLs every process in the cgroup, and returns once none is left (or after 10 s)."""
        deadline = time.monotonic() + 10
        while True:
            pids = self.pids()
            if not pids or time.monotonic() > deadline:
                return
            try:
                fd = os.open(self._file("cgroup.kill"), os.O_WRONLY)  # cgroup v2, Linux 5.14 and later
                try:
                    os.write(fd, b"1")
                finally:
                    os.close(fd)
            except OSError:
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            time.sleep(0.002)

    def remove(self) -> bool:
        """Deletes the cgroup once no process is in it (not even one waiting to be reaped, under v2);
        returns whether it is gone."""
        self.cpu_seconds()
        try:
            os.rmdir(self.path)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return True


def _sweep(parent: str) -> None:
    """Removes the empty sandbox cgroups in the folder `parent` whose maker no longer runs (a killed run's)."""
    try:
        entries = os.listdir(parent)
    except OSError:
        return
    for name in entries:
        if name.startswith(CGROUP_PREFIX):
            maker = name[len(CGROUP_PREFIX):].split("-")[0]
            if maker.isdigit() and not alive(maker):
                try:
                    os.rmdir(os.path.join(parent, name))
                except OSError:
                    pass


class ChosenWait:
    """The wall seconds a sandbox's processes chose to wait (slept, or waited on a pipe, a lock, a
    child: anything but a core), counted while it is counting (from :meth:`begin` to :meth:`end`).

    Each look counts the wall seconds since the last one less the CPU seconds the sandbox used, the
    seconds its threads spent waiting for a core (``tree.waiting_seconds()``, where the tree can say)
    and the seconds the grader's thread that began the count ran or waited for a core (the sandbox
    waits for the grader meanwhile: to read its answer, say), never less than 0. A busy machine makes
    none: time spent waiting for a core is not chosen. Several threads are summed, so a sandbox that
    computes on one thread while another sleeps waits none.

    A look's count is final only ``SETTLE`` seconds later: a wait for a core still under way is read
    once the thread runs again, so a later look that finds more of it than wall time takes back what
    the looks before it counted meanwhile; nothing older can be taken back (no wait is saved up by
    computing on several cores). ``seconds`` is what was counted so far (final counts only).
    """

    SETTLE = 1.0
    SHORT = 0.01

    def __init__(self, tree) -> None:
        self.tree, self.seconds = tree, 0.0
        self._base: tuple[float, float] | None = None  # the sandbox's (CPU seconds, seconds waiting for a core) at the last reading
        self._since: float | None = None  # the wall time counting goes on from; None: not counting
        self._grader = (threading.get_native_id(), 0.0)  # the grader's thread, and its busy seconds then
        self._pending: list[list[float]] = []  # [when, seconds] counted by the last looks, not final yet
        self._unread = 0.0  # wall seconds counting ran since the last look, left to the next (short operations)

    def follow(self, tree) -> None:
        """Watches `tree` from now on (a new process of the same unit: what was counted stays)."""
        self.tree, self._base = tree, None

    def _sandbox(self) -> tuple[float, float]:
        waiting = getattr(self.tree, "waiting_seconds", None)
        return self.tree.cpu_seconds(), waiting() if waiting is not None else 0.0

    def _busy(self, tid: int) -> float:
        """Returns the seconds the grader's thread `tid` has run or waited for a core so far."""
        try:
            with open(f"/proc/self/task/{tid}/schedstat", "rb") as handle:
                ran, waited = handle.read().split()[:2]
            return (int(ran) + int(waited)) / 1e9
        except (OSError, ValueError):
            return 0.0

    def begin(self, when: float | None = None) -> None:
        """Counts from wall time `when` (``time.monotonic()``; default now) on, this thread being the
        grader's. The sandbox's CPU and wait of the last reading stand for that moment when there is
        one (it did nothing since: it was waiting for the grader), so a short operation costs no
        reading of the sandbox."""
        self._since = (time.monotonic() if when is None else when) - self._unread
        self._unread = 0.0
        tid = threading.get_native_id()
        self._grader = (tid, self._busy(tid))
        if self._base is None:
            self._base = self._sandbox()

    def look(self) -> float:
        """Counts the chosen wait since the last look (when counting); returns ``seconds``."""
        if self._since is None or self._base is None:
            return self.seconds
        now, sandbox, busy = time.monotonic(), self._sandbox(), self._busy(self._grader[0])
        chosen = (now - self._since) - (sandbox[0] - self._base[0]) - (sandbox[1] - self._base[1]) - (busy - self._grader[1])
        self._since, self._base, self._grader = now, sandbox, (self._grader[0], busy)
        if chosen > 0:
            self._pending.append([now, chosen])
        while chosen < 0 and self._pending:  # a wait for a core read late: take back what it made look chosen
            back = min(-chosen, self._pending[-1][1])
            self._pending[-1][1] -= back
            chosen += back
            if self._pending[-1][1] <= 0:
                self._pending.pop()
        while self._pending and self._pending[0][0] <= now - self.SETTLE:
            self.seconds += self._pending.pop(0)[1]
        return self.seconds

    def end(self, *, look: bool = True) -> float:
        """Stops counting, with a last look unless `look` is False or the last look (or the begin) is
        less than ``SHORT`` seconds old (not worth a reading of the sandbox: those wall seconds, less
        what the grader's thread ran or waited for a core meanwhile, are carried to the next begin,
        which counts on with this reading's CPU and wait, so many short waits add up as one long
        one); every count becomes final. Returns ``seconds``."""
        if look and self._since is not None:
            if time.monotonic() - self._since >= self.SHORT:
                self.look()
            else:  # carried on less what the grader's thread ran or waited for a core meanwhile (its own file: cheap)
                busy = self._busy(self._grader[0])
                self._unread += time.monotonic() - self._since - (busy - self._grader[1])
        self.seconds += sum(seconds for _, seconds in self._pending)
        self._pending.clear()
        self._since = None
        return self.seconds
