"""``ttt-grader autograde --cluster`` on a real Dask cluster: a ``dask scheduler`` and two
``dask worker`` processes on 127.0.0.1, started and stopped by the test. The cluster's grades
are the local run's, also when a worker is killed in the middle of grading a notebook."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import grading_course as gc  # noqa: E402

from grader.cli import main  # noqa: E402

pytest.importorskip("distributed")


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


SLOW = "4.0317"  # the slow cell's child sleeps this long: its command line marks it for the test


def _slow_solution(course: Path, started: Path):
    """A correct submission with one more cell (before the last test cell: grading skips the
    cells after it): it starts a ``sleep`` marked by its duration and takes a few seconds, so
    the test can find it (from outside the sandbox, which it cannot write out of) and kill the
    worker grading it."""
    nb = gc.solved(course)
    nb.cells.insert(len(nb.cells) - 1, nbformat.v4.new_code_cell(
        f"import subprocess, time\nsubprocess.Popen(['sleep', '{SLOW}'])\ntime.sleep(4)"))
    return nb


def _slow_ones() -> list[int]:
    """The process ids of the slow cell's marked ``sleep`` processes running now."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if cmdline.read_bytes() == f"sleep\0{SLOW}\0".encode():
                found.append(int(cmdline.parent.name))
        except OSError:
            pass
    return found


def _course(root: Path, started: Path) -> Path:
    course = gc.make_course(root, timeout=60)  # a busy machine must not time a correct cell out
    gc.submit(course, "ada")
    gc.submit(course, "grace", gc.solved(course, player="def player(board):\n    return 'X'"))
    gc.submit(course, "blank", gc.released(course))
    gc.submit(course, "broken", raw="{not a notebook")
    gc.submit(course, "slow", _slow_solution(course, started))
    return course


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds processes through /proc")
def test_cluster_grades_as_the_local_run_even_when_a_worker_dies(tmp_path, monkeypatch):
    from distributed import Client

    from grader.cluster import LoopbackCluster

    started = tmp_path / "started"
    local = _course(tmp_path / "local", started)
    remote = tmp_path / "remote"
    shutil.copytree(local, remote)
    assert main(["autograde", "--course", str(local), "--jobs", "2", "-q"]) == 0
    expected = gc.grades(local)
    assert expected[("ada", "test_player")] == 2 and expected[("grace", "test_player")] == 0
    assert expected[("slow", "test_player")] == 2 and len(expected) == 10

    # Dask gives a task up when two of its workers died (the default is four): quicker below
    monkeypatch.setenv("DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES", "1")
    cluster = LoopbackCluster(2, tmp_path / "cluster")
    try:
        with Client(cluster.address, set_as_default=False) as client:
            workers = set(client.run(os.getpid).values())
        assert len(workers) == 2
        run = subprocess.Popen([sys.executable, "-m", "grader", "autograde", "--course", str(remote),
                                "--cluster", cluster.address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 300
            while not _slow_ones() and run.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            seen = set(_slow_ones())
            assert seen, "the slow submission never started"
            worker = next(iter(seen))
            while worker not in workers and worker > 1:
                worker = _parent(worker)
            assert worker in workers, "the kernel grading the slow submission is not a Dask worker's"
            os.kill(worker, signal.SIGKILL)  # mid-notebook: the cell is still sleeping
            while run.poll() is None:  # the slow cell again, elsewhere
                seen.update(_slow_ones())
                time.sleep(0.05)
            out, err = run.communicate(timeout=600)
        finally:
            if run.poll() is None:
                run.kill()
        assert run.returncode == 0, err
        assert "5 of 5 submissions graded (5 now" in out
        assert "autograde: 100%" in err and "5/5 [" in err  # the progress bar, fed by the Dask futures
        assert len(seen) == 2  # graded twice: killed once, then again elsewhere
        assert gc.grades(remote) == expected

        # DASK_SCHEDULER_ADDRESS does as --cluster; a rerun regrades only what it is told to; a cell
        # that tries to kill its worker (in the sandbox: its init, which is not its to kill) fails
        # only itself, and costs no one else a mark
        gc.submit(remote, "mallory", gc.solved(remote, count_empty="import os, signal\nos.kill(os.getppid(), signal.SIGKILL)"))
        env = {**os.environ, "DASK_SCHEDULER_ADDRESS": cluster.address}
        again = subprocess.run([sys.executable, "-m", "grader", "autograde", "--course", str(remote), "-q",
                                "--student", "grace,blank,mallory", "--force"], env=env, capture_output=True, text=True,
                               timeout=900)
        assert again.returncode == 0, again.stderr
        assert "3 of 3 submissions graded (3 now" in again.stdout and re.search(r"grace +1/3", again.stdout)
        assert re.search(r"mallory +2/3", again.stdout), again.stdout  # its count_empty cell failed, nothing else
        assert {k: v for k, v in gc.grades(remote).items() if k[0] != "mallory"} == expected
        for course in (local, remote):
            graded = ("ada", "blank", "broken", "grace", "slow") + (("mallory",) if course == remote else ())
            assert sorted(p.relative_to(course / "autograded") for p in (course / "autograded").rglob("*.ipynb")) == \
                sorted(Path(s, gc.LESSON, f"{gc.LESSON}.ipynb") for s in graded)
    finally:
        left = cluster.stop()
    assert left == [], f"processes left running: {left}"


@pytest.fixture(scope="module")
def small_course(tmp_path_factory):
    course = gc.make_course(tmp_path_factory.mktemp("small") / "course")
    gc.submit(course, "ada")
    return course


def test_cluster_needs_dask_and_says_how(small_course):
    """Without Dask installed, --cluster says what to install (no traceback)."""
    code = ("import sys; sys.modules['distributed'] = None; from grader.cli import main; "
            f"sys.exit(main(['autograde', '--course', {str(small_course)!r}, '--cluster', 'tcp://127.0.0.1:9', '-q']))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 2
    assert "--cluster needs Dask's distributed scheduler: pip install 'ttt[cluster]'" in run.stderr
    assert "Traceback" not in run.stderr


def test_an_unreachable_scheduler_is_named(small_course, capsys):
    import socket

    import dask

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{probe.getsockname()[1]}"
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        assert main(["autograde", "--course", str(small_course), "--cluster", address, "-q"]) == 2
    err = capsys.readouterr().err
    assert f"could not reach the Dask scheduler at {address}" in err and "Traceback" not in err
    assert gc.grades(small_course) == {}
