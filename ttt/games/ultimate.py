"""Ultimate tic-tac-toe: win small boards to claim the squares of the big board.

Rules: the cell you play in sends your opponent to the board with that number (the first move
may go anywhere). Three in a row on a small board wins that board and claims that square of
the big board; three claimed squares in a row win the game. A board that is won or full is
*closed*: no one plays on it again, and a player sent to a closed board may play on any free
cell of any open board. A small board that fills up without a line is claimed by no one (a
dead square on the big board, written ``=``). When every board is closed and no one has three
claimed squares in a row, the game is a tie (no tie-break by counting boards).
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
    order_by,
    line_count_evaluate,
    to_move,
    winning_cells,
)
from ttt.games import classic
from ttt.games.classic import LINES
from ttt.games.nineboard import small_lines

INSTRUCTIONS = f"""\
Ultimate tic-tac-toe: nine small boards make one big board. The cell you play in sends your
opponent to the board with that number; the first move may go anywhere. Three in a row on a
small board wins it and claims that square of the big board; three claimed squares in a row
win the game. No one plays on a won or full board again; sent to one, you may play on any open
board. X moves first.
Type a move as the board and the cell, like 4 7; {BOARD_NUMBERS}
Ctrl-D or Ctrl-C quits.
"""

DEAD = "="  # a big-board square whose small board filled up without a line


@lru_cache(maxsize=None)
def small_status(small: Small) -> str:
    """Return the big-board square of one small board: 'X' or 'O' (won), '=' (full), '.' (open)."""
    return classic.winner(small) or (DEAD if classic.is_terminal(small) else ".")


@lru_cache(maxsize=1 << 18)
def big_board(squares: Squares) -> str:
    """Return the big board as nine characters: 'X', 'O', '=' (dead) or '.' (still open)."""
    return "".join([small_status(squares[s]) for s in BOARD_SLICES])


@lru_cache(maxsize=None)
def big_winner(big: str) -> Optional[Mark]:
    """Return the player with three claimed squares in a row on the big board, else None."""
    return classic.winner(big)


def winner(state: BigState) -> Optional[Mark]:
    """Return 'X' or 'O' if that player has claimed three boards in a row, else None."""
    return big_winner(big_board(state.squares))


def is_closed(small: Small) -> bool:
    """Return True if the small board is won or full: no one plays on it again."""
    return small_status(small) != "."


# --- the stronger heuristic -------------------------------------------------------------------

NEAR_WIN = WIN_VALUE - 100
_LINE_WEIGHT = 60.0  # a big line, scaled by how likely each side is to take all three of its boards
_BOARD_WEIGHT = 8.0  # a board's own value, times the number of big lines through it
_LINES_THROUGH = tuple(len(lines) for lines in classic.LINES_THROUGH)  # 3, 2, 3, 2, 4, ...


@lru_cache(maxsize=None)
def board_value(small: Small) -> float:
    """Return how good one small board is for X, from -1 (won by O) to 1 (won by X).

    An open board is judged by its lines (`small_lines`) and by who has a cell that wins it,
    and kept within ±0.8 so that a won board always counts more.
    """
    if small_status(small) != ".":  # won or full: what the game is worth there
        return float(classic.utility(small))
    v = small_lines(small) / 24.0
    v += 0.25 * (bool(winning_cells(small, "X")) - bool(winning_cells(small, "O")))
    return max(-0.8, min(0.8, v))


def evaluate(state: BigState) -> float:
    """Return an estimate for X: the big board's lines, each weighted by how likely each player
    is to take its three boards, plus each board's own value weighted by the lines through it.

    A board's value (`board_value`) reads as a chance: X takes the board with chance (1 + v)/2.
    A big line not blocked (by a dead board or both players) scores the product of X's chances
    on its three boards minus the product of O's, times 60. ±``NEAR_WIN`` when the mover can
    win the game at once by winning a board.
    """
    squares, sent_to = state
    big = big_board(squares)
    w = big_winner(big)
    if w is not None:
        return WIN_VALUE + squares.count(".") if w == "X" else -WIN_VALUE - squares.count(".")
    if "." not in big:
        return 0.0
    mover = to_move(state)
    boards = [sent_to] if sent_to is not None else [b for b in range(9) if big[b] == "."]
    for b in boards:
        if winning_cells(squares[9 * b : 9 * b + 9], mover) and big_winner(big[:b] + mover + big[b + 1 :]) == mover:
            return NEAR_WIN if mover == "X" else -NEAR_WIN
    values = [board_value(squares[s]) for s in BOARD_SLICES]
    score = 0.0
    for a, b, c in LINES:
        line = big[a] + big[b] + big[c]
        if DEAD in line:
            continue
        va, vb, vc = values[a], values[b], values[c]
        if "O" not in line:
            score += _LINE_WEIGHT * (1 + va) * (1 + vb) * (1 + vc) / 8
        if "X" not in line:
            score -= _LINE_WEIGHT * (1 - va) * (1 - vb) * (1 - vc) / 8
    score += _BOARD_WEIGHT * sum(v * n for v, n in zip(values, _LINES_THROUGH))
    if sent_to is None:  # free choice of board is worth a little to the mover
        score += 3 if mover == "X" else -3
    return max(-NEAR_WIN + 1, min(NEAR_WIN - 1, score))


# --- move ordering ------------------------------------------------------------------------------

def order_moves(state: BigState, moves: Sequence[Move]) -> list[Move]:
    """Return `moves` most promising first: wins of the game, wins of a board, blocks, quiet
    moves (centre, corners, edges), then moves that give the opponent a free choice of board,
    and last those that send the opponent to a board the opponent can win at once."""
    big = big_board(state.squares)

    def rank(move: Move, small: Small, target: Small, mover: Mark, them: Mark) -> int:
        b, c = move
        if c in winning_cells(small, mover):
            return 0 if big_winner(big[:b] + mover + big[b + 1 :]) == mover else 1
        if small_status(target) != ".":  # the opponent may play on any open board
            return 7
        if winning_cells(target, them):
            return 8
        return 2 if c in winning_cells(small, them) else 3 + CELL_RANK[c]

    return order_by(state, moves, rank)


class Ultimate(BigBoardGame):
    """Ultimate tic-tac-toe on the game protocol: three won boards in a row win."""

    name = "ultimate"
    instructions = INSTRUCTIONS

    winner = staticmethod(winner)
    evaluate = staticmethod(evaluate)
    order_moves = staticmethod(order_moves)
    is_closed = staticmethod(is_closed)

    def closed_reason(self, small: Small) -> str:
        status = small_status(small)
        return f"{status} has won it" if status in "XO" else "it is full"

    def is_terminal(self, state: BigState) -> bool:
        big = big_board(state.squares)
        return big_winner(big) is not None or "." not in big

    def owners(self, state: BigState) -> tuple[str, ...]:
        """Return who has won each small board: 'X', 'O' or ''."""
        return tuple(w if w in "XO" else "" for w in big_board(state.squares))

    def winning_line(self, state: BigState) -> tuple[int, ...]:
        """Return every square of the three boards in a row that won the game; () if none has."""
        lines = classic.completed_lines(big_board(state.squares))
        return tuple(9 * b + c for b in lines[0] for c in range(9)) if lines else ()

    def check_position(self, squares: Squares) -> None:
        """Raise InvalidBoardError for impossible counts, a board won by both players, or a big
        board won by both players or by the player who did not move last."""
        super().check_position(squares)
        for b, s in enumerate(BOARD_SLICES):
            if len(set(classic.line_owners(squares[s]))) > 1:
                raise InvalidBoardError(f"board {b} has three in a row for both X and O: no one plays on a won board")
        big = big_board(squares)
        lines = set(classic.line_owners(big))
        if len(lines) > 1:
            raise InvalidBoardError("X and O cannot both have three claimed boards in a row")
        if lines:
            w = lines.pop()
            if not classic.moved_last(squares, w):
                raise InvalidBoardError(f"{w} has three boards in a row but {w} did not move last")


__all__ = ["INSTRUCTIONS", "Ultimate", "big_board", "evaluate", "order_moves", "line_count_evaluate", "winner"]
