"""Classic 3x3 tic-tac-toe on immutable string boards, and a perfect-play solver.

A board is nine characters row by row, ``'X'``, ``'O'`` or ``'.'``; squares are numbered
0-8 in the same order (the CSC 242 write-up and the win-block-best-square game number them this way):

    0 1 2
    3 4 5
    6 7 8
"""

from __future__ import annotations

import reprlib
from functools import lru_cache
from typing import Any, Sequence

from ttt.errors import InvalidActionError, InvalidBoardError
from ttt.games.base import Game, Mark

Board = str  # nine characters row by row: 'X', 'O' or '.'
Square = int  # 0-8, row by row

EMPTY_BOARD: Board = "." * 9
LINES: tuple[tuple[int, int, int], ...] = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),  # rows
    (0, 3, 6), (1, 4, 7), (2, 5, 8),  # columns
    (0, 4, 8), (2, 4, 6),  # diagonals
)
CENTRE_CORNERS_EDGES: tuple[Square, ...] = (4, 0, 2, 6, 8, 1, 3, 5, 7)  # the win-block-best-square game's BEST_MOVES
LINES_THROUGH: tuple[tuple[tuple[int, int, int], ...], ...] = tuple(
    tuple(line for line in LINES if square in line) for square in range(9)
)

_EMPTY_SPELLINGS = ".-_"
_SEPARATORS = "/ \t\r\n|,"


def parse_board(text: str) -> Board:
    """Return the board a person typed, such as ``"XO./.X./..O"``.

    Squares go row by row as ``X``, ``O`` and ``.`` (``-`` and ``_`` also mean empty); ``/``,
    spaces or new lines may stand between rows. Raises InvalidBoardError, saying why, for a
    string of the wrong length, a character that is not a square, or a position no game
    reaches (impossible counts, two winners, a move played after a win).
    """
    if not isinstance(text, str):
        raise InvalidBoardError(f"a board is written as text such as 'XO./.X./..O', not {reprlib.repr(text)}")
    squares = [c for c in text if c not in _SEPARATORS]
    for c in squares:
        if c == "0":
            raise InvalidBoardError(f"{text!r}: '0' is a zero; write the letter O for O's squares")
        if c.upper() not in "XO" and c not in _EMPTY_SPELLINGS:
            raise InvalidBoardError(
                f"{text!r}: {c!r} is not a square; use X, O and . (or - or _) for empty"
            )
    if len(squares) != 9:
        raise InvalidBoardError(
            f"{text!r} has {len(squares)} squares; a board has 9, row by row, like 'XO./.X./..O'"
        )
    board = "".join("." if c in _EMPTY_SPELLINGS else c.upper() for c in squares)
    check_reachable(board)
    return board


def check_reachable(board: Board) -> None:
    """Raise InvalidBoardError, saying why, unless `board` can arise in a real game."""
    name = format_board(board, inline=True)
    check_counts(board, name)
    owners = set(line_owners(board))
    if len(owners) > 1:
        raise InvalidBoardError(f"{name}: X and O cannot both have three in a row")
    if owners and not moved_last(board, owners.pop()):
        w = winner(board)
        raise InvalidBoardError(f"{name}: {other(w)} played on after {w} had already won")


def other(mark: Mark) -> Mark:
    """Return the other mark: 'O' for 'X', 'X' for 'O'."""
    return "O" if mark == "X" else "X"


def check_counts(squares: str, name: str = "the board") -> None:
    """Raise InvalidBoardError unless X has as many marks as O or one more (any number of squares)."""
    xs, os = squares.count("X"), squares.count("O")
    if not (xs == os or xs == os + 1):
        raise InvalidBoardError(
            f"{name} has {xs} X and {os} O: X moves first and the players alternate, "
            "so X has as many marks as O or one more"
        )


def moved_last(squares: str, mark: Mark) -> bool:
    """Return True if `mark` made the last move on `squares` (X did if X has one mark more)."""
    return (mark == "X") == (squares.count("X") == squares.count("O") + 1)


def format_board(board: Board, *, inline: bool = False, numbered: bool = False) -> str:
    """Return the board as text: three lines, or ``XO./.X./..O`` when `inline`.

    With `numbered`, free squares show their number (0-8), as in the CSC 242 write-up and the win-block-best-square game.
    """
    cells = [str(i) if numbered and c == "." else c for i, c in enumerate(board)]
    rows = ["".join(cells[r : r + 3]) for r in (0, 3, 6)]
    return "/".join(rows) if inline else "\n".join(" ".join(row) for row in rows)


def to_move(board: Board) -> Mark:
    """Return the player whose turn it is: X when the counts are equal, else O."""
    return "X" if board.count("X") == board.count("O") else "O"


