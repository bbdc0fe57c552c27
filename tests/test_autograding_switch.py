"""The lessons' demonstrations do little while nbgrader runs a notebook (``ttt.autograding``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from lesson_code import notebook, solution_namespace  # noqa: E402

from ttt import autograding  # noqa: E402


def _cell(lesson: str, cell_id: str) -> str:
    return next(c.source for c in notebook(lesson).cells if c.get("id") == cell_id)


def test_autograding_follows_nbgrader_s_variable(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert autograding() is False
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert autograding() is True


def test_the_node_count_from_the_empty_board_is_not_run_while_graded(monkeypatch, capsys):
    namespace = solution_namespace("04-minimax")
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    exec(_cell("04-minimax", "cell-08"), namespace)
    assert capsys.readouterr().out == "not run while the notebook is graded\n"
    assert "calls" not in namespace


def test_the_other_demonstrations_shrink_while_graded():
    assert "positions = positions[-1:]" in _cell("05-alpha-beta", "cell-11")
    assert "NODES = 0 if autograding() else 400_000" in _cell("06-heuristics-and-depth-limits", "cell-13")
    assert "games=0 if autograding() else 4" in _cell("06-heuristics-and-depth-limits", "cell-15")
