"""Hostile cells, graded by real nbgrader runs in real kernels: none of them changes another
student's grade, on the first run or on a rerun.

One small course: two honest students, and one student each for a cell that tries to kill the
grading worker (its kernel's parent, in the sandbox: refused), one that deletes another student's
submission and writes into source/ and release/ (none of them is in its sandbox), one that starts
a detached ``sleep``, one whose correct function warns, and one whose cells each sleep a while
(stopped once the notebook has waited without computing for its allowance), and one with a slow
cell after the last test (not run: it cannot change a score). Then a resubmission collected while
a run grades it, and a regrade that fails.
"""

from __future__ import annotations

import csv
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import grading_course as gc  # noqa: E402

from grader.autograde import autograde  # noqa: E402

pytestmark = pytest.mark.slow

CELL_LIMIT, NOTEBOOK_LIMIT, IDLE_LIMIT = 3, 20, 10
PLAYER = "def player(board):\n    return 'X' if sum(r.count('X') for r in board) == sum(r.count('O') for r in board) else 'O'"
FULL = {"test_player": 2, "test_count_empty": 1}


def _vandal(course: Path) -> str:
    targets = [course / "submitted" / "bob" / "tiny" / "tiny.ipynb", course / "source" / "tiny" / "tiny.ipynb",
               course / "release" / "tiny" / "tiny.ipynb"]
    return ("import os\n"
            f"for path in {[str(t) for t in targets]!r}:\n"
            "    try:\n"
            "        os.remove(path)\n"
            "    except OSError as error:\n"
            "        print('could not remove', path, error)\n"
            "    try:\n"
            "        open(path, 'w').write('{}')\n"
            "    except OSError as error:\n"
            "        print('could not write', path, error)\n" + PLAYER)


def _dawdler(course: Path):
    nb = gc.solved(course)
    for _ in range(12):  # 30 s in all of waiting without computing: past the notebook's allowance
        nb.cells.insert(2, nbformat.v4.new_code_cell("import time\ntime.sleep(2.5)"))
    return nb


def _with_epilogue(nb):
    nb.cells.append(nbformat.v4.new_code_cell("import time\ntime.sleep(60)  # a demonstration that takes its time"))
    return nb


