"""Submissions that cheat, graded by real nbgrader in real kernels: each scores exactly what its
real functions earn (the re-check apart from the notebook decides) and is listed as suspicious.

The tiny course has two graded cells: ``test_player`` (2 points, the hidden ``check_player``)
and ``test_count_empty`` (1 point, plain asserts). Each cheat would fool a run of the notebook
alone; ttt-grader's notebook run leaves the hidden checks to the re-check, which decides.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import grading_course as gc  # noqa: E402

from grader.autograde import autograde, summary  # noqa: E402
from grader.course_ops import export  # noqa: E402

pytestmark = pytest.mark.slow

RIGHT_COUNT = "def count_empty(board):\n    return sum(row.count(EMPTY) for row in board)"
WRONG_PLAYER = "def player(board):\n    return 'X'"  # right on the empty board only

CHEATS = {
    # the three
    "patches-checks": (
        "import grader.checks\n"
        "grader.checks.check_player = lambda *args, **kwargs: 'ok'\n" + WRONG_PLAYER,
        RIGHT_COUNT, {"test_player": 0, "test_count_empty": 1}),
    "always-equal": (
        "class Yes(str):\n    def __eq__(self, other):\n        return True\n    __hash__ = str.__hash__\n\n"
        "def player(board):\n    return Yes('X')",
        "class Always(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n\n"
        "def count_empty(board):\n    return Always(0)",
        {"test_player": 0, "test_count_empty": 0}),
    "swallows-cells": (
        "import ast\n\n"
        "class Swallow(ast.NodeTransformer):\n"
        "    def visit_Module(self, node):\n"
        "        handler = ast.ExceptHandler(type=ast.Name('BaseException', ast.Load()), name=None, body=[ast.Pass()])\n"
        "        wrapped = ast.Try(body=node.body or [ast.Pass()], handlers=[handler], orelse=[], finalbody=[])\n"
        "        return ast.fix_missing_locations(ast.Module(body=[wrapped], type_ignores=[]))\n\n"
        "get_ipython().ast_transformers.append(Swallow())\n" + WRONG_PLAYER,
        "def count_empty(board):\n    return 0",
        {"test_player": 0, "test_count_empty": 0}),
    # two more: the reference the check compares against, and the checks module itself, replaced
    "patches-reference": (
        WRONG_PLAYER + "\n\nimport ttt.tictactoe\nttt.tictactoe.player = lambda board: player(board)",
        RIGHT_COUNT, {"test_player": 0, "test_count_empty": 1}),
    "fake-module": (
        "import sys, types\n"
        "fake = types.ModuleType('grader.checks')\n"
        "fake.check_player = lambda function: 'player: correct on all 4,520 positions'\n"
        "sys.modules['grader.checks'] = fake\n" + WRONG_PLAYER,
        RIGHT_COUNT, {"test_player": 0, "test_count_empty": 1}),
}
HONEST = {"honest": (None, None, {"test_player": 2, "test_count_empty": 1}),
          "honest-wrong": (WRONG_PLAYER, RIGHT_COUNT, {"test_player": 0, "test_count_empty": 1})}


def test_cheats_score_what_their_functions_earn_and_are_listed(tmp_path):
    course = gc.make_course(tmp_path / "course", timeout=20)
    for student, (player, count, _) in {**CHEATS, **HONEST}.items():
        answers = {k: v for k, v in (("player", player), ("count_empty", count)) if v}
        gc.submit(course, student, gc.solved(course, **answers))
    outcomes = {o.student: o for o in autograde(course, jobs=2, progress=False)}
    scores = gc.grades(course)
    report = summary(list(outcomes.values()))
    for student, (_, _, earned) in {**CHEATS, **HONEST}.items():
        assert {g: scores[(student, g)] for g in earned} == earned, (student, outcomes[student])
    for student in CHEATS:
        assert outcomes[student].suspicious, student
        assert f"  {student} / {gc.LESSON}: " in report.split("suspicious")[1]
    for student in HONEST:
        assert outcomes[student].suspicious == [], (student, outcomes[student].suspicious)
    assert any("ast_transformers" in s for s in outcomes["swallows-cells"].suspicious)
    assert any("Yes (a subclass of str)" in s for s in outcomes["always-equal"].suspicious)
    assert any("ttt.tictactoe.player" in s for s in outcomes["patches-reference"].suspicious)
    assert any("sys.modules['grader.checks']" in s for s in outcomes["fake-module"].suspicious)

    rows = {r["student"]: r for r in csv.DictReader((lambda p: (export(course, p), p.open())[1])(tmp_path / "g.csv"))}
    assert {s for s, r in rows.items() if r["suspicious"]} == set(CHEATS)
    assert rows["patches-checks"]["tiny"] == "1.0" and rows["honest"]["tiny"] == "3.0"
