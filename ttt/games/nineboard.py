"""The nine-board game of the CSC 242 write-up ("Advanced Tic-tac-toe"): nine 3x3 boards, one sends you on.

Rules (the CSC 242 write-up): the cell you play in picks the board your opponent must play on next; the
first move may be on any board; the first three in a row on any small board wins the game;
when no square is left, it is a tie. The CSC 242 write-up does not say what happens when the board you
are sent to is full (it only mentions "checking if a board is full"); here the player sent to
a full board may play on any free square of any board, the usual rule.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional, Sequence

from ttt.errors import InvalidBoardError
from ttt.games.bigboard import (
    BOARD_NUMBERS,
    BOARD_SLICES,
    CELL_RANK,
    WIN_VALUE,
    BigBoardGame,
    BigState,
    Move,
    Mark,
    Small,
    Squares,
    free_cells,
    line_score,
    order_by,
    line_count_evaluate,
    small_winner,
    to_move,
    winning_cells,
)
from ttt.games.classic import completed_lines, moved_last

INSTRUCTIONS = f"""\
Nine-board tic-tac-toe (the CSC 242 write-up): nine small boards. The cell you play in sends
your opponent to the board with that number; the first move may go anywhere, and a player sent
to a full board may play on any board. Three in a row on any small board wins. X moves first.
Type a move as the board and the cell, like 4 7; {BOARD_NUMBERS}
Ctrl-D or Ctrl-C quits.
"""


@lru_cache(maxsize=1 << 18)
def winner_of(squares: Squares) -> Optional[Mark]:
    """Return the player with three in a row on some small board, else None."""
    for s in BOARD_SLICES:
        w = small_winner(squares[s])
        if w is not None:
            return w
    return None


def winner(state: BigState) -> Optional[Mark]:
    """Return 'X' or 'O' if that player has three in a row on a small board, else None."""
    return winner_of(state.squares)


# --- the stronger heuristic -------------------------------------------------------------------

NEAR_WIN = WIN_VALUE - 100  # a position the next move decides, judged without searching it
_ONE, _TWO = 1, 6  # a line of one player's marks: one mark, two marks
_POISON = 4  # each free square the opponent may not take (it sends you to your winning board)


@lru_cache(maxsize=None)
def small_lines(small: Small) -> int:
    """Return X's open-line score minus O's on one small board (1 for one mark, 6 for two)."""
    return line_score(small, "X", _ONE, _TWO) - line_score(small, "O", _ONE, _TWO)


def evaluate(state: BigState) -> float:
    """Return an estimate for X that knows the game is won by sending, not by drawing lines.

    A board where a player has two in a line with the third square free is a *threat*: whoever
    is sent there wins, so every free square whose cell number is that board is poisoned for
    the opponent. The estimate is ±``NEAR_WIN`` when the mover can win at once, or when every
    square the mover may take sends the opponent to a board the opponent wins; otherwise the
    open-line score of the boards plus 4 for each square poisoned for the opponent.
    """
    squares, sent_to = state
    w = winner_of(squares)
    if w is not None:
        return WIN_VALUE + squares.count(".") if w == "X" else -WIN_VALUE - squares.count(".")
    if "." not in squares:
        return 0.0
    smalls = [squares[s] for s in BOARD_SLICES]
    x_threat = [bool(winning_cells(s, "X")) for s in smalls]
    o_threat = [bool(winning_cells(s, "O")) for s in smalls]
    mover = to_move(state)
    mine, theirs = (x_threat, o_threat) if mover == "X" else (o_threat, x_threat)
    sign = 1 if mover == "X" else -1
    boards = [sent_to] if sent_to is not None else [b for b in range(9) if "." in smalls[b]]
    if any(mine[b] for b in boards):
        return sign * NEAR_WIN
    they_win_anywhere = any(theirs)
    safe = 0
    for b in boards:
        for c in free_cells(smalls[b]):
            target_full = smalls[c].count(".") == (1 if c == b else 0)
            if not (they_win_anywhere if target_full else theirs[c]):
                safe += 1
    if not safe:
        return -sign * (NEAR_WIN - 1)
    score = 0
    for c in range(9):
        if x_threat[c] or o_threat[c]:
            free_c = sum(s[c] == "." for s in smalls)
            score += _POISON * free_c * (x_threat[c] - o_threat[c])
    score += sum(small_lines(s) for s in smalls)
    return float(max(-NEAR_WIN + 2, min(NEAR_WIN - 2, score)))


# --- move ordering ------------------------------------------------------------------------------

def order_moves(state: BigState, moves: Sequence[Move]) -> list[Move]:
    """Return `moves` most promising first: wins, then blocks, then quiet moves (centre, corners,
    edges), and last the moves that send the opponent to a board where the opponent wins."""
    squares = state.squares

    def rank(move: Move, small: Small, target: Small, mover: Mark, them: Mark) -> int:
        b, c = move
        if c in winning_cells(small, mover):
            return 0
        if "." not in target:  # the opponent may play anywhere
            return 8 if any(winning_cells(squares[s], them) for s in BOARD_SLICES) else 4 + CELL_RANK[c]
        if winning_cells(target, them):
            return 9
        return 1 if c in winning_cells(small, them) else 2 + CELL_RANK[c]

    return order_by(state, moves, rank)


class NineBoard(BigBoardGame):
    """The CSC 242 write-up's nine-board game on the game protocol: the first line on any small board wins."""

    name = "nine-board"
    instructions = INSTRUCTIONS

    winner = staticmethod(winner)
    evaluate = staticmethod(evaluate)
    order_moves = staticmethod(order_moves)

    @staticmethod
    def is_closed(small: Small) -> bool:
        """Return True if the small board is full (a player sent there plays anywhere)."""
        return "." not in small

    def is_terminal(self, state: BigState) -> bool:
        return winner_of(state.squares) is not None or "." not in state.squares

    def winning_line(self, state: BigState) -> tuple[int, ...]:
        """Return the three squares of the first line on a small board; () if there is none."""
        for b, s in enumerate(BOARD_SLICES):
            lines = completed_lines(state.squares[s])
            if lines:
                return tuple(9 * b + c for c in lines[0])
        return ()

    def check_position(self, squares: Squares) -> None:
        """Raise InvalidBoardError for impossible counts, two won boards, or the wrong winner."""
        super().check_position(squares)
        won = [(b, small_winner(squares[s])) for b, s in enumerate(BOARD_SLICES) if small_winner(squares[s])]
        if len(won) > 1:
            raise InvalidBoardError(
                f"boards {' and '.join(str(b) for b, _ in won)} both have three in a row: "
                "the first line ends the game"
            )
        if won:
            b, w = won[0]
            if not moved_last(squares, w):
                raise InvalidBoardError(f"{w} has three in a row on board {b} but {w} did not move last")


__all__ = ["INSTRUCTIONS", "NineBoard", "evaluate", "order_moves", "line_count_evaluate", "winner"]
