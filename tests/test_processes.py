"""The grader's one sweeper (``grader.processes.stop_processes``), on real processes: it stops what
it is told to, and reaps a child that has already exited (a grading worker adopts the orphans of
its kernels; one that ended on its own must not stay behind as a zombie for the worker's life)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.processes import stop_processes

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="the sweeper reads /proc")


def state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()[0]


def test_a_child_that_has_exited_is_reaped():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    while state(child.pid) != "Z":
        time.sleep(0.05)
    assert stop_processes(lambda pid, ppid, env: pid == child.pid) == [child.pid]
    assert state(child.pid) is None  # reaped: gone from /proc
    child.returncode = 0  # Popen need not wait for it again


def test_a_running_process_is_stopped_by_its_mark():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             env={**os.environ, "TTT_GRADER_RUN": "test-mark"})
    try:
        time.sleep(0.3)
        assert stop_processes(lambda pid, ppid, env: env.get("TTT_GRADER_RUN") == "test-mark") == [child.pid]
        assert state(child.pid) is None
    finally:
        child.returncode = child.returncode if child.returncode is not None else -9
