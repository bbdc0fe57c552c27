"""The grader's processes: workers that die with their parent, subreapers that adopt what their
kernels leave behind, and one sweeper that finds processes by the grader's marks in their
environment (``TTT_GRADER_WORKER``: the worker a kernel belongs to; ``TTT_GRADER_RUN``: the
grading run) and stops them. Every way the grader ends processes it started goes through
``stop_processes``.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from pathlib import Path

WORKER_ENV, RUN_ENV = "TTT_GRADER_WORKER", "TTT_GRADER_RUN"


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


def _processes() -> list[tuple[int, int, dict[str, str]]]:
    """Returns (pid, parent pid, grader variables of its environment) for each process we may see."""
    found = []
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError):
            continue
        try:
            raw = Path(entry.path, "environ").read_bytes()
        except OSError:  # a process that has exited and waits to be reaped has none; still listed, to be reaped
            raw = b""
        env = dict(v.split("=", 1) for v in raw.decode(errors="replace").split("\0") if v.startswith("TTT_GRADER_"))
        found.append((int(entry.name), ppid, env))
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


def alive(pid) -> bool:
    """True if a process `pid` exists."""
    try:
        os.kill(int(pid), 0)
        return True
    except (OSError, ValueError):
        return False

