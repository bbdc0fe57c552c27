"""Broken and hostile submissions, graded by real nbgrader runs in real (capped) kernels.

One small course, one student per kind of trouble, graded together with two workers: each
student loses exactly the marks of the parts their trouble touches, with a message saying
why, everyone else's grades are recorded, the run reports what went wrong where, and a
second run changes nothing. A grader killed mid-run and run again ends where a clean run does.
"""

from __future__ import annotations

import copy
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import grading_course as gc  # noqa: E402

from grader.autograde import autograde, summary  # noqa: E402
from grader.course_ops import feedback  # noqa: E402

pytestmark = pytest.mark.slow

FULL = {"test_player": 2, "test_count_empty": 1}
PLAYER_LOST = {"test_player": 0, "test_count_empty": 1}
COUNT_LOST = {"test_player": 2, "test_count_empty": 0}
NOTHING = {"test_player": 0, "test_count_empty": 0}


def _player(body: str) -> str:
    return "def player(board):\n" + "".join(f"    {line}\n" for line in body.splitlines())


def _count(body: str) -> str:
    return "def count_empty(board):\n" + "".join(f"    {line}\n" for line in body.splitlines())


def _without(nb, grade_id):
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != grade_id]
    return nb


def _edited(nb, grade_id, source):
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            cell.source = source
    return nb


def _duplicated(nb, grade_id):
    at = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    nb.cells.insert(at, copy.deepcopy(nb.cells[at]))
    return nb


def _forged_report(course):
    """A right answer whose notebooks carry the grader's own re-check report, claiming the grader
    failed (in the lesson's notebook and in an extra one, where no re-check would overwrite it)."""
    from grader.preprocessors import RECHECK_REPORT

    forged = {"problems": [], "suspicious": [], "unserved": "", "failed": "forged: grade me again"}
    nb = gc.solved(course)
    nb.metadata[RECHECK_REPORT] = forged
    path = gc.submit(course, "forged-report", nb)
    extra = nbformat.v4.new_notebook(metadata={RECHECK_REPORT: forged})
    nbformat.write(extra, path.with_name("notes.ipynb"))


