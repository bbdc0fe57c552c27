"""Budgets count work, not seconds: lesson 6's match between the student's search and the write-up's
player plays the same games on a quiet machine as on one loaded with CPU-burning processes."""

from __future__ import annotations


import nbformat

from grader.checks import play_depths
from lesson_code import NOTEBOOKS, solution_namespace
from machine_load import cpu_burners
from ttt import agents

L6 = "06-heuristics-and-depth-limits"


def match(namespace: dict) -> tuple[dict, int]:
    """The lesson's match, small: depths 1 to 3, 4 games each, stopped by a budget spent during depth 3."""
    return play_depths(namespace["depth_limited_move"], game=namespace["game"], depths=(1, 2, 3), games=4, nodes=8_000,
                       opponent=lambda: agents.make("line-count", seed=1, game="nine-board"))


def test_a_loaded_machine_plays_the_same_games_as_a_quiet_one():
    namespace = solution_namespace(L6)
    quiet = match(namespace)
    with cpu_burners(count=2):
        loaded = match(namespace)
    assert loaded == quiet
    results, made = quiet
    played = {depth: sum(tally.values()) for depth, tally in results.items()}
    assert played[1] == played[2] == 4 and 0 < played.get(3, 0) < 4, played  # the budget ran out during depth 3
    assert made >= 8_000


def test_the_lesson_s_match_counts_work_not_time():
    cell = next(c for c in nbformat.read(NOTEBOOKS / f"{L6}.ipynb", as_version=4).cells if "play_depths(" in c.source)
    assert "NODES = 0 if autograding() else 400_000" in cell.source and "perf_counter" not in cell.source
