"""StderrAsStdout: right after execution, stderr output becomes stdout, so that only an error fails a test cell."""

from __future__ import annotations

import copy

import pytest
from nbformat.v4 import new_code_cell, new_output
from nbgrader.utils import determine_grade, is_grade, is_solution

from grader.preprocessors import StderrAsStdout

from . import cell_with_id


@pytest.fixture
def preprocessor():
    return StderrAsStdout()


def _streams(nb):
    return [(o.name, o.text) for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "stream"]


def _scores(nb):
    return {c.metadata.nbgrader.grade_id: determine_grade(c)[0] for c in nb.cells if is_grade(c) and not is_solution(c)}


def test_every_stderr_stream_becomes_stdout_with_its_text_and_place(preprocessor, executed):
    """The warning and the log line keep their text and their place among the outputs; stdout is untouched."""
    before = _streams(executed)
    assert {name for name, _ in before} == {"stdout", "stderr"}
    nb, _ = preprocessor.preprocess(executed, {})
    assert _streams(nb) == [("stdout", text) for _, text in before]
    assert any("UserWarning: winner looks at all eight lines" in text for _, text in _streams(nb))


def test_a_test_cell_that_only_warned_now_scores_its_points(preprocessor, executed):
    """nbgrader scores the cells that wrote to stderr zero before, full points after; the NameError still scores zero."""
    assert _scores(executed) == {"winner-tests": 0, "winner-full-board": 0, "terminal-tests": 0}
    nb, _ = preprocessor.preprocess(executed, {})
    assert _scores(nb) == {"winner-tests": 2.0, "winner-full-board": 1.0, "terminal-tests": 0}


def test_errors_and_other_outputs_are_left_alone(preprocessor, executed):
    """An error output stays an error, and display data and results keep their data."""
    error = copy.deepcopy(cell_with_id(executed, "terminal-tests").outputs)
    cell = new_code_cell("print('shown')", outputs=[
        new_output("display_data", data={"text/plain": "a board"}),
        new_output("stream", name="stderr", text="careful\n"),
        new_output("execute_result", data={"text/plain": "3"}, execution_count=2)])
    executed.cells.append(cell)
    nb, _ = preprocessor.preprocess(executed, {})
    assert cell_with_id(nb, "terminal-tests").outputs == error
    assert [(o.output_type, o.get("name")) for o in nb.cells[-1].outputs] == [
        ("display_data", None), ("stream", "stdout"), ("execute_result", None)]


def test_cells_without_stderr_are_unchanged(preprocessor, executed):
    """Markdown, cells without output and cells that wrote only stdout come out as they went in."""
    before = copy.deepcopy(executed)
    nb, _ = preprocessor.preprocess(executed, {})
    for old, new in zip(before.cells, nb.cells):
        if not any(o.get("name") == "stderr" for o in old.get("outputs", [])):
            assert new == old
