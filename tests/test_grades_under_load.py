"""Grades that hold under load: the heaviest checks the course has, graded with real nbgrader in
real kernels in their sandboxes, and a CS50 file's minimax checked with ``ttt-grader check``,
twice: on a quiet machine and beside 4 x cores CPU-burning processes. The scores must be
identical and full; nothing here depends on how long anything takes. The heaviest: a naive CS50
minimax in lesson 4 (deep copies, no pruning, no memo: the slowest honest solution), and lesson
5's solution, whose pruning is counted through calls that cross from its sandbox to the grader
(every lesson's solution gets full marks in ``test_lessons_nbgrader.py``, on a quiet machine).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from grader.autograde import autograde
from grader.course import lesson_path
from grader.course_ops import release
from machine_load import cpu_burners

pytestmark = pytest.mark.slow

NAIVE = Path(__file__).parent / "data" / "naive_tictactoe.py"


def _naive_minimax(course: Path) -> nbformat.NotebookNode:
    """Lesson 4 as released, its solution cell holding the naive CS50 file."""
    lesson = "04-minimax"
    nb = nbformat.read(course / "release" / lesson / f"{lesson}.ipynb", as_version=4)
    solutions = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert [c.metadata["nbgrader"]["grade_id"] for c in solutions] == ["minimax"]
    solutions[0].source = NAIVE.read_text()
    return nb


def _scores(course: Path) -> dict:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {(s.student.id, s.assignment.name, nb.name, g.name): (g.score, g.max_score)
                for a in gb.assignments for s in gb.assignment_submissions(a.name)
                for nb in s.notebooks for g in nb.grades}


def _said(course: Path, student: str, lesson: str, notebook: str, cell: str) -> str:
    """What the autograded notebook's cell `cell` printed (its outputs' text): why it lost points."""
    path = course / "autograded" / student / lesson / f"{notebook}.ipynb"
    try:
        nb = nbformat.read(path, as_version=4)
    except OSError as error:
        return f"{path} unreadable: {error}"
    found = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == cell]
    return "".join(o.get("text", "") or "".join(o.get("traceback", [])) or str(o.get("data", ""))
                   for c in found for o in c.get("outputs", []))[-3000:]


def test_the_same_grades_on_a_quiet_and_a_loaded_machine(tmp_path):
    from grader.cs50file import check_file

    course = tmp_path / "course"
    release(course, lessons=["04-minimax", "05-alpha-beta"])
    folder = course / "submitted" / "solved" / "05-alpha-beta"
    folder.mkdir(parents=True)
    shutil.copyfile(lesson_path("05-alpha-beta"), folder / "05-alpha-beta.ipynb")
    (course / "submitted" / "naive" / "04-minimax").mkdir(parents=True)
    nbformat.write(_naive_minimax(course), course / "submitted" / "naive" / "04-minimax" / "04-minimax.ipynb")

    quiet = autograde(course, jobs=2, progress=False)
    assert [o.error for o in quiet] == [""] * 2
    scores = _scores(course)
    checked = [(r.function, r.passed, r.broken_by) for r in check_file(NAIVE, functions=("minimax",))]
    with cpu_burners():
        loaded = autograde(course, jobs=2, force=True, progress=False)
        checked_loaded = [(r.function, r.passed, r.broken_by) for r in check_file(NAIVE, functions=("minimax",))]
    now = _scores(course)
    assert now == scores, {key: (scores.get(key), now.get(key), _said(course, *key)) for key in scores if now.get(key) != scores[key]}
    assert [(o.student, o.lesson, o.score, o.error) for o in loaded] == [(o.student, o.lesson, o.score, o.error) for o in quiet]
    by_hand = {"05-alpha-beta": 1}  # lesson 5's written answer: graded by a person, not here
    assert all(o.score == o.max_score - by_hand.get(o.lesson, 0) > 0 for o in quiet), \
        [(o.student, o.lesson, o.score, o.problems) for o in quiet]
    assert checked_loaded == checked and all(passed for _, passed, _ in checked), checked