@lru_cache(maxsize=None)
def completed_lines(board: str) -> tuple[tuple[int, int, int], ...]:
    """Return the lines (of `LINES`, in order) that one player has filled: the one win test.

    Any nine-character board: a 3x3 board, one small board of a nine-board game, or a big
    board of claimed squares ('=' and '.' complete no line).
    """
    return tuple(line for line in LINES if board[line[0]] == board[line[1]] == board[line[2]] and board[line[0]] in "XO")


def line_owners(board: str) -> str:
    """Return the owner ('X' or 'O') of each completed line, in the order of `LINES`."""
    return "".join(board[line[0]] for line in completed_lines(board))


def winner(board: Board) -> Mark | None:
    """Return 'X' or 'O' if that player has three in a row, else None."""
    lines = completed_lines(board)
    return board[lines[0][0]] if lines else None


def is_terminal(board: Board) -> bool:
    """Return True if someone has won or no square is free."""
    return "." not in board or winner(board) is not None


def utility(board: Board) -> int:
    """Return 1 if X has won, -1 if O has won, else 0."""
    w = winner(board)
    return 1 if w == "X" else -1 if w == "O" else 0


@lru_cache(maxsize=None)
def free_squares(board: str) -> tuple[Square, ...]:
    """Return the empty squares of a nine-character board, in order (whether or not the game is over)."""
    return tuple(i for i, c in enumerate(board) if c == ".")


def moves(board: Board) -> list[Square]:
    """Return the free squares in order, or [] if the game is over."""
    if winner(board) is not None:
        return []
    return list(free_squares(board))


def play(board: Board, square: Square) -> Board:
    """Return the board after the player to move takes `square`.

    Raises InvalidActionError if `square` is not 0-8, is taken, or the game is over.
    """
    if isinstance(square, bool) or not isinstance(square, int) or not 0 <= square <= 8:
        raise InvalidActionError(f"square {square!r} is not on the board: squares are numbered 0 to 8")
    if board[square] != ".":
        raise InvalidActionError(
            f"square {square} is taken by {board[square]} on {format_board(board, inline=True)}"
        )
    w = winner(board)
    if w is not None:
        raise InvalidActionError(f"the game is over: {w} has won on {format_board(board, inline=True)}")
    return board[:square] + to_move(board) + board[square + 1 :]


@lru_cache(maxsize=None)
def line_threats(board: str, mark: Mark) -> tuple[Square, ...]:
    """Return, for each line of `LINES` in order where `mark` has two squares and the third
    square is free, that free square: the one test for a square that wins at once."""
    found = []
    for line in LINES:
        marks = [board[i] for i in line]
        if marks.count(mark) == 2 and "." in marks:
            found.append(line[marks.index(".")])
    return tuple(found)


@lru_cache(maxsize=None)
def winning_squares(board: str, mark: Mark) -> tuple[Square, ...]:
    """Return the free squares where `mark` would complete three in a row, in order."""
    return tuple(sorted(set(line_threats(board, mark))))


def order_moves(board: Board, squares: Sequence[Square]) -> list[Square]:
    """Return `squares` most promising first: wins, then blocks, then centre, corners, edges."""
    me = to_move(board)
    wins = set(winning_squares(board, me))
    blocks = set(winning_squares(board, other(me)))
    rank = {s: i for i, s in enumerate(CENTRE_CORNERS_EDGES)}
    return sorted(squares, key=lambda s: (s not in wins, s not in blocks, rank[s]))


_HAS_LINE = tuple(bool(completed_lines("".join("X" if mask >> i & 1 else "." for i in range(9)))) for mask in range(512))
_ORDER_BITS = tuple((square, 1 << square) for square in CENTRE_CORNERS_EDGES)


def solve(board: Board) -> tuple[int, Square | None]:
    """Return (value for X with perfect play, a best move; None when the game is over).

    The best move wins at once if it can, else blocks an immediate threat, else is the first
    optimal square in the order centre, corners, edges. Every position is solved once
    (memoized), on bitboards, so a first call from the empty board takes a few milliseconds.
    """
    if is_terminal(board):
        return utility(board), None
    xs = sum(1 << i for i, c in enumerate(board) if c == "X")
    os = sum(1 << i for i, c in enumerate(board) if c == "O")
    if board.count("X") == board.count("O"):
        v, move = _negamax(xs, os)
        return v, move
    v, move = _negamax(os, xs)
    return -v, move


@lru_cache(maxsize=None)
def _negamax(mine: int, theirs: int) -> tuple[int, Square | None]:
    """Return (value for the player to move, best move) on bitboards; `theirs` has no line."""
    free = ~(mine | theirs) & 511
    if not free:
        return 0, None
    threat = None
    for square, bit in _ORDER_BITS:
        if free & bit:
            if _HAS_LINE[mine | bit]:
                return 1, square  # win now
            if threat is None and _HAS_LINE[theirs | bit]:
                threat = square
    if threat is not None:  # every other move loses at once, so the block decides the value
        return -_negamax(theirs, mine | (1 << threat))[0], threat
    best, best_move = -2, None
    for square, bit in _ORDER_BITS:
        if free & bit:
            v = -_negamax(theirs, mine | bit)[0]
            if v > best:
                best, best_move = v, square
                if v == 1:
                    break
    return best, best_move


