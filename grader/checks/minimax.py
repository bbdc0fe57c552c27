"""The checks of lessons 4 and 5: `minimax` and `alphabeta` on the positions `search_plan`
gives, and alpha-beta's pruning, counted through its calls to ``result``.
"""

from __future__ import annotations

import functools
from typing import Callable

from ttt.games import classic

from grader.checks.failures import CheckFailed, Text, _fail, _passed, _show, _summary
from grader.checks.reference import _plain
from grader.checks.student import (
    _Failures, _Student, _action, _answer, _board, _on_its_own, _positions, _square_or_none, counting_calls,
)
from grader.checks.display import _guarded


ALPHABETA_CALLS_FRACTION = 0.4  # alpha-beta may call result at most this share of minimax's calls


@functools.lru_cache(maxsize=None)
def search_plan() -> tuple[Text, ...]:
    """Return the positions the minimax and alpha-beta checks ask about: the same on any machine.

    Every position with at most two marks (the empty board, all 9 one-move and all 72 two-move
    positions: the early game, where a search is slowest and a bug hides longest), one of each
    symmetric family of the positions with three or four marks, and every position with five
    or more marks (the game over or not). Latest first, so that a failure shows a small board;
    the empty board last.
    """
    seen: set = set()
    plan = []
    for b in _positions():
        if 3 <= 9 - b.count(".") <= 4:
            c = classic.canonical(b)
            if c in seen:
                continue
            seen.add(c)
        plan.append(b)
    return tuple(sorted(plan, key=lambda b: b.count(".")))  # stable: BFS order within


def _check_search(student: _Student, name: str) -> str:
    """Return a one-line summary if the search returns an optimal move (None when over) on every position of `search_plan`."""
    plan = search_plan()
    checked = f"{len(plan):,} positions are checked"
    _Failures(name, checked).each(plan, lambda text: _check_move(student, text, checked=checked))
    early = sum(1 for b in plan if b.count(".") >= 7)
    return _passed(name, f"{len(plan):,} positions: all {early} with at most two marks, one of each symmetric family "
                         "with three or four, all with five or more")


def _check_move(student: _Student, text: Text, *, checked: str) -> None:
    """Raise CheckFailed unless the student's search returns an optimal action on `text` (None when over)."""
    name = student.name
    call = f"{name}(board)"
    if classic.is_terminal(text):
        try:
            got = _answer(student, text, checked)
        except CheckFailed as failed:
            if failed.fatal or not failed.kind.startswith("raised"):
                raise
            said = str(failed).split("\n")[0].split(": ", 1)[1]
            raise _fail(call, _board(text), f"the game is over, so {name} should return None; it {said}", expected="None",
                        checked=checked, kind="game over: not None",
                        note="Check terminal(board) first and return None: there is no move to make.") from None
        if got is not None:
            raise _fail(call, _board(text), "the game is over, so there is no move to make", expected="None", got=_show(got), checked=checked,
                        kind="game over: not None")
        return
    got = _answer(student, text, checked)
    square = _square_or_none(got)
    best = classic.optimal_moves(text)
    value = classic.value(text)
    expected = " or ".join(str(_action(s)) for s in best)
    if square is None or text[square] != ".":
        what = "an action (i, j) on an empty square" if square is None else f"an empty square, but {_action(square)} is taken"
        raise _fail(call, _board(text), f"should return {what}", expected=expected, got=_show(got), checked=checked,
                    kind="not an action on an empty square")
    if square not in best:
        after = classic.value(classic.play(text, square))
        words = {1: "X wins", 0: "a draw", -1: "O wins"}
        raise _fail(
            call,
            _board(text),
            f"{_action(square)} is not an optimal move for {classic.to_move(text)}",
            expected=f"{expected} (with best play: {words[value]})",
            got=f"{got!r} (with best play after it: {words[after]})",
            checked=checked,
            kind="not optimal",
        )


@_guarded
@_on_its_own("minimax")
def check_minimax(student: _Student) -> str:
    """Print and return a one-line summary if `minimax(board)` returns an optimal action on the positions `search_plan` gives.

    Any optimal action is accepted: its value (with best play after it) must equal the
    position's value. On a board where the game is over it must return None.
    """
    return _check_search(student, "minimax")


@_guarded
@_on_its_own("alphabeta", kind="alphabeta")
def check_alphabeta(student: _Student) -> str:
    """Print and return a one-line summary if `alphabeta(board)` returns an optimal action, as `check_minimax` checks."""
    return _check_search(student, "alphabeta")


@functools.lru_cache(maxsize=None)
def minimax_calls() -> int:
    """Return the calls to result plain minimax makes from every position not over, summed (2,121,015)."""
    return sum(classic.tree_size(b) - 1 for b in _positions(over=False))


@_guarded
def check_alphabeta_calls(alphabeta: Callable, *, fraction: float = ALPHABETA_CALLS_FRACTION) -> str:
    """Print and return a one-line summary if `alphabeta` prunes: at most `fraction` of plain minimax's calls to result.

    The nodes visited are counted through the calls to ``result`` in the student's namespace,
    summed over every position where the game is not over (4,520); plain minimax makes
    2,121,015 such calls, so the bound is 848,406. For scale: alpha-beta as in AIMA (cut off
    when v >= beta, or v <= alpha) makes about 14% of minimax's calls when it tries actions in
    the order a set gives them, 24% when it does not narrow the window at the root, 34% when it
    tries the best moves last; cutting off only when v > beta makes 48%, and fails. Every answer must
    also be optimal, and the count stops as soon as it passes the bound.
    """
    student = _Student(alphabeta, "alphabeta", kind="alphabeta")
    namespace = getattr(_plain(alphabeta), "__globals__", None)
    if namespace is None:
        raise CheckFailed("alphabeta should be a function defined in the notebook, so its calls to result can be counted.")
    boards = _positions(over=False)
    bound = int(fraction * minimax_calls())
    checked = f"{len(boards):,} positions are checked"
    with counting_calls(namespace) as count:
        for text in boards:
            before = count[0]
            _check_move(student, text, checked=checked)
            if count[0] == before and text.count(".") > 1:
                raise _fail("alphabeta(board)", _board(text), "never called result(board, action)", note="The grader counts the nodes your search visits through its calls to result: make every child board with result.", checked=checked)
            if count[0] > bound:
                raise _fail(
                    "alphabeta(board)",
                    None,
                    f"prunes too little: {count[0]:,} calls to result before reaching the end of the positions",
                    expected=f"at most {bound:,} calls to result in all ({fraction:.0%} of the {minimax_calls():,} plain minimax makes)",
                    got=f"more than {bound:,}, stopped at position {boards.index(text) + 1:,} of {len(boards):,}",
                    note="Cut off as soon as v >= beta in max_value (v <= alpha in min_value): with values only -1, 0 and 1, equal values are common and cutting off on them matters.",
                )
    share = count[0] / minimax_calls()
    return _summary(
        f"alphabeta: {count[0]:,} calls to result over {len(boards):,} positions, {share:.1%} of plain minimax's "
        f"{minimax_calls():,} (the bound is {fraction:.0%})."
    )
