"""The grader's one wall-clock limit counts the time a student's processes choose to wait, over the
whole unit: the wall time of each operation less the CPU time the sandbox used and the time its
threads waited for a core (``grader.processes.ChosenWait``, ``grader.sandbox.Tree.waiting_seconds``).
Code that computes a little now and then (a low duty cycle) is ended once its waits add up to the
allowance; code that computes flat out is never ended by it, however busy the machine."""

from __future__ import annotations

import sys
import textwrap
import time

import pytest

from grader.remote import Remote, RemoteStalled
from grader.sandbox import Sandbox, Tree, available, run_limited
from machine_load import cpu_burners

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
    with cpu_burners() as started:
        yield started


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


# A student who read grader/remote/: a thread of its own writes the server's "progress" messages to the
# grader's pipe every 50 ms while the call spins, so that the grader, busy reading them, never looked at the
# limits (7.4 CPU s used against a 0.5 s limit after 8 s, neither stopped nor stalled).
CHATTER = textwrap.dedent(r'''
    import fcntl, json, os, signal, stat, struct, threading, time

    def spins_and_chatters():
        body = json.dumps({"op": "progress", "at": [0, 1]}).encode()
        frame = struct.pack(">I", len(body)) + body
        pipes = [fd for fd in range(3, 64) if _writes_a_pipe(fd)]

        def chatter():
            while True:
                for fd in pipes:
                    os.write(fd, frame)
                time.sleep(0.05)

        threading.Thread(target=chatter, daemon=True).start()
        while True:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)  # the server's own timer, switched off

    def _writes_a_pipe(fd):
        try:
            return stat.S_ISFIFO(os.fstat(fd).st_mode) and bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_WRONLY)
        except OSError:
            return False
''')


def test_messages_the_student_sends_meanwhile_never_keep_the_limits_away(tmp_path, sandbox):
    from grader.remote import RemoteTimeout

    import threading

    raised: list = []

    def call() -> None:
        try:
            with linked.cpu_limit(0.5):
                linked.namespace()["spins_and_chatters"]()
        except BaseException as error:  # noqa: BLE001  (what the call ended with, read below)
            raised.append(error)

    with Remote({"cells": [CHATTER]}, cwd=tmp_path, launcher=sandbox.popen, grace=0.5) as linked:
        caller = threading.Thread(target=call, daemon=True)
        caller.start()
        caller.join(120)  # a liveness bound (the call is stopped after about 1 CPU s), not a grade
        if caller.is_alive():
            linked._fail(RuntimeError("the test gave up"))  # ends the server, so that the thread ends
        assert not caller.is_alive() and raised and isinstance(raised[0], RemoteTimeout), raised
        assert "stopped from outside" in str(raised[0]) and linked.cpu_seconds() < 5


class _OnlySleeps:
    """A process tree that never computes (what ChosenWait reads of a sandbox that only sleeps)."""

    def cpu_seconds(self) -> float:
        return 0.0

    def waiting_seconds(self) -> float:
        return 0.0


def test_many_short_waits_add_up_as_one_long_one():
    """Operations shorter than ChosenWait.SHORT are not read one by one, but their wall time is carried to
    the next: 300 waits of 7 ms (each a call, or a callback's round trip) count about 2 s, not 0.2 s."""
    from grader.processes import ChosenWait

    waits = ChosenWait(_OnlySleeps())
    start = time.monotonic()
    for _ in range(300):
        waits.begin()
        time.sleep(0.007)
        waits.end()
    assert waits.seconds >= 0.8 * (time.monotonic() - start) - 0.3, waits.seconds


def test_what_the_grader_computes_in_short_operations_is_never_the_sandboxs_wait():
    """The grader's own time in an operation (sending, decoding, waiting for a core) is not the
    sandbox's choice, short operations included: 400 operations of 5 ms that the grader's thread
    spends computing count no wait (they counted 1.0 s of their 2 s, growing with every call)."""
    from grader.processes import ChosenWait

    waits = ChosenWait(_OnlySleeps())
    for _ in range(400):
        waits.begin()
        spin = time.thread_time() + 0.005
        while time.thread_time() < spin:
            pass
        waits.end()
    assert waits.seconds < 0.2, waits.seconds
