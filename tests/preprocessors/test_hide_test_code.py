"""HideTestCode: in feedback, an error in a test cell with hidden tests shows only ``ename: evalue``."""

from __future__ import annotations

import copy

import pytest
from nbformat.v4 import new_code_cell, new_output
from traitlets.config import Config

from grader.feedback import HideTestCode

from . import cell_with_id, changed_cells, index_of


@pytest.fixture
def preprocessor():
    return HideTestCode()


def _errors(cell):
    return [output for output in cell.outputs if output.output_type == "error"]


def test_an_error_in_a_test_cell_with_hidden_tests_keeps_only_its_name_and_message(preprocessor, autograded, resources):
    """The NameError of terminal's test cell, a traceback of several frames quoting the cell, is cut to one line."""
    cell = cell_with_id(autograded, "terminal-tests")
    assert len(_errors(cell)[0].traceback) > 1 and "BEGIN HIDDEN TESTS" in cell.source
    nb, _ = preprocessor.preprocess(autograded, resources)
    error = _errors(cell_with_id(nb, "terminal-tests"))[0]
    assert error.traceback == ["NameError: name 'terminal' is not defined"]
    assert (error.ename, error.evalue) == ("NameError", "name 'terminal' is not defined")


def test_an_error_in_a_test_cell_without_hidden_tests_keeps_its_traceback(preprocessor, autograded, resources):
    """The failed assert of a test cell that has no hidden tests still shows where it failed."""
    before = copy.deepcopy(_errors(cell_with_id(autograded, "winner-full-board"))[0].traceback)
    nb, _ = preprocessor.preprocess(autograded, resources)
    assert _errors(cell_with_id(nb, "winner-full-board"))[0].traceback == before
    assert any("XXO/OXX/OOX" in line for line in before)


def test_only_the_error_of_the_test_cell_with_hidden_tests_changes(preprocessor, autograded, resources):
    """Across the graded notebook (answers, the student's own cells, Markdown, passing output) only one cell changes."""
    before = copy.deepcopy(autograded)
    nb, _ = preprocessor.preprocess(autograded, resources)
    assert changed_cells(before, nb) == [index_of(nb, "terminal-tests")]
    assert cell_with_id(nb, "winner-tests").outputs[0].text == "✓ winner passes the visible tests\n"


@pytest.mark.parametrize("metadata", [
    {},  # a student's own cell
    {"nbgrader": {"grade": True, "solution": True, "grade_id": "answer", "locked": False, "points": 1, "schema_version": 3}},
    {"nbgrader": {"grade": False, "solution": True, "grade_id": "answer", "locked": False, "schema_version": 3}},
], ids=["no-nbgrader-metadata", "graded-answer", "answer"])
def test_a_cell_that_is_not_a_test_cell_keeps_its_traceback_even_with_the_marker(preprocessor, metadata):
    """A student's cell that quotes the hidden-tests marker is not a test cell: its error keeps its traceback."""
    cell = new_code_cell("# ### BEGIN HIDDEN TESTS\n1 / 0", metadata=metadata)
    cell.outputs = [new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                               traceback=["---", "----> 2 1 / 0", "ZeroDivisionError: division by zero"])]
    kept = copy.deepcopy(cell)
    assert preprocessor.preprocess_cell(cell, {}, 0)[0] == kept


@pytest.mark.parametrize("config, cut", [
    (Config(), {"BEGIN HIDDEN TESTS": True, "BEGIN SECRET TESTS": False}),
    (Config({"ClearHiddenTests": {"begin_test_delimeter": "BEGIN SECRET TESTS"}}),
     {"BEGIN HIDDEN TESTS": False, "BEGIN SECRET TESTS": True}),
], ids=["default-marker", "configured-marker"])
def test_the_marker_is_the_one_configured_for_clear_hidden_tests(config, cut):
    """With ClearHiddenTests.begin_test_delimeter set, that marker decides which test cells are cut, and the default one no longer does."""
    preprocessor = HideTestCode(config=config)
    for marker, expected in cut.items():
        cell = new_code_cell(f"assert False, 'visible'\n### {marker}\nassert False, 'hidden'\n### END HIDDEN TESTS",
                             metadata={"nbgrader": {"grade": True, "solution": False, "grade_id": "t", "locked": True,
                                                    "points": 1, "schema_version": 3}})
        cell.outputs = [new_output("error", ename="AssertionError", evalue="visible",
                                   traceback=["----> 1 assert False, 'visible'", "AssertionError: visible"])]
        traceback = preprocessor.preprocess_cell(cell, {}, 0)[0].outputs[0].traceback
        assert (traceback == ["AssertionError: visible"]) is expected, marker
