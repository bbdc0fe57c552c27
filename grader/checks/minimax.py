"""The checks of lessons 4 and 5: `minimax` and `alphabeta` on the positions `search_plan`
gives, and alpha-beta's pruning, counted as the positions it examines through the functions the
lesson hands it.
"""

from __future__ import annotations

import functools
from typing import Callable, Collection, Optional

from ttt.games import classic

from grader.checks.failures import CheckFailed, Text, _fail, _passed, _show, _summary
from grader.checks.reference import _plain
from grader.checks.student import (
    _Failures, _Student, _action, _answer, _board, _on_its_own, _positions, _square_or_none, counting_positions,
)
from grader.checks.display import _guarded


ALPHABETA_CALLS_FRACTION = 0.4  # alpha-beta may visit at most this share of plain minimax's nodes
ALPHABETA_POSITIONS_FRACTION = 0.95  # and examine at most this share of the positions below the boards it searches


@functools.lru_cache(maxsize=None)
def search_plan() -> tuple[Text, ...]:
    """Return the positions the minimax and alpha-beta checks ask about: every reachable position (5,478).

    The 4,520 where the game goes on must get an optimal move, the 958 where it is over None.
    A bug that shows on one position only, and not on its rotations and reflections, is found
    too. Latest first, so that a failure shows a small board; the empty board last.
    """
    return tuple(sorted(_positions(), key=lambda b: b.count(".")))  # stable: BFS order within


def _check_search(student: _Student, name: str) -> str:
    """Return a one-line summary if the search returns an optimal move (None when over) on every position of `search_plan`."""
    plan = search_plan()
    checked = f"{len(plan):,} positions are checked"
    _Failures(name, checked).each(plan, lambda text: _check_move(student, text, checked=checked), asking=student)
    over = sum(1 for b in plan if classic.is_terminal(b))
    return _passed(name, f"all {len(plan):,} positions: an optimal move on the {len(plan) - over:,} where the game goes on, "
                         f"None on the {over:,} where it is over")


def _check_move(student: _Student, text: Text, *, checked: str) -> Optional[int]:
    """Raise CheckFailed unless the student's search returns an optimal action on `text` (None when over);
    return the square it chose (None when over)."""
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
    if square is None or text[square] != "." or square not in best:
        student.explain_a_changed_board(_board(text), call=call, checked=checked)
    if square is None or text[square] != ".":
        what = "an action (i, j) on an empty square" if square is None else f"an empty square, but {_action(square)} is taken"
        raise _fail(call, _board(text), f"should return {what}", expected=expected, got=_show(got), checked=checked,
                    kind="not an action on an empty square")
    if square not in best:
        after = classic.value(classic.play(text, square))
        words = {1: "X wins", 0: "a tie", -1: "O wins"}
        raise _fail(
            call,
            _board(text),
            f"{_action(square)} is not an optimal move for {classic.to_move(text)}",
            expected=f"{expected} (with best play: {words[value]})",
            got=f"{got!r} (with best play after it: {words[after]})",
            checked=checked,
            kind="not optimal",
        )
    return square


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
def pruning_positions() -> tuple[Text, ...]:
    """Return the positions alpha-beta's pruning is counted on: one of each symmetric family with two marks (12).

    Their trees are big enough for pruning to show (plain minimax visits 92,088 nodes there) and
    small enough that every position a search examines can be counted by the grader itself, a
    call at a time (from a sandbox, each one crosses to the grader and back).
    """
    return tuple(sorted({classic.canonical(b) for b in _positions(over=False) if b.count(".") == 7}))


@functools.lru_cache(maxsize=None)
def minimax_calls() -> int:
    """Return the calls to result plain minimax makes from the positions of `pruning_positions`, summed (92,076)."""
    return sum(classic.tree_size(b) - 1 for b in pruning_positions())


@functools.lru_cache(maxsize=None)
def reachable_positions() -> int:
    """Return the distinct positions that can arise from each position of `pruning_positions`, each
    root included, summed (7,710): what a search that remembers positions and never cuts off
    examines there, each once."""
    return sum(len(classic.reachable_positions(text)) for text in pruning_positions())


@functools.lru_cache(maxsize=None)
def minimax_positions() -> int:
    """Return the nodes plain minimax visits from the positions of `pruning_positions`, each root included, summed (92,088)."""
    return minimax_calls() + len(pruning_positions())


def _proves(text: Text, value: int, *, at_least: bool, depth: int) -> int:
    """Return the fewest positions at most `depth` moves below `text` (itself included) that any search must
    examine to know that its value is at least (or at most) `value`: 0 when every value is."""
    if (value <= -1) if at_least else (value >= 1):
        return 0
    if depth == 0 or classic.is_terminal(text):
        return 1
    children = [classic.play(text, square) for square in classic.moves(text)]
    choosing = classic.to_move(text) == ("X" if at_least else "O")  # one good child is enough
    below = [_proves(c, value, at_least=at_least, depth=depth - 1) for c in children
             if not choosing or (classic.value(c) >= value if at_least else classic.value(c) <= value)]
    return 1 + (min(below) if choosing else sum(below))