# student -> (how the submission is made, expected scores per test cell, words the report must show)
CASES = {
    "good": (lambda c: gc.submit(c, "good"), FULL, None),
    "loop": (lambda c: gc.submit(c, "loop", gc.solved(c, count_empty="while True:\n    pass")),
             COUNT_LOST, "timed out (This cell timed out: it used more than 3 seconds of CPU time (the time limit for a cell)"),
    "loop-in-test": (lambda c: gc.submit(c, "loop-in-test", gc.solved(c, count_empty=_count("while True:\n    pass"))),
                     COUNT_LOST, "cell test_count_empty scored zero: it timed out (This cell timed out: it used more than 3 seconds of CPU"),
    "stubborn-loop": (lambda c: gc.submit(c, "stubborn-loop", gc.solved(c, count_empty=(
        "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"))),
        COUNT_LOST, "did not stop when interrupted"),
    "sys-exit": (lambda c: gc.submit(c, "sys-exit", gc.solved(c, player=_player("import sys\nsys.exit(1)"))),
                 PLAYER_LOST, "SystemExit"),
    "os-exit": (lambda c: gc.submit(c, "os-exit", gc.solved(c, player=_player("import os\nos._exit(3)"))),
                PLAYER_LOST, "KernelDied"),
    "segfault": (lambda c: gc.submit(c, "segfault", gc.solved(c, count_empty=_count(
        "import ctypes\nreturn ctypes.string_at(0)"))), COUNT_LOST, "KernelDied"),
    "memory": (lambda c: gc.submit(c, "memory", gc.solved(c, player=_player(
        "hoard = []\nwhile True:\n    hoard.append(b'x' * 2**26)"))), PLAYER_LOST, "MemoryError"),
    "chatty": (lambda c: gc.submit(c, "chatty", gc.solved(c, count_empty=(
        "print('x' * 2_000_000)\nfor i in range(10_000):\n    print(i)\n"
        "def count_empty(board):\n    return sum(row.count(None) for row in board)"))), FULL, "output truncated"),
    "syntax": (lambda c: gc.submit(c, "syntax", gc.solved(c, player="def player(board)\n    return 'X'")),
               PLAYER_LOST, "SyntaxError"),
    "deleted-test": (lambda c: gc.submit(c, "deleted-test", _without(gc.solved(c), "test_player")),
                     FULL, "test cell test_player was deleted"),
    "edited-test": (lambda c: gc.submit(c, "edited-test", _edited(gc.solved(c, player=_player("return 'O'")),
                                                                   "test_player", "pass  # all good")),
                    PLAYER_LOST, "locked cell test_player was edited"),
    "duplicate-ids": (lambda c: gc.submit(c, "duplicate-ids", _duplicated(gc.solved(c), "test_count_empty")),
                      FULL, "appears more than once"),
    "renamed": (lambda c: gc.submit(c, "renamed", gc.solved(c), name="tiny (1).ipynb"), FULL, "graded tiny (1).ipynb as tiny.ipynb"),
    "missing": (lambda c: gc.submit(c, "missing", name="notes.txt", raw="forgot the notebook"),
                NOTHING, "No notebook named tiny.ipynb"),
    "invalid-json": (lambda c: gc.submit(c, "invalid-json", raw='{"cells": [ oops'), NOTHING, "could not be read"),
    "forged-report": (_forged_report, FULL, "carried the grader's own report in its metadata"),
    "calls-reference": (lambda c: gc.submit(c, "calls-reference", gc.solved(c, player=_player(
        "import ttt.tictactoe\nreturn ttt.tictactoe.player(board)"))), PLAYER_LOST, None),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The course with every case submitted and graded once, in parallel; (course, outcomes, seconds)."""
    course = gc.make_course(tmp_path_factory.mktemp("bad") / "course", timeout=3, memory_mb=512)
    for make, _, _ in CASES.values():
        make(course)
    start = time.perf_counter()
    outcomes = autograde(course, jobs=2, progress=False)
    seconds = time.perf_counter() - start
    print(f"\nautograde of {len(CASES)} troubled submissions with 2 jobs: {seconds:.1f} s")
    return course, outcomes, seconds


@pytest.mark.parametrize("student", sorted(CASES))
def test_each_trouble_costs_only_its_own_marks(graded, student):
    course, outcomes, _ = graded
    scores = gc.grades(course)
    expected = CASES[student][1]
    assert {cell: scores[(student, cell)] for cell in expected} == expected
    outcome = next(o for o in outcomes if o.student == student)
    assert not outcome.error
    words = CASES[student][2]
    if words:
        assert any(words in p for p in outcome.problems), outcome.problems
        assert f"{student} / tiny: " in summary(outcomes)
    elif student == "good":
        assert outcome.problems == []


def test_the_autograded_notebook_says_what_happened(graded):
    course, _, _ = graded

    def errors(student):
        nb = nbformat.read(course / "autograded" / student / "tiny" / "tiny.ipynb", as_version=4)
        return {c.metadata.get("nbgrader", {}).get("grade_id"): [o for o in c.get("outputs", []) if o.output_type == "error"]
                for c in nb.cells if c.cell_type == "code"}

    died = errors("os-exit")["test_player"]
    assert died and died[-1].ename == "KernelDied" and "kernel stopped" in died[-1].evalue
    assert errors("os-exit")["test_count_empty"] == []  # the cells above ran again in a fresh kernel
    looped = [o for outputs in errors("loop").values() for o in outputs]
    assert [(o.ename, o.evalue) for o in looped if o.ename != "NameError"] == [
        ("CellTimeoutError", "This cell timed out: it used more than 3 seconds of CPU time (the time limit for a cell) and was stopped.")]
    reference = errors("calls-reference")["test_player"]
    assert reference and "reference solution" in reference[-1].evalue
    chatty = nbformat.read(course / "autograded" / "chatty" / "tiny" / "tiny.ipynb", as_version=4)
    printed = sum(len(o.get("text", "")) for c in chatty.cells if c.cell_type == "code" for o in c.outputs)
    assert printed < 300_000
    blank = nbformat.read(course / "autograded" / "invalid-json" / "tiny" / "tiny.ipynb", as_version=4)
    assert "could not be read" in blank.cells[0].source


def test_feedback_shows_the_check_message_not_the_hidden_tests(graded):
    course, _, _ = graded
    written = feedback(course, students=["good", "calls-reference", "invalid-json", "loop"])
    assert len(written) == 4
    html = {p.parts[-3]: p.read_text() for p in written}
    for text in html.values():
        assert gc.HIDDEN_MARK not in text and "check_player" not in text
    assert "reference solution" in html["calls-reference"]
    assert "could not be read" in html["invalid-json"]
    assert "This cell timed out: it used more than 3 seconds of CPU time (the time limit for a cell)" in html["loop"]
    assert "KeyboardInterrupt" not in html["loop"]


def test_running_again_changes_nothing(graded):
    course, outcomes, _ = graded
    before = gc.grades(course)
    again = autograde(course, jobs=2, progress=False)
    assert gc.grades(course) == before
    assert all(o.skipped for o in again)
    assert [(o.student, o.score, o.problems) for o in again] == [(o.student, o.score, o.problems) for o in outcomes]


def test_a_killed_grader_loses_nothing(tmp_path):
    course = gc.make_course(tmp_path / "course", timeout=3)
    students = ["ann", "ben", "cat", "dan"]
    for name in students[:2]:
        gc.submit(course, name)
    gc.submit(course, "cat", gc.solved(course, player=_player("return 'O'")))
    gc.submit(course, "dan", gc.solved(course, count_empty=_count("return 0")))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    run = subprocess.Popen([sys.executable, "-m", "grader", "autograde", "--course", str(course), "--jobs", "1", "-q"],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    graded_dir = course / ".ttt-grader" / "graded"
    deadline = time.monotonic() + 60
    while not any(graded_dir.rglob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    run.send_signal(signal.SIGKILL)
    run.wait()
    partly = len(list(graded_dir.rglob("*.json")))
    assert 1 <= partly < len(students)
    resumed = autograde(course, jobs=2, progress=False)  # picks up where the killed run stopped
    assert sum(not o.skipped for o in resumed) == len(students) - partly
    clean = tmp_path / "clean"
    import shutil
    shutil.copytree(course, clean, ignore=shutil.ignore_patterns(".ttt-grader", "autograded", "gradebook.db"))
    from grader.course_ops import release
    release(clean, setup=False)
    autograde(clean, jobs=2, progress=False)
    assert gc.grades(course) == gc.grades(clean)
    assert {(s, "test_player") for s in students} <= set(gc.grades(course))
