"""No correct work lost to form: a test cell turned into a solution cell is put back before grading, and
one student's text never stops feedback for the others. Real nbgrader runs in real kernels."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import grading_course as gc  # noqa: E402

from grader.autograde import autograde  # noqa: E402
from grader.course_ops import export, feedback  # noqa: E402

pytestmark = pytest.mark.slow


def _made_a_solution_cell(nb, grade_id):
    """The student switched a test cell to an answer cell (nbgrader's cell toolbar): its metadata changed."""
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") == grade_id:
            meta.update(solution=True, grade=False, locked=False)
            meta.pop("points", None)
            cell.source = "# my notes on the tests\n" + cell.source
    return nb


def _with_marker_in_code(nb, marker):
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "count_empty":
            cell.source += f"\n\n# I read about '{marker}' in the nbgrader docs\n"
    return nb


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = gc.make_course(tmp_path_factory.mktemp("form") / "course", timeout=10)
    gc.submit(course, "a-good", gc.solved(course))
    gc.submit(course, "b-test-made-a-solution", _made_a_solution_cell(gc.solved(course), "test_player"))
    gc.submit(course, "c-marker-begin", _with_marker_in_code(gc.solved(course), "### BEGIN HIDDEN TESTS"))
    gc.submit(course, "d-marker-end", _with_marker_in_code(gc.solved(course), "### END HIDDEN TESTS"))
    gc.submit(course, "e-good", gc.solved(course))
    outcomes = autograde(course, jobs=2, progress=False)
    return course, {o.student: o for o in outcomes}


def test_a_test_cell_made_a_solution_cell_is_restored_and_the_real_code_graded(course):
    course, outcomes = course
    scores = gc.grades(course)
    assert scores[("b-test-made-a-solution", "test_player")] == 2
    assert scores[("b-test-made-a-solution", "test_count_empty")] == 1
    outcome = outcomes["b-test-made-a-solution"]
    assert not outcome.error
    assert any("test cell test_player had been made into an answer cell" in p and "restored" in p for p in outcome.problems), outcome.problems
    assert not any("Not graded as submitted" in p or "nbgrader could not grade" in p for p in outcome.problems), outcome.problems


def test_every_student_gets_feedback_whatever_their_text_says(course):
    course, outcomes = course
    for student in ("c-marker-begin", "d-marker-end"):
        assert gc.grades(course)[(student, "test_player")] == 2, student
    written = feedback(course)
    students = {p.parts[-3] for p in written}
    assert students == {"a-good", "b-test-made-a-solution", "c-marker-begin", "d-marker-end", "e-good"}, students
    page = next(p for p in written if p.parts[-3] == "c-marker-begin").read_text()
    assert "I read about" in page and "BEGIN HIDDEN TESTS" in page  # the student's own text, as written
    for path in written:
        assert gc.HIDDEN_MARK not in path.read_text()


def test_export_lists_every_student(course, tmp_path):
    course, _ = course
    rows = export(course, tmp_path / "grades.csv")
    assert {r["student"] for r in rows} == {"a-good", "b-test-made-a-solution", "c-marker-begin", "d-marker-end", "e-good"}
