"""A sandbox's CPU time, read from its own accounting (``grader.processes``: a cgroup of its own, or
its own processes when there is none), on real sandboxes and real processes: the cost of a reading
does not grow with the machine's processes, and work done in short-lived children is counted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from grader.processes import NO_CGROUP_ENV, Cgroup
from grader.remote import Remote, RemoteTimeout
from grader.recheck import student_launcher
from grader.sandbox import Sandbox, Tree, available, run_limited

TICK = 1 / os.sysconf("SC_CLK_TCK")

REASON = available()
needs_sandbox = pytest.mark.sandbox  # fails, saying why, where none can start (tests/conftest.py)
FILE = Path(__file__).parent / "data" / "cs50" / "list_actions.py"  # a CS50 file whose player and terminal pass
SHORT_LIVED = """
import os, signal, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children vanish when they exit, their time with them
def burn():
    while True:  # each child burns 30 ms of CPU, then ends; the parent only waits
        if os.fork() == 0:
            end = time.process_time() + 0.03
            while time.process_time() < end:
                pass
            os._exit(0)
        time.sleep(0.04)
"""


def a_cgroup() -> Cgroup:
    """Return a new cgroup; fails the test where none can be made (an ordinary user without a delegated one)."""
    group = Cgroup.new()
    assert group is not None, "no cgroup can be made here: run as root, or where systemd delegates one"
    return group


@needs_sandbox
@pytest.mark.parametrize("cgroup", [True, False], ids=["cgroup", "processes"])
def test_a_sandbox_is_counted_from_its_own_accounting(cgroup):
    process = Sandbox().popen([sys.executable, "-c", "import time\nend = time.process_time() + 0.5\n"
                               "while time.process_time() < end: pass\ntime.sleep(300)"],
                              cwd="/tmp", stdout=subprocess.PIPE)
    tree = Tree(process.pid, cgroup=cgroup)
    try:
        assert (tree.cgroup is not None) == cgroup  # the sandbox joined its cgroup before anything ran
        deadline = time.monotonic() + 30
        while tree.cpu_seconds() < 0.5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert 0.5 <= tree.cpu_seconds() < 2.0
        assert tree.processes()[0] == process.pid and len(tree.processes()) == 3  # bwrap, its init, python
    finally:
        tree.kill()
        process.wait(timeout=10)
        tree.close()
    assert not tree.alive()
    if cgroup:
        assert not os.path.exists(tree.cgroup.path)  # removed once the sandbox ended


@pytest.mark.parametrize("version", [2, 1], ids=["v2", "v1"])
def test_a_cgroup_counts_killed_and_short_lived_processes(version):
    group = Cgroup.new(versions=(version,))
    assert group is not None and group.version == version, f"no cgroup v{version} can be made here"
    join = group.opened()
    try:
        process = subprocess.Popen([sys.executable, "-c", SHORT_LIVED + "burn()"], preexec_fn=lambda: os.write(join, b"0"))
    finally:
        os.close(join)
    try:
        assert Cgroup.of(process.pid).path == group.path
        deadline = time.monotonic() + 60
        while group.cpu_seconds() < 0.5 and time.monotonic() < deadline:  # its children only burn
            time.sleep(0.05)
        assert group.cpu_seconds() >= 0.5 and process.pid in group.pids()
    finally:
        group.kill()
        process.wait(timeout=10)
    assert group.pids() == [] and group.remove() and not os.path.exists(group.path)
    assert group.cpu_seconds() >= 0.5  # the last reading stays


@needs_sandbox
def test_short_lived_children_are_counted_and_stopped_by_the_limit():
    process = Sandbox().popen([sys.executable, "-c", SHORT_LIVED + "burn()"], cwd="/tmp")
    tree = Tree(process.pid)
    try:
        assert tree.cgroup is not None, "no cgroup: the sandbox's short-lived children cannot be counted"
        assert run_limited(tree, cpu_seconds=0.6, stall_seconds=30, poll=0.05, done=lambda: False) == "cpu"
    finally:
        tree.kill()
        process.wait(timeout=10)
        tree.close()


@needs_sandbox
def test_a_call_whose_short_lived_children_burn_is_stopped_from_outside(tmp_path):
    (tmp_path / "tictactoe.py").write_text(SHORT_LIVED)
    with Remote({"file": "tictactoe.py"}, launcher=student_launcher(under=tmp_path), cwd=tmp_path, grace=0.5) as remote:
        before = remote.cpu_seconds()
        began = time.monotonic()
        with pytest.raises(RemoteTimeout, match="stopped from outside"), remote.cpu_limit(1.0):
            remote.namespace()["burn"]()
        assert 1.0 <= remote.cpu_seconds() - before < 1.0 + 0.5 + 1.0
        assert time.monotonic() - began < 60


@needs_sandbox
def test_no_cgroup_is_made_when_told(tmp_path, monkeypatch):
    monkeypatch.setenv(NO_CGROUP_ENV, "1")
    assert Cgroup.new() is None
    (tmp_path / "tictactoe.py").write_text("def burn(seconds):\n    import time\n    end = time.process_time() + seconds\n"
                                           "    while time.process_time() < end: pass\n")
    with Remote({"file": "tictactoe.py"}, launcher=student_launcher(under=tmp_path), cwd=tmp_path) as remote:
        assert remote._watcher.cgroup is None
        before = remote.cpu_seconds()
        remote.namespace()["burn"](0.4)
        # /proc gives user and system time apart, each cut down to a clock tick (1/100 s): a reading
        # may be two ticks under the process's own clock, so a difference of two readings may too
        assert 0.4 - 2 * TICK - 1e-6 <= remote.cpu_seconds() - before < 1.5


@needs_sandbox
def test_a_stale_cgroup_of_a_killed_run_is_removed():
    maker = subprocess.Popen([sys.executable, "-c", "from grader.processes import Cgroup; print(Cgroup.new().path)"],
                             stdout=subprocess.PIPE, text=True)
    left = maker.communicate(timeout=60)[0].strip()
    assert os.path.isdir(left)  # its maker ended without removing it
    group = a_cgroup()
    try:
        assert not os.path.exists(left)
    finally:
        group.remove()


def _check_cpu(name: str, folder: Path, env: dict) -> float:
    """Return the CPU seconds `ttt-grader check`'s check of the function `name` of FILE used in all
    (its own process, its sandbox and everything they started), counted by a cgroup of its own."""
    folder = Path(tempfile.mkdtemp(dir=folder))  # the check makes its own folders there
    group = a_cgroup()
    join = group.opened()
    try:
        out = folder / f"{name}.json"
        subprocess.run([sys.executable, "-m", "grader.cs50file", str(FILE), name, str(out), str(folder / "note"), "120",
                        "sandbox"], cwd=folder, env=env, check=True, preexec_fn=lambda: os.write(join, b"0"))
        assert json.loads(out.read_text())["passed"], out.read_text()
        return group.cpu_seconds()
    finally:
        os.close(join)
        assert group.remove()


IDLE = textwrap.dedent("""
    import os, sys
    r, w = os.pipe()
    children = []
    for _ in range(int(sys.argv[1])):
        pid = os.fork()
        if pid == 0:
            os.close(w)
            os.read(r, 1)  # blocks until the parent closes its end
            os._exit(0)
        children.append(pid)
    print("ready", flush=True)
    sys.stdin.readline()
    os.close(w)
    for pid in children:
        os.waitpid(pid, 0)
""")


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("cgroup", [True, False], ids=["cgroup", "processes"])
def test_a_check_costs_the_same_beside_a_thousand_idle_processes(cgroup, tmp_path):
    """Each side is the least of two runs, the two sides taking turns: a burst of other work on the
    machine (which makes any one run cost more) then has to hit both runs of a side to tip it."""
    env = {**os.environ, NO_CGROUP_ENV: "" if cgroup else "1"}
    runs: dict[str, list[float]] = {"quiet": [], "crowded": []}
    for _ in range(2):
        runs["quiet"].append(sum(_check_cpu(name, tmp_path, env) for name in ("player", "terminal")))
        idle = subprocess.Popen([sys.executable, "-c", IDLE, "1000"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert idle.stdout.readline().strip() == "ready"
            runs["crowded"].append(sum(_check_cpu(name, tmp_path, env) for name in ("player", "terminal")))
        finally:
            idle.communicate("\n", timeout=120)
    quiet, crowded = min(runs["quiet"]), min(runs["crowded"])
    assert crowded <= 1.25 * quiet, runs