CASES = {  # student -> (submission, expected scores)
    "ann": (lambda c: gc.solved(c), FULL),
    "bob": (lambda c: gc.solved(c), FULL),
    # its cell fails (the sandbox's init is not its to kill), so player is never defined in the notebook
    "killer": (lambda c: gc.solved(c, player="import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n" + PLAYER),
               {"test_player": 0, "test_count_empty": 1}),
    "vandal": (lambda c: gc.solved(c, player=_vandal(c)), FULL),
    "sleeper": (lambda c: gc.solved(c, player=(
        "import subprocess\nchild = subprocess.Popen(['sleep', '1000'], start_new_session=True)\n"
        "print('sleeping child', child.pid)\n" + PLAYER)), FULL),
    "warns": (lambda c: gc.solved(c, count_empty=(
        "import warnings\ndef count_empty(board):\n    warnings.warn('a warning from a correct function')\n"
        "    return sum(row.count(None) for row in board)")), FULL),
    "dawdler": (_dawdler, {"test_player": 0, "test_count_empty": 0}),
    "epilogue": (lambda c: _with_epilogue(gc.solved(c)), FULL),  # cells after the last test are not run
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The course graded once with two workers, the temporary folder redirected to an empty one;
    (course, outcomes, that folder, the source and release as they were, bob's submission)."""
    root = tmp_path_factory.mktemp("hostile")
    course = gc.make_course(root / "course", timeout=CELL_LIMIT)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(f"c.SafeExecute.stall_timeout = {IDLE_LIMIT}\n")
    for student, (make, _) in CASES.items():
        gc.submit(course, student, make(course))
    lesson = {p: p.read_bytes() for p in [course / "source" / "tiny" / "tiny.ipynb", course / "release" / "tiny" / "tiny.ipynb",
                                          course / "submitted" / "bob" / "tiny" / "tiny.ipynb"]}
    scratch = root / "tmp"
    scratch.mkdir()
    saved = tempfile.tempdir
    tempfile.tempdir = str(scratch)
    try:
        outcomes = autograde(course, jobs=2, notebook_timeout=NOTEBOOK_LIMIT, progress=False)
    finally:
        tempfile.tempdir = saved
    return course, outcomes, scratch, lesson


def _scores(course: Path) -> dict:
    return {key: value for key, value in gc.grades(course).items()}


def test_each_hostile_cell_costs_only_its_own_unit(hostile):
    course, outcomes, _, _ = hostile
    scores = _scores(course)
    for student, (_, expected) in CASES.items():
        if expected is not None:
            assert {cell: scores[(student, cell)] for cell in expected} == expected, student
    by_student = {o.student: o for o in outcomes}
    assert [o.student for o in outcomes if o.error] == []  # nothing a cell does stops its grading
    assert by_student["warns"].problems == [] and by_student["ann"].problems == [] and by_student["epilogue"].problems == []


def test_the_course_stays_as_it_was(hostile):
    course, outcomes, _, lesson = hostile
    for path, data in lesson.items():
        assert path.read_bytes() == data, path
    assert sorted(p.name for p in (course / "source" / "tiny").iterdir()) == ["tiny.ipynb"]
    vandal = nbformat.read(course / "autograded" / "vandal" / "tiny" / "tiny.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in vandal.cells if c.cell_type == "code" for o in c.outputs)
    assert printed.count("could not remove") == 3 and printed.count("could not write") == 3  # none of it is there


def test_a_detached_child_is_gone_and_nothing_is_left_in_tmp(hostile):
    course, _, scratch, _ = hostile
    sleeper = nbformat.read(course / "autograded" / "sleeper" / "tiny" / "tiny.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in sleeper.cells if c.cell_type == "code" for o in c.outputs)
    assert re.search(r"sleeping child (\d+)", printed)  # it started (its pid is the sandbox's own)
    left = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            left += [cmdline] if cmdline.read_bytes() == b"sleep\x001000\x00" else []
        except OSError:
            pass
    assert left == []
    assert list(scratch.iterdir()) == []
    assert not (course / ".ttt-grader" / "work").exists() and not (course / ".ttt-grader" / "run").exists()


def test_a_notebook_that_dawdles_is_stopped_at_its_limit(hostile):
    _, outcomes, _, _ = hostile
    dawdler = next(o for o in outcomes if o.student == "dawdler")
    assert any("NotebookTimeLimit" in p and f"spent {IDLE_LIMIT} seconds waiting without computing" in p
               for p in dawdler.problems), dawdler.problems
    assert len(dawdler.suspicious) == 1 and "waited without computing for the unit's whole allowance" in dawdler.suspicious[0]
    assert not dawdler.error


def test_a_rerun_changes_no_grade(hostile):
    course, outcomes, _, _ = hostile
    before = _scores(course)
    again = autograde(course, jobs=2, notebook_timeout=NOTEBOOK_LIMIT, progress=False)
    assert _scores(course) == before
    assert {o.student for o in again if not o.skipped} == set()  # nothing failed: nothing to grade again
    forced = autograde(course, jobs=2, notebook_timeout=NOTEBOOK_LIMIT, force=True, progress=False)
    assert _scores(course) == before
    assert [(o.student, o.score, o.error) for o in forced] == [(o.student, o.score, o.error) for o in outcomes]


def test_a_resubmission_during_a_run_is_graded_by_the_next(tmp_path):
    course = gc.make_course(tmp_path / "course", timeout=CELL_LIMIT)
    first = gc.solved(course, player="def player(board):\n    return 'O'")
    first.cells.insert(2, nbformat.v4.new_code_cell("import time\ntime.sleep(2)"))
    gc.submit(course, "late", first)
    run = threading.Thread(target=autograde, args=(course,), kwargs={"progress": False})
    run.start()
    deadline = time.monotonic() + 120
    while not list((course / ".ttt-grader" / "work").glob("*/submitted/late/tiny/tiny.ipynb")) and time.monotonic() < deadline:
        time.sleep(0.02)
    gc.submit(course, "late")  # collected while the first version is graded
    run.join()
    assert gc.grades(course)[("late", "test_player")] == 0  # what was staged was graded
    again = autograde(course, progress=False)
    assert not again[0].skipped and gc.grades(course)[("late", "test_player")] == 2


def test_a_failed_regrade_is_marked_not_shown_stale(tmp_path, capsys, monkeypatch):
    from grader import autograde as grading
    from grader.cli import main

    course = gc.make_course(tmp_path / "course", timeout=CELL_LIMIT)
    gc.submit(course, "ada")
    gc.submit(course, "cy")
    autograde(course, jobs=2, progress=False)
    gc.submit(course, "ada", gc.solved(course, player="def player(board):\n    return 'O'"))  # resubmitted
    grade = grading.grade_unit

    def machine_fails_for_ada(student, lesson, **options):  # the machine's trouble (no submission can cause it now)
        if student == "ada":
            return {"student": student, "lesson": lesson, "error": "the sandbox could not be started (no processes left)"}
        return grade(student, lesson, **options)

    monkeypatch.setattr(grading, "grade_unit", machine_fails_for_ada)  # the workers are forked: they take it
    outcomes = autograde(course, jobs=2, progress=False)
    assert [o.student for o in outcomes if o.error] == ["ada"]
    out = tmp_path / "grades.csv"
    assert main(["export", "--course", str(course), "-o", str(out), "--detail"]) == 0
    assert "the last grading failed for 1 submissions, shown as FAILED" in capsys.readouterr().err
    rows = {r["student"]: r for r in csv.DictReader(out.open())}
    assert rows["Points Possible"] == {"student": "Points Possible", "tiny": "3.0", "total": "3.0", "suspicious": "",
                                       "tiny:test_player": "2.0", "tiny:test_count_empty": "1.0"}
    assert rows["ada"] == {"student": "ada", "tiny": "FAILED", "total": "0.0", "suspicious": "",
                           "tiny:test_player": "FAILED", "tiny:test_count_empty": "FAILED"}
    assert rows["cy"]["tiny"] == "3.0"
