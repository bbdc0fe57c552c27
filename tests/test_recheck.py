"""The re-check apart from the notebook (``grader.recheck``), run directly on small notebooks in
its real subprocess: it sees the grading environment the kernel sees, and it judges the values the
submission hands to the grader, not those its functions pass to each other."""

from __future__ import annotations

import nbformat
import pytest

from grader.recheck import run

pytestmark = pytest.mark.slow


def notebook(tmp_path, definitions: str, tests: dict[str, str]):
    """Writes a notebook: one solution cell of `definitions`, then a graded test cell per entry."""
    cells = [nbformat.v4.new_code_cell(definitions, metadata={"nbgrader": {
        "solution": True, "grade": False, "grade_id": "answer", "locked": False, "schema_version": 3}})]
    for grade_id, source in tests.items():
        cells.append(nbformat.v4.new_code_cell(source, metadata={"nbgrader": {
            "solution": False, "grade": True, "grade_id": grade_id, "points": 1, "locked": True, "schema_version": 3}}))
    path = tmp_path / "submission.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def test_the_re_check_sees_the_grading_environment_so_demonstrations_shrink(tmp_path, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)  # the grader's own process need not have it
    path = notebook(tmp_path, "import ttt\nif ttt.autograding():\n    SIZE = 'small'\nelse:\n    SIZE = 'whole game tree'\n",
                    {"shrunk": "assert SIZE == 'small', SIZE"})
    verdicts, notes = run(path, timeout=30)
    assert verdicts == {"shrunk": (True, "")} and notes == []


def test_values_the_submission_passes_itself_are_its_own_but_what_reaches_the_grader_is_plain(tmp_path):
    definitions = ("class Yes(str):\n    def __eq__(self, other):\n        return True\n    __hash__ = str.__hash__\n\n"
                   "def inner():\n    return Yes('X')\n\n"
                   "def honest():\n    return str.__str__(inner()) if inner() == 'X' else 'O'\n\n"
                   "def cheat():\n    return inner()\n")
    path = notebook(tmp_path, definitions, {"honest": "assert honest() == 'X'", "cheat": "assert cheat() == 'O'"})
    verdicts, notes = run(path, timeout=30)
    assert verdicts["honest"] == (True, "")
    passed, message = verdicts["cheat"]
    assert not passed and "cheat returned a Yes (a subclass of str)" in message
    assert "cheat returned a Yes (a subclass of str), not a plain built-in value" in notes