@functools.lru_cache(maxsize=None)
def least_positions(text: Text) -> int:
    """Return a number of positions every search that finds an optimal move on `text` examines, at the least.

    To know a move is optimal, a search must show that its child is worth the position's value
    and that no other child is worth more (for the player to move). Counted to two moves below
    the root, where no two lines of play meet in one position (from the third move on they
    can, so a search that remembers positions could examine fewer there): the positions of the
    smallest such proof there, with perfect move ordering, and knowing that values lie in
    -1..1 (a win needs no look at the other moves).
    """
    value = classic.value(text)
    x_moves = classic.to_move(text) == "X"
    children = [classic.play(text, square) for square in classic.moves(text)]
    best = [c for c in children if classic.value(c) == value]
    return 1 + min(_proves(c, value, at_least=x_moves, depth=1)
                   + sum(_proves(o, value, at_least=not x_moves, depth=1) for o in children if o != c) for c in best)


def proves_move(examined: Collection[Text], text: Text, square: int) -> bool:
    """Return True if the positions `examined` hold a proof that playing `square` on `text` is optimal.

    The proof a search must have looked at to know it: the child it chose is worth at least the
    position's value (for X to move; at most, for O) and every other child at most that (at least).
    A bound at a position is shown by the positions examined only: a finished position by its own
    result; where the player the bound favours moves, by one child that shows it; where the other
    player moves, by every child. A bound no value can break (at least -1, at most 1) needs nothing.
    Alpha-beta's cut-offs are exactly such proofs, so every alpha-beta, with any move order, in place
    or with ``result``, with or without a memo of positions it examined, passes; a search that finds
    its values with rules of its own and shows the lesson's functions other positions does not.
    """
    seen = examined if isinstance(examined, (set, frozenset)) else set(examined)
    shown_cache: dict = {}

    def shown(at: Text, bound: int, at_least: bool) -> bool:
        if (bound <= -1) if at_least else (bound >= 1):
            return True
        if at not in seen:
            return False
        key = (at, bound, at_least)
        if key not in shown_cache:
            if classic.is_terminal(at):
                worth = classic.value(at)
                shown_cache[key] = worth >= bound if at_least else worth <= bound
            else:
                children = (shown(classic.play(at, s), bound, at_least) for s in classic.moves(at))
                favoured = classic.to_move(at) == ("X" if at_least else "O")
                shown_cache[key] = any(children) if favoured else all(children)
        return shown_cache[key]

    value, x_moves = classic.value(text), classic.to_move(text) == "X"
    return text in seen and shown(classic.play(text, square), value, x_moves) and all(
        shown(classic.play(text, other), value, not x_moves) for other in classic.moves(text) if other != square)


SEARCHED_ELSEWHERE = "searched with rules of its own: the positions it showed the lesson's functions prove nothing"


