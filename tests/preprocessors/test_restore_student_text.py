"""RestoreStudentText: after ClearHiddenTests, the text ShieldStudentText set aside is put back as written."""

from __future__ import annotations

import copy

import pytest
from nbformat.v4 import new_code_cell
from nbgrader.preprocessors import ClearHiddenTests

from grader.feedback import _SET_ASIDE, RestoreStudentText, ShieldStudentText

from . import cell_with_id, grade_id


@pytest.fixture
def preprocessors():
    """The three steps as GenerateFeedback runs them, in this order."""
    return ShieldStudentText(), ClearHiddenTests(), RestoreStudentText()


def test_the_student_s_text_comes_back_as_written_and_the_hidden_tests_do_not(preprocessors, autograded, resources):
    """Every non-test cell reads as before, nbgrader's markers and all; only the test cells lose their hidden tests."""
    before = copy.deepcopy(autograded)
    nb = autograded
    for step in preprocessors:
        nb, resources = step.preprocess(nb, resources)
    changed = [grade_id(new) for old, new in zip(before.cells, nb.cells) if old != new]
    assert changed == ["winner-tests", "terminal-tests"]  # the test cells that had hidden tests
    assert all(_SET_ASIDE not in cell.metadata for cell in nb.cells)
    notes, trial = nb.cells[5], nb.cells[6]  # the student's Markdown note and code cell
    assert "between `### BEGIN HIDDEN TESTS` and `### END HIDDEN TESTS`." in notes.source
    assert trial.source.endswith("\n### END HIDDEN TESTS (copied from the docs)")
    assert "check_winner" not in cell_with_id(nb, "winner-tests").source


def test_a_cell_without_set_aside_text_is_left_alone():
    """A cell that ShieldStudentText did not touch (a test cell) keeps its source, hidden tests cleared or not."""
    cell = new_code_cell("assert True", metadata={"nbgrader": {"grade": True, "grade_id": "t", "points": 1}})
    assert RestoreStudentText().preprocess_cell(copy.deepcopy(cell), {}, 0)[0] == cell


def test_an_empty_cell_comes_back_empty_and_without_the_set_aside_entry():
    """The set-aside text is put back even when it is empty, and the metadata entry that held it goes."""
    cell = new_code_cell("")
    ShieldStudentText().preprocess_cell(cell, {}, 0)
    cell.source = "left by a later step"
    out, _ = RestoreStudentText().preprocess_cell(cell, {}, 0)
    assert out.source == "" and out.metadata == {}
