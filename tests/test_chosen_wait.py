"""The grader's one wall-clock limit counts the time a student's processes choose to wait, over the
whole unit: the wall time of each operation less the CPU time the sandbox used and the time its
threads waited for a core (``grader.processes.ChosenWait``, ``grader.sandbox.Tree.waiting_seconds``).
Code that computes a little now and then (a low duty cycle) is ended once its waits add up to the
allowance; code that computes flat out is never ended by it, however busy the machine."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from grader.remote import Remote, RemoteStalled
from grader.sandbox import Sandbox, Tree, available, run_limited

CODE = textwrap.dedent('''
    import time

    def duty(seconds):
        """Spins 3 ms every 100 ms, `seconds` of wall time long."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            spin = time.thread_time() + 0.003
            while time.thread_time() < spin:
                pass
            time.sleep(0.1)
        return "done"

    def busy(cpu):
        """Computes flat out for `cpu` CPU seconds."""
        end = time.process_time() + cpu
        n = 0
        while time.process_time() < end:
            n += 1
        return n > 0

    def sleeps(seconds):
        time.sleep(seconds)
        return "slept"

    def same(value):
        return value
''')


@pytest.fixture
def sandbox(tmp_path):
    reason = available()
    assert reason is None, f"no sandbox can start here: {reason}"
    return Sandbox([tmp_path])


@pytest.fixture
def burners():
    """Four CPU burners per core beside the test (killed after it)."""
    started = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(4 * (os.cpu_count() or 1))]
    yield started
    for process in started:
        process.kill()
        process.wait()


def test_a_low_duty_cycle_is_ended_over_several_calls(tmp_path, sandbox):
    """Each call spins 3 ms every 100 ms for 2 s: no call alone reaches the 3 s allowance, the unit's
    calls together do, and the calls after are not run."""
    with Remote({"cells": [CODE]}, cwd=tmp_path, launcher=sandbox.popen, stall_seconds=3.0, cpu=60) as linked:
        ns = linked.namespace()
        finished = 0
        with pytest.raises(RemoteStalled, match="waiting without computing .* the most they may in all"):
            for _ in range(20):
                assert ns["duty"](2.0) == "done"
                finished += 1
        assert 1 <= finished < 10, finished
        assert linked.cpu_seconds() < 5
        with pytest.raises(RemoteStalled, match="this call was not run"):
            ns["same"](1)


def test_computing_flat_out_beside_burners_is_never_stalled(tmp_path, sandbox, burners):
    """Beside four burners per core the sandbox gets a fifth of a core or less: most of its wall time
    it waits for a core, which is not its choice. 4 CPU seconds take many times the 1 s allowance."""
    with Remote({"cells": [CODE]}, cwd=tmp_path, launcher=sandbox.popen, stall_seconds=1.0, cpu=60) as linked:
        ns = linked.namespace()
        began = time.monotonic()
        for _ in range(4):
            assert ns["busy"](1.0) is True
        took = time.monotonic() - began
        assert linked.cpu_seconds() >= 4.0
        assert linked._waits.seconds < 1.0, (linked._waits.seconds, took)


def test_a_sleeping_call_still_ends(tmp_path, sandbox):
    with Remote({"cells": [CODE]}, cwd=tmp_path, launcher=sandbox.popen, stall_seconds=2.0) as linked:
        ns = linked.namespace()
        assert ns["sleeps"](0.5) == "slept"
        with pytest.raises(RemoteStalled, match="this call was stopped"):
            ns["sleeps"](1000)
        assert linked._popen.poll() is not None  # killed, not left to sleep


def test_waiting_for_a_core_is_read_and_never_decreases(sandbox, burners, tmp_path):
    process = sandbox.popen([sys.executable, "-c", "while True: pass"], cwd=tmp_path)
    tree = Tree(process.pid)
    try:
        readings = []
        for _ in range(10):
            readings.append(tree.waiting_seconds())
            time.sleep(0.2)
        assert readings == sorted(readings)
        assert readings[-1] > readings[0]  # beside the burners it waits for a core
    finally:
        tree.kill()
        process.wait(timeout=10)
        tree.close()


DUTY = ("import time\nwhile True:\n    end = time.process_time() + 0.003\n    while time.process_time() < end:\n"
        "        pass\n    time.sleep(0.1)\n")


@pytest.mark.parametrize("code, beside, limits, expected", [
    (DUTY, False, {"cpu_seconds": 30, "stall_seconds": 2}, "stall"),  # 3 % of a core: waits, in all
    ("while True: pass", True, {"cpu_seconds": 1.5, "stall_seconds": 1}, "cpu"),  # starved, never waiting by choice
], ids=["duty-cycle", "flat-out-beside-burners"])
def test_run_limited_counts_chosen_wait(sandbox, tmp_path, request, code, beside, limits, expected):
    if beside:
        request.getfixturevalue("burners")
    process = sandbox.popen([sys.executable, "-c", code], cwd=tmp_path)
    tree = Tree(process.pid)
    try:
        assert run_limited(tree, poll=0.1, done=lambda: False, **limits) == expected
    finally:
        tree.kill()
        process.wait(timeout=10)
        tree.close()
