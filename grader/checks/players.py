"""The check of lesson 3: the win-block-best-square game's win-block player.
"""

from __future__ import annotations

from typing import Callable

from ttt.games import classic

from grader.checks.failures import _fail, _passed, _show
from grader.checks.student import _Student, _action, _answers, _board, _not_over, _positions, _square_or_none
from grader.checks.display import _guarded


@_guarded
def check_win_block(win_block: Callable) -> str:
    """Print and return a one-line summary if `win_block(board)` plays the win-block-best-square game's cpuMove on every position not over.

    It must win if it can (any winning square), else block (any square where the opponent
    would win), else take the first free square of 4, 0, 2, 6, 8, 1, 3, 5, 7 (the win-block-best-square game's
    BEST_MOVES, squares numbered row by row). The win-block-best-square game tests the block with its own piece, so
    as written it never blocks; the intent, blocking, is what is checked.
    """
    student = _Student(win_block, "win_block")
    boards = _positions(over=False)
    checked = f"{_not_over(boards)} are checked"
    for text, got in _answers(student, boards, checked):
        me = classic.to_move(text)
        wins = classic.winning_squares(text, me)
        blocks = classic.winning_squares(text, "O" if me == "X" else "X")
        if wins:
            allowed, why = wins, f"{me} can win at once"
        elif blocks:
            allowed, why = blocks, f"{me} cannot win at once, but must block the opponent's line"
        else:
            allowed, why = [next(s for s in classic.CENTRE_CORNERS_EDGES if text[s] == ".")], "no win and nothing to block: the first free square of centre, corners, edges (4, 0, 2, 6, 8, 1, 3, 5, 7)"
        square = _square_or_none(got)
        if square is None or square not in allowed:
            raise _fail(
                "win_block(board)",
                _board(text),
                why,
                expected=" or ".join(str(_action(s)) for s in allowed),
                got=_show(got),
                note="" if square is not None else "win_block returns an action (i, j): row i, column j.",
                checked=checked,
            )
    return _passed("win_block", f"all {_not_over(boards)}")
