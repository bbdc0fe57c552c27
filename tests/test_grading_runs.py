"""Grading runs as an instructor's shell sees them, with real nbgrader: a second ``ttt-grader
autograde`` on a course is refused at once, naming the first; a run stopped by SIGTERM says what
it finished, leaves no process and no scratch folder, and the next run grades the rest; a run
killed outright (SIGKILL) leaves its scratch folders, which the next run removes (those of living
runs are kept). Each run is a real ``python -m grader`` process with a temporary folder of its own
(TMPDIR), long enough that its kernels' folders go to /tmp."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import grading_course as gc  # noqa: E402

from grader.worker import RUN_SCRATCH, remove_dead_scratch  # noqa: E402

pytestmark = pytest.mark.slow
STUDENTS = ["ann", "ben", "cat"]
REFUSED_WITHIN = 15.0  # wall seconds: how soon a second run must be refused (liveness, not a grade)
PATIENCE = 1200  # wall seconds a run of a few tiny notebooks may take on a machine busy with other work


def make(tmp_path: Path, students: list[str]) -> Path:
    course = gc.make_course(tmp_path / "course")
    for name in students:
        gc.submit(course, name)
    return course


@pytest.fixture
def course(tmp_path):
    return make(tmp_path, STUDENTS)


@pytest.fixture
def env(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    return {**os.environ, "TMPDIR": str(scratch), "PYTHONPATH": str(Path(__file__).parent.parent)}


def grader(course: Path, env: dict, *args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "grader", *args, "--course", str(course)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def wait_for(condition, seconds: float, watch: psutil.Process | None = None, seen: set | None = None) -> None:
    """Waits until ``condition()``; meanwhile notes every process under ``watch`` in ``seen``."""
    deadline = looked = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        if watch is not None and abs(time.monotonic() - looked) > 0.5:  # reading every process takes a while
            looked = time.monotonic()
            try:
                seen |= {p.pid for p in watch.children(recursive=True)}
            except psutil.NoSuchProcess:
                pass
        time.sleep(0.01)


def living(pids: set) -> list[str]:
    """The processes among ``pids`` still running (zombies aside), as text."""
    found = []
    for pid in pids:
        try:
            process = psutil.Process(pid)
            if process.status() != psutil.STATUS_ZOMBIE:
                found.append(f"{pid} {process.cmdline()[:4]}")
        except psutil.NoSuchProcess:
            pass
    return found


def graded(course: Path) -> set[str]:
    return {p.parent.name for p in (course / ".ttt-grader" / "graded").glob("*/*.json")}


def holder(course: Path) -> dict:
    try:
        return json.loads((course / ".ttt-grader" / "lock").read_text())
    except (OSError, ValueError):
        return {}


def test_a_second_autograde_is_refused_at_once_naming_the_first(tmp_path, env):
    """The course's writer lock held as a running `autograde` holds it (here by this process): a real
    `ttt-grader autograde`, and a `release`, on the same course are refused within seconds, naming it."""
    from grader.gradebook import writer_lock

    course = make(tmp_path, ["ann"])
    with writer_lock(course, "autograde"):
        for command in (["autograde", "-q"], ["release", "--no-setup"]):
            start = time.monotonic()
            second = grader(course, env, *command)
            out, err = second.communicate(timeout=120)
            took = time.monotonic() - start
            assert second.returncode == 2, (out, err)
            assert took < REFUSED_WITHIN, f"refused only after {took:.1f} s"
            assert f"`ttt-grader autograde` is already running on {course}: pid {os.getpid()}, since " in err
            assert f"kill {os.getpid()}" in err and "Traceback" not in err
    assert holder(course).get("pid") == os.getpid()  # what the lock file says of its holder


def _owner(path: Path) -> int | None:
    try:
        return path.stat().st_uid
    except OSError:
        return None


def _kernel_folders_of(pids: set) -> list[str]:
    """The folders in /tmp named after one of `pids` (``grader.execute.kernel_folder``'s, for a long TMPDIR)."""
    return [name for name in os.listdir("/tmp") for pid in pids if name.startswith(f"ttt-grader-unit-{pid}-")]


def test_a_run_stopped_by_sigterm_says_what_it_finished_and_the_next_grades_the_rest(course, env, tmp_path):
    first = grader(course, env, "autograde", "--jobs", "1", "-q")
    seen: set[int] = set()
    try:
        wait_for(lambda: graded(course), PATIENCE, psutil.Process(first.pid), seen)
        assert list((tmp_path / "tmp").glob(f"{RUN_SCRATCH}{first.pid}-*"))  # its scratch folder, named after it
        first.send_signal(signal.SIGTERM)
        out, err = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 128 + signal.SIGTERM, (out, err)
    done = graded(course)
    said = re.search(r"stopped by SIGTERM: (\d+) submission\(s\) graded and recorded, (\d+) not graded: (.*?)\. ", err)
    assert said, err
    assert int(said.group(1)) == len(done) and int(said.group(2)) == len(STUDENTS) - len(done)
    assert {u.split("/")[0] for u in said.group(3).split(", ")} == set(STUDENTS) - done
    assert all(re.search(rf"^{s} +3/3$", out, re.M) for s in done), out  # the table of what it finished
    time.sleep(1)
    assert living(seen) == []  # its workers, kernels and sandboxes
    assert list((tmp_path / "tmp").iterdir()) == []  # its scratch folder
    assert _kernel_folders_of(seen) == []  # those its kernels had in /tmp (TMPDIR is too long for their sockets)

    second = grader(course, env, "autograde", "--jobs", "2", "-q")
    out, err = second.communicate(timeout=PATIENCE)
    assert second.returncode == 0, err
    assert f"3 of 3 submissions graded ({len(STUDENTS) - len(done)} now, {len(done)} unchanged" in out
    assert {(s, g) for (s, g), score in gc.grades(course).items() if score == {"test_player": 2}.get(g, 1)} == \
        {(s, g) for s in STUDENTS for g in ("test_player", "test_count_empty")}
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_killed_runs_scratch_folders_are_removed_by_the_next_run(tmp_path, env):
    course = make(tmp_path, ["ann"])
    looping = "def count_empty(board):\n    while True:\n        pass"  # its re-check lasts its CPU limit
    gc.submit(course, "ben", gc.solved(course, count_empty=looping))
    scratch = tmp_path / "tmp"
    alive = scratch / f"{RUN_SCRATCH}{os.getpid()}-running"  # a run that still runs: left alone
    alive.mkdir()
    first = grader(course, env, "autograde", "--jobs", "1", "-q")
    seen: set[int] = set()
    def units() -> bool:  # the re-check's copy of a unit folder is there, given to its sandbox (as root: its uid's)
        copies = list(scratch.glob(f"{RUN_SCRATCH}{first.pid}-*/tmp-*/ttt-grader-unit-*"))
        return any(os.geteuid() != 0 or _owner(copy) not in (0, None) for copy in copies)

    try:  # killed while the re-check's copy of a unit folder is there, in its sandbox
        wait_for(units, PATIENCE, psutil.Process(first.pid), seen)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    [left] = scratch.glob(f"{RUN_SCRATCH}{first.pid}-*")
    if os.geteuid() == 0:  # as root, each sandbox has a uid of its own, and its folder is that uid's
        assert any(p.stat().st_uid != 0 for p in left.rglob("*")), "a sandbox's folder"
    second = grader(course, env, "autograde", "--jobs", "2", "-q")
    out, err = second.communicate(timeout=PATIENCE)
    assert second.returncode == 0, err
    assert "2 of 2 submissions graded" in out
    assert f"removed what " in err and str(left) in err
    assert not left.exists() and alive.is_dir()
    assert sorted(p.name for p in scratch.iterdir()) == [alive.name]
    assert living(seen) == []
    assert _kernel_folders_of(seen) == []


def test_only_the_scratch_folders_of_dead_processes_are_removed(tmp_path):
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(done.stdout)
    folders = [tmp_path / f"{RUN_SCRATCH}{dead}-x", tmp_path / f"ttt-grader-unit-{dead}-y",  # the dead's
               tmp_path / f"{RUN_SCRATCH}{os.getpid()}-z", tmp_path / f"ttt-grader-unit-{os.getpid()}-w",  # a live one's
               tmp_path / f"other-{dead}-v"]  # not the grader's
    for folder in folders:
        (folder / "closed" / "inner").mkdir(parents=True)
        (folder / "closed" / "inner" / "file").write_text("x")
        (folder / "closed").chmod(0)  # what a sandbox may do to its own folder
    removed = remove_dead_scratch(tmp_path)
    assert sorted(removed) == sorted(folders[:2])
    assert [f.exists() for f in folders] == [False, False, True, True, True]


@pytest.mark.sandbox
def test_a_long_temporary_folder_still_grades_in_a_sandbox_and_leaves_nothing(tmp_path):
    """A kernel's sockets are unix sockets in a folder of its own, and a socket's path holds 107 bytes:
    with a TMPDIR longer than that allows, the kernels' folders go to /tmp, and go when the run ends."""
    from grader.execute import SOCKET_ROOM

    scratch = tmp_path / ("a-long-temporary-folder-" * 4)
    scratch.mkdir()
    assert len(str(scratch)) > SOCKET_ROOM - 40  # the run's and kernel's folders inside take more than 40
    before = set(os.listdir("/tmp"))
    course = make(tmp_path, ["ann", "ben"])
    run = grader(course, {**os.environ, "TMPDIR": str(scratch), "PYTHONPATH": str(Path(__file__).parent.parent)},
                 "autograde", "-q", "--jobs", "2")
    out, err = run.communicate(timeout=PATIENCE)
    assert run.returncode == 0, (out, err)
    assert graded(course) == {"ann", "ben"} and "Traceback" not in err, err
    scores = gc.grades(course)
    assert {key: value for key, value in scores.items() if key[0] in ("ann", "ben")} == \
        {(s, c): p for s in ("ann", "ben") for c, p in {"test_player": 2.0, "test_count_empty": 1.0}.items()}
    assert os.listdir(scratch) == []
    assert sorted(name for name in set(os.listdir("/tmp")) - before if name.startswith("ttt-grader-unit-")) == []