def value(board: Board) -> int:
    """Return the game-theoretic value for X: 1 (X wins), 0 (a tie) or -1 (O wins)."""
    return solve(board)[0]


def optimal_moves(board: Board) -> list[Square]:
    """Return every move that keeps the game-theoretic value for the player to move."""
    target = value(board)
    return [s for s in moves(board) if value(play(board, s)) == target]


@lru_cache(maxsize=None)
def reachable_positions(start: Board = EMPTY_BOARD) -> tuple[Board, ...]:
    """Return every position reachable from `start` by legal play, `start` included, in BFS order
    (5,478 from the empty board)."""
    seen = {start: None}
    frontier = [start]
    while frontier:
        nxt = []
        for board in frontier:
            for s in moves(board):
                child = play(board, s)
                if child not in seen:
                    seen[child] = None
                    nxt.append(child)
        frontier = nxt
    return tuple(seen)


SYMMETRIES = (  # the eight rotations and reflections of the board, as square permutations
    (0, 1, 2, 3, 4, 5, 6, 7, 8), (6, 3, 0, 7, 4, 1, 8, 5, 2), (8, 7, 6, 5, 4, 3, 2, 1, 0), (2, 5, 8, 1, 4, 7, 0, 3, 6),
    (2, 1, 0, 5, 4, 3, 8, 7, 6), (0, 3, 6, 1, 4, 7, 2, 5, 8), (6, 7, 8, 3, 4, 5, 0, 1, 2), (8, 5, 2, 7, 4, 1, 6, 3, 0),
)


def canonical(board: Board) -> Board:
    """Return the smallest of the eight rotations and reflections of `board`: one board for each symmetric family."""
    return min("".join(board[i] for i in p) for p in SYMMETRIES)


@lru_cache(maxsize=None)
def tree_size(board: Board) -> int:
    """Return the number of nodes of the full game tree below `board` (549,946 from the empty board)."""
    if is_terminal(board):
        return 1
    return 1 + sum(tree_size(play(board, s)) for s in moves(board))


INSTRUCTIONS = """\
Tic-tac-toe: take turns placing your mark; three in a row (across, down or diagonally) wins.
X moves first. Type the number of a free square and press Enter; Ctrl-D or Ctrl-C quits.
"""


class TicTacToe(Game[Board, Square]):
    """Classic 3x3 tic-tac-toe on the game protocol (``ttt.games.base.Game``)."""

    name = "tictactoe"
    instructions = INSTRUCTIONS
    move_prompt = "Your move (0-8): "
    default_player = "minimax"  # unbeatable

    def initial(self) -> Board:
        return EMPTY_BOARD

    to_move = staticmethod(to_move)
    moves = staticmethod(moves)
    play = staticmethod(play)
    winner = staticmethod(winner)
    is_terminal = staticmethod(is_terminal)
    utility = staticmethod(utility)
    order_moves = staticmethod(order_moves)
    solve = staticmethod(solve)

    @staticmethod
    def parse(text: str) -> Board:
        return parse_board(text)

    @staticmethod
    def as_state(board: Any) -> Board:
        """Return a board of nine X, O and '.' as it is, else the board read from text (`parse_board`)."""
        if isinstance(board, str) and len(board) == 9 and set(board) <= set("XO."):
            return board
        return parse_board(board)

    @staticmethod
    def format(board: Board) -> str:
        return format_board(board)

    @staticmethod
    def format_numbered(board: Board) -> str:
        return format_board(board, numbered=True)

    @staticmethod
    def winning_line(board: Board) -> tuple[int, ...]:
        """Return the three squares of the first completed line, or () if nobody has won."""
        lines = completed_lines(board)
        return lines[0] if lines else ()

    @staticmethod
    def grid(board: Board) -> tuple[str, ...]:
        """Return the board's three rows, three squares each."""
        return (board[0:3], board[3:6], board[6:9])

    @staticmethod
    def move_name(square: Square) -> str:
        return str(square)

    @staticmethod
    def parse_move(board: Board, text: str) -> Square:
        """Return the square a person typed (0-8); raise InvalidActionError saying why not."""
        text = str(text).strip()
        if not text.lstrip("-").isdigit():
            raise InvalidActionError(f"{text!r} is not a number: type a free square's number, 0 to 8")
        square = int(text)
        play(board, square)  # raises with the reason if the square is not playable
        return square

    def __repr__(self) -> str:
        return "TicTacToe()"

