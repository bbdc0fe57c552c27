"""Tic Tac Toe Player: the CS50 AI functions (the CS50 project), the reference solution.

Boards are CS50 boards: a list of three rows, each a list of three squares that are ``X``,
``O`` or ``EMPTY``. An action is a tuple ``(i, j)``: row ``i`` and column ``j``, each 0-2.
This module also works unchanged as the ``tictactoe`` module of CS50's ``runner.py``.

Where the CS50 project is wrong it is followed in intent, not letter: its text says an O win has
utility 1; it is -1 (X is MAX, O is MIN).
"""

from __future__ import annotations

import functools

from ttt.errors import InvalidActionError, InvalidBoardError
from ttt.games import classic

X = "X"
O = "O"
EMPTY = None

_SQUARE_CHAR = {X: "X", O: "O", EMPTY: "."}


def initial_state():
    """Returns starting state of the board."""
    return [[EMPTY, EMPTY, EMPTY], [EMPTY, EMPTY, EMPTY], [EMPTY, EMPTY, EMPTY]]


def player(board):
    """Returns player who has the next turn on a board: X first, then turns alternate."""
    return X if classic.to_move(to_text(board)) == "X" else O


def actions(board):
    """Returns set of all possible actions (i, j) available on the board: its empty squares."""
    return set(_actions(to_text(board)))


def result(board, action):
    """Returns the board that results from making move (i, j) on the board.

    The board given is never changed, not even one of its rows. Raises InvalidActionError (a
    ValueError) if the action is not a pair of row and column numbers 0-2, if the square is
    taken, or if the game is already over.
    """
    text = to_text(board)
    square = _square_of(action)
    try:
        after = _play(text, square)
    except InvalidActionError as error:
        said = str(error).removesuffix(f" on {classic.format_board(text, inline=True)}")  # in CS50 words: no text board
        raise InvalidActionError(said.replace(f"square {square}", f"square {tuple(action)}")) from None
    return from_text(after)


def winner(board):
    """Returns the winner of the game (X or O) if there is one, else None."""
    w = classic.winner(to_text(board))
    return X if w == "X" else O if w == "O" else None


def terminal(board):
    """Returns True if game is over (a win, or every square filled), False otherwise."""
    return classic.is_terminal(to_text(board))


def utility(board):
    """Returns 1 if X has won the game, -1 if O has won, 0 otherwise (the CS50 project says O: 1, a typo)."""
    return classic.utility(to_text(board))


def minimax(board):
    """Returns the optimal action (i, j) for the current player on the board; None if it is over.

    A win now is preferred to a win later; among equal moves, centre, then corners, then edges.
    """
    text = to_text(board)
    if classic.is_terminal(text):
        return None
    return divmod(classic.solve(text)[1], 3)


# --- conversions between CS50 boards and the package's text boards ------------------------


def to_text(board) -> str:
    """Return a CS50 board as nine characters row by row (``'X'``, ``'O'``, ``'.'``).

    Raises InvalidBoardError saying what is wrong if `board` is not 3 lists of 3 squares.
    """
    try:
        if type(board) is list and len(board) == 3:  # the usual board, looked up a row at a time
            first, second, third = board
            if type(first) is list and type(second) is list and type(third) is list:
                return _ROW_TEXT[tuple(first)] + _ROW_TEXT[tuple(second)] + _ROW_TEXT[tuple(third)]
        if len(board) == 3 and all(len(row) == 3 for row in board):
            return "".join(_SQUARE_CHAR[square] for row in board for square in row)
    except (TypeError, KeyError):
        pass
    raise InvalidBoardError(_board_problem(board))


def from_text(text: str):
    """Return a new CS50 board from nine characters (or any text ``ttt.games.classic.parse_board`` reads)."""
    try:
        first, second, third = _rows(text) if len(text) == 9 else _rows(classic.parse_board(text))
    except KeyError:  # nine characters, not all of them X, O and .
        first, second, third = _rows(classic.parse_board(text))
    return [list(first), list(second), list(third)]


@functools.lru_cache(maxsize=None)
def _actions(text: str) -> tuple:
    """Return the actions (i, j) on the empty squares of a nine-character board."""
    return tuple(divmod(s, 3) for s in classic.free_squares(text))


# The board after a move, remembered: a search makes the same moves from the same boards again and again.
_play = functools.lru_cache(maxsize=None, typed=True)(classic.play)


@functools.lru_cache(maxsize=None)
def _rows(text: str) -> tuple:
    """Return the three rows of squares of a nine-character board."""
    return tuple(_TEXT_ROW[text[r : r + 3]] for r in (0, 3, 6))


# Each of the 27 rows of three squares and its text, both ways: a board is converted a row at a time.
_ROW_TEXT = {(a, b, c): _SQUARE_CHAR[a] + _SQUARE_CHAR[b] + _SQUARE_CHAR[c]
             for a in _SQUARE_CHAR for b in _SQUARE_CHAR for c in _SQUARE_CHAR}
_TEXT_ROW = {text: row for row, text in _ROW_TEXT.items()}


def _square_of(action) -> int:
    """Return the square number 0-8 of an action (i, j); raise InvalidActionError saying why not."""
    try:
        i, j = action
        if type(i) is int and type(j) is int and 0 <= i <= 2 and 0 <= j <= 2:
            return 3 * i + j
    except (TypeError, ValueError):
        raise InvalidActionError(
            f"action {action!r} is not a pair (i, j) of a row and a column, each 0, 1 or 2"
        ) from None
    for name, k in (("row", i), ("column", j)):
        if isinstance(k, bool) or not isinstance(k, int):
            raise InvalidActionError(f"action {action!r}: the {name} must be a whole number 0, 1 or 2, not {k!r}")
        if not 0 <= k <= 2:
            raise InvalidActionError(f"action {action!r}: {name} {k} is off the board (rows and columns are 0, 1 or 2)")
    return 3 * i + j


def _board_problem(board) -> str:
    """Return a sentence saying why `board` is not a CS50 board."""
    if not isinstance(board, (list, tuple)):
        return f"a board is a list of 3 rows, not {type(board).__name__}"
    if len(board) != 3:
        return f"a board has 3 rows, this one has {len(board)}"
    for r, row in enumerate(board):
        if not isinstance(row, (list, tuple)):
            return f"row {r} of the board is {type(row).__name__}, not a list of 3 squares"
        if len(row) != 3:
            return f"row {r} of the board has {len(row)} squares, not 3"
        for c, square in enumerate(row):
            if not any(square is allowed for allowed in (X, O, EMPTY)) and square not in ("X", "O"):
                return f"square ({r}, {c}) holds {square!r}; a square is X, O or EMPTY (None)"
    return "the board is not 3 lists of 3 squares"
