"""ShieldStudentText: before ClearHiddenTests, the text of every cell but the lesson's test cells is set aside."""

from __future__ import annotations

import copy

import pytest
from nbformat.v4 import new_code_cell
from nbgrader.preprocessors import ClearHiddenTests

from grader.feedback import _SET_ASIDE, ShieldStudentText

from . import grade_id

TEST_CELLS = ["winner-tests", "winner-full-board", "terminal-tests"]


@pytest.fixture
def preprocessor():
    return ShieldStudentText()


def test_every_cell_but_a_test_cell_has_its_text_set_aside(preprocessor, autograded, resources):
    """Markdown, answers, the lesson's locked text and the student's own cells are emptied, their text held in their metadata."""
    before = copy.deepcopy(autograded)
    nb, _ = preprocessor.preprocess(autograded, resources)
    assert [grade_id(c) for c in nb.cells if _SET_ASIDE not in c.metadata] == TEST_CELLS
    for old, new in zip(before.cells, nb.cells):
        if grade_id(new) in TEST_CELLS:
            assert new == old
        else:
            assert (new.source, new.metadata.pop(_SET_ASIDE)) == ("", old.source)
            assert new == {**old, "source": ""}  # outputs and the rest of the metadata as they were


def test_a_graded_code_answer_is_the_student_s_text(preprocessor):
    """A code cell that is graded and an answer (a manually graded answer) is set aside like any answer."""
    cell = new_code_cell("### END HIDDEN TESTS", metadata={"nbgrader": {
        "grade": True, "solution": True, "grade_id": "mine", "locked": False, "points": 1, "schema_version": 3}})
    out, _ = preprocessor.preprocess_cell(cell, {}, 0)
    assert (out.source, out.metadata[_SET_ASIDE]) == ("", "### END HIDDEN TESTS")


def test_clear_hidden_tests_fails_on_the_student_s_markers_without_it(autograded, resources):
    """The student's note quotes both markers on one line: ClearHiddenTests alone stops the feedback."""
    with pytest.raises(RuntimeError, match="No end hidden tests statement found"):
        ClearHiddenTests().preprocess(autograded, resources)


def test_clear_hidden_tests_then_clears_the_test_cells_and_reads_nothing_else(preprocessor, autograded, resources):
    """After it, ClearHiddenTests runs through and removes the hidden tests from each test cell that has them."""
    nb, _ = preprocessor.preprocess(autograded, resources)
    nb, _ = ClearHiddenTests().preprocess(nb, resources)
    tests = {grade_id(c): c.source for c in nb.cells if grade_id(c) in TEST_CELLS}
    assert not any("HIDDEN TESTS" in source or "check_" in source for source in tests.values())
    assert tests["winner-tests"].endswith('print("✓ winner passes the visible tests")')
    assert all(c.source == "" for c in nb.cells if grade_id(c) not in TEST_CELLS)
