"""LabelTests: each test cell's feedback is headed with the function it grades; a hidden check's failure says so."""

from __future__ import annotations

import copy

import pytest
from nbformat.v4 import new_code_cell

from grader.feedback import LabelTests

from . import cell_with_id, changed_cells, index_of

HEADING = "Tests of {}: {}, all or nothing (every visible and hidden test must pass)"


@pytest.fixture
def preprocessor():
    return LabelTests()


def test_a_test_cell_is_headed_with_its_function_and_points(preprocessor, autograded, resources):
    """winner's test cell starts with a heading, as text and as bold HTML, before the outputs it had."""
    outputs = copy.deepcopy(cell_with_id(autograded, "winner-tests").outputs)
    nb, _ = preprocessor.preprocess(autograded, resources)
    heading, *rest = cell_with_id(nb, "winner-tests").outputs
    assert heading.output_type == "display_data"
    assert heading.data["text/plain"] == HEADING.format("winner", "2 points")
    assert heading.data["text/html"] == f"<b>{HEADING.format('winner', '2 points')}</b>"
    assert [output.output_type for output in rest] == [output.output_type for output in outputs] == ["stream", "error"]
    assert rest[0] == outputs[0]


def test_an_error_after_the_visible_tests_passed_is_the_hidden_tests(preprocessor, autograded, resources):
    """The check that failed after "✓ winner passes the visible tests" is labelled as the hidden tests', in one line."""
    nb, _ = preprocessor.preprocess(autograded, resources)
    error = cell_with_id(nb, "winner-tests").outputs[-1]
    assert error.evalue.startswith("hidden tests: winner(board): wrong winner\n")
    assert error.traceback == [f"CheckFailed: {error.evalue}"]


def test_an_error_in_the_visible_tests_is_not_labelled_hidden(preprocessor, autograded, resources):
    """terminal's test cell failed before its visible tests passed: a heading, and its error as it was."""
    error = copy.deepcopy(cell_with_id(autograded, "terminal-tests").outputs[-1])
    nb, _ = preprocessor.preprocess(autograded, resources)
    heading, *rest = cell_with_id(nb, "terminal-tests").outputs
    assert heading.data["text/plain"] == HEADING.format("terminal", "2 points")
    assert rest == [error]


def test_a_passing_test_cell_gets_its_heading_and_nothing_else(preprocessor, hostile, resources):
    """A test cell whose visible and hidden tests passed keeps its output under the heading."""
    outputs = copy.deepcopy(cell_with_id(hostile, "winner-tests").outputs)
    nb, _ = preprocessor.preprocess(hostile, resources)
    assert cell_with_id(nb, "winner-tests").outputs[1:] == outputs


def test_only_test_cells_that_call_a_check_are_headed(preprocessor, autograded, resources):
    """Answers, Markdown, the student's own cells and a test cell without a check (winner-full-board) are left alone."""
    before = copy.deepcopy(autograded)
    nb, _ = preprocessor.preprocess(autograded, resources)
    assert changed_cells(before, nb) == [index_of(nb, "winner-tests"), index_of(nb, "terminal-tests")]


@pytest.mark.parametrize("metadata", [
    {},
    {"nbgrader": {"grade": False, "solution": True, "grade_id": "winner", "locked": False, "schema_version": 3}},
    {"nbgrader": {"grade": True, "solution": True, "grade_id": "winner", "locked": False, "points": 2, "schema_version": 3}},
], ids=["no-nbgrader-metadata", "answer", "graded-answer"])
def test_a_check_called_in_a_student_s_cell_is_not_headed(preprocessor, metadata):
    """A student who calls a check in their own cell gets no heading there: only the lesson's test cells are graded."""
    cell = new_code_cell("from grader.checks import check_winner\n_ = check_winner(winner)", metadata=metadata)
    assert preprocessor.preprocess_cell(copy.deepcopy(cell), {}, 0)[0] == cell


@pytest.mark.parametrize("points, said", [(1, "1 point"), (0.5, "0.5 points"), (3.0, "3 points"), (0, "0 points")])
def test_the_heading_counts_the_cell_s_points(preprocessor, autograded, points, said):
    """The heading says 1 point, 0.5 points, 3 points (not 3.0)."""
    cell = cell_with_id(autograded, "winner-tests")
    cell.metadata.nbgrader["points"] = points
    assert preprocessor.preprocess_cell(cell, {}, 0)[0].outputs[0].data["text/plain"] == HEADING.format("winner", said)