def count_pruning(student: _Student, *, fraction: float = ALPHABETA_CALLS_FRACTION, at: Optional[list] = None) -> list[tuple[Text, int, int]]:
    """Return (position, nodes visited, distinct positions examined) for each position of `pruning_positions`, if the student's alphabeta
    passes the pruning rule there; else raise CheckFailed saying which part of the rule it broke.

    The one home of the rule, which lesson 5's visible test (`grader.checks.expect_pruning`) and its
    hidden test (`check_alphabeta_calls`) both apply: the nodes are the positions the search examines,
    counted through the functions the lesson hands it (`counting_positions`); summed over the 12
    positions they may be at most `fraction` of plain minimax's (`minimax_positions`), and the
    distinct positions of each search at most `ALPHABETA_POSITIONS_FRACTION` of those below its
    board (`reachable_positions`); on each position at least `least_positions`; and every answer
    must be optimal. The count stops as soon as it passes a bound. `at`, if given, holds the
    position being searched (for a message about a search stopped from outside).

    The second bound is what tells pruning from remembering: a minimax with a memo of positions
    visits each position below the board once, 8.4% of plain minimax's nodes, but examines all of
    them, as any search that never cuts off does; alpha-beta skips some (the lesson's examines 50%
    of them in the order a set of actions gives, 58-62% in random orders; without narrowing the
    window at the root, 78% and 89-90%). A memo with a cut-off on a win (52-56%) is a search
    that prunes, and passes.
    """
    namespace = getattr(_plain(student.function), "__globals__", None)
    if namespace is None:
        raise CheckFailed("alphabeta should be a function defined in the notebook, so the positions it examines can be counted.")
    boards = pruning_positions()
    bound = int(fraction * minimax_positions())
    distinct_bound = int(ALPHABETA_POSITIONS_FRACTION * reachable_positions())
    checked = f"{len(boards):,} positions are checked"
    counts = []
    with counting_positions(namespace) as examined:
        for text in boards:
            if at is not None:
                at[:] = [text]
            examined.new_search()
            before, distinct_before = examined.count, examined.distinct
            answer = _check_move(student, text, checked=checked)
            seen, least = examined.count - before, least_positions(text)
            counts.append((text, seen, examined.distinct - distinct_before))
            if seen < least:
                raise _fail(
                    "alphabeta(board)", _board(text),
                    f"your alphabeta examined {seen:,} position{'s' if seen != 1 else ''}, fewer than any search that proves "
                    "the value can: does it look at the board without the lesson's functions?",
                    expected=f"at least {least:,} positions", got=f"{seen:,}", checked=checked, kind="examined too few",
                    note="The grader counts the positions your search examines through the functions the lesson gives it "
                         "(player, actions, result, winner, terminal, utility): use them on every board your search looks at.")
            if not proves_move(examined.positions, text, answer):
                failed = _fail(
                    "alphabeta(board)", _board(text),
                    f"the positions your alphabeta examined through the lesson's functions ({seen:,}) do not show that "
                    f"{_action(answer)} is a best move: it found its values some other way",
                    expected="the positions of a search that proves its move is best", got=f"{seen:,} positions that do not",
                    checked=checked, kind="searched elsewhere",
                    note="Pruning is graded on the positions your search examines through the functions the lesson gives "
                         "it: search with them (player, actions, result, winner, terminal, utility), not with copies.")
                failed.suspicious = SEARCHED_ELSEWHERE
                raise failed
            if examined.count > bound:
                raise _fail(
                    "alphabeta(board)",
                    None,
                    f"prunes too little: {examined.count:,} nodes visited before reaching the end of the positions",
                    expected=f"at most {bound:,} nodes in all ({fraction:.0%} of the {minimax_positions():,} plain minimax visits)",
                    got=f"more than {bound:,}, stopped at position {boards.index(text) + 1:,} of {len(boards):,}",
                    note="Cut off as soon as v >= beta in max_value (v <= alpha in min_value): with values only -1, 0 and 1, equal values are common and cutting off on them matters.",
                )
            if examined.distinct > distinct_bound:
                raise _fail(
                    "alphabeta(board)",
                    None,
                    f"prunes too little: {examined.distinct:,} different positions examined before reaching the end of the positions",
                    expected=f"at most {distinct_bound:,} in all ({ALPHABETA_POSITIONS_FRACTION:.0%} of the {reachable_positions():,} "
                             "positions that can arise from them)",
                    got=f"more than {distinct_bound:,}, stopped at position {boards.index(text) + 1:,} of {len(boards):,}",
                    note="A search that remembers the positions it has seen (a memo) visits each one once, but without cut-offs it "
                         "still examines every position below the board. Alpha-beta skips the moves that cannot change the answer: "
                         "cut off as soon as v >= beta in max_value (v <= alpha in min_value).",
                )
    return counts


def pruning_summary(counts: list[tuple[Text, int, int]], fraction: float = ALPHABETA_CALLS_FRACTION) -> str:
    """Return the line that says how many nodes a search visited, and how many positions it examined,
    over the positions of `count_pruning`."""
    total, distinct = sum(seen for _, seen, _ in counts), sum(d for _, _, d in counts)
    return (f"alphabeta: {total:,} nodes visited over {len(counts):,} positions, {total / minimax_positions():.1%} of plain "
            f"minimax's {minimax_positions():,} (the bound is {fraction:.0%}, {int(fraction * minimax_positions()):,} nodes); "
            f"{distinct:,} different positions examined, {distinct / reachable_positions():.1%} of the {reachable_positions():,} "
            f"that can arise (the bound is {ALPHABETA_POSITIONS_FRACTION:.0%}).")


@_guarded
def check_alphabeta_calls(alphabeta: Callable, *, fraction: float = ALPHABETA_CALLS_FRACTION) -> str:
    """Print and return a one-line summary if `alphabeta` prunes: it visits at most `fraction` of plain minimax's nodes.

    The rule is `count_pruning`'s, the same the lesson's visible test applies. The nodes are the
    positions the search examines, counted through the functions the lesson
    hands it (player, actions, result, winner, terminal, utility; `counting_positions`), each
    read as it is at the call, so a search that changes one board in place and undoes the move
    is counted as one that makes every child with ``result``. Summed over the 12 positions of
    `pruning_positions` (one of each symmetric family with two marks; whether every move is
    optimal, `check_alphabeta` asks on every position): plain minimax visits 92,088 nodes there,
    so the bound is 36,835. For scale: the lesson's alpha-beta (cut off when v >= beta, or v <=
    alpha, actions in the order a set gives them) visits 14.8% of minimax's nodes; cutting off
    only when v > beta visits 55%, and fails. On each position the count must be at least
    `least_positions` (a search that examines fewer looks at the board some other way). Every
    answer must also be optimal, and the count stops as soon as it passes the bound.
    """
    return _summary(pruning_summary(count_pruning(_Student(alphabeta, "alphabeta", kind="alphabeta"), fraction=fraction), fraction))
