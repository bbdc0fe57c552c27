"""What the nine-board game and ultimate tic-tac-toe share: nine 3x3 boards in one 81-square string.

A state is a `BigState`: the 81 squares as a string (board ``b``, cell ``c`` at ``9*b + c``;
boards and cells both numbered 0-8 row by row, like the 3x3 squares) and the board the player
to move is sent to (None: any). A move is a tuple ``(board, cell)``, typed ``4 7``. X moves
first and is MAX; a win is worth ``WIN_VALUE`` plus the number of free squares left (so quicker
wins are worth more), and every heuristic value stays strictly below ``WIN_VALUE``.

Positions are written as pictures, nine rows of nine squares, the big rows separated by a line
of dashes or nothing (``|`` and spaces are ignored)::

    X . . | . . . | . . .
    . O . | . . . | . . .
    . . . | . . . | . . .
    ------+-------+------
    ...

Everything about one small board (its winner, free cells, line scores) is a pure function of
its nine characters, cached with ``lru_cache``: there are only 3**9 such strings.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, NamedTuple, Optional, Sequence

from ttt.errors import InvalidActionError, InvalidBoardError
from ttt.games.base import Game, Mark
from ttt.games.classic import LINES, check_counts, free_squares, other, winner, winning_squares

Squares = str  # 81 characters: board b, cell c at 9*b + c; 'X', 'O' or '.'
Small = str  # the nine characters of one small board
Move = tuple  # (board, cell), both 0-8

WIN_VALUE = 1000  # |value| >= WIN_VALUE means the game is decided; heuristics stay below it
EMPTY: Squares = "." * 81
BOARD_SLICES = tuple(slice(9 * b, 9 * b + 9) for b in range(9))
_SEPARATORS = " \t\r|/+-\n"
_EMPTY_SPELLINGS = "._"


def _out_of_range(board: object) -> str:
    return f"board {board!r} is out of range: boards are numbered 0 to 8"


class BigState(NamedTuple):
    """A position of a nine-board game: the 81 squares, and the board the mover is sent to."""

    squares: Squares
    sent_to: Optional[int] = None  # the board the player to move must play on; None: any open board

    def small(self, b: int) -> Small:
        """Return the nine squares of board `b`."""
        return self.squares[9 * b : 9 * b + 9]


def to_move(state: BigState) -> Mark:
    """Return 'X' or 'O': X moves when an odd number of the 81 squares is free."""
    return "X" if state.squares.count(".") & 1 else "O"


# --- one small board (cached by its nine characters) ----------------------------------------


small_winner = winner  # the 3x3 win test, on one small board: 'X', 'O' or None
winning_cells = winning_squares  # the free cells where a player would complete three in a row


free_cells = free_squares  # the free cells of a small board, in order


@lru_cache(maxsize=None)
def line_score(small: Small, mark: Mark, one: int = 5, two: int = 10) -> int:
    """Return `mark`'s line score of one small board: over the 8 lines holding none of the
    other mark, `one` for a line with one `mark`, `two` for a line with two
    (a full line scores nothing: it has ended the game). The defaults, 5 and 10, are the CSC 242
    write-up's boardVal as its prose says."""
    them = other(mark)
    score = 0
    for a, b, c in LINES:
        line = small[a] + small[b] + small[c]
        if them not in line:
            score += (0, one, two, 0)[line.count(mark)]
    return score


@lru_cache(maxsize=None)
def line_count_small(small: Small) -> int:
    """Return the CSC 242 write-up's line score of one small board for X minus the same score for O.

    Every line (row, column, diagonal) holding marks of one player only scores 5 for one mark
    and 10 for two, for that player. See `line_count_evaluate` for how this reads the write-up.
    """
    return line_score(small, "X") - line_score(small, "O")


def line_count_evaluate(state: BigState) -> float:
    """Return the CSC 242 write-up's heuristic for X: the line scores of the nine small boards, summed.

    The CSC 242 write-up (AdvancedTTT.boardVal / getUtil): for each small board and each line holding only
    one player's marks, +5 for a line with one mark and +10 for a line with two; the mover's
    total minus the opponent's, summed over the boards. Here the sum is X's minus O's (X is MAX).

    This follows the write-up's prose ("every way with two symbols ... would add 10 ..., every way
    with 1 symbol ... 5"). Its Java departs from that in ways not followed here: each line is
    tested from one end only (a line scores 5 only if its *first* square holds the mark, so a
    lone mark in the middle or at the end of a line counts nothing); the 10-point tests take
    the first square with the second or with the third, so two marks count 5 + 10 = 15 when
    the first square is one of them and 0 when it is not; and the earlier listings repeat some
    conditions (the same pattern counted up to four times, and one 10-point test copied over
    another). A line of three is not scored: it ends the game (in ultimate it claims the board).
    The write-up's wins are worth 1000 (here ``WIN_VALUE``); this estimate is at most 720 in size.
    """
    squares = state.squares
    return float(sum(line_count_small(squares[s]) for s in BOARD_SLICES))


# --- reading and writing ------------------------------------------------------------------------


def parse_squares(text: str) -> Squares:
    """Return the 81 squares of a picture of nine rows of nine (board b, cell c at 9*b + c).

    Raises InvalidBoardError saying why for a character that is not a square or the wrong count.
    """
    if not isinstance(text, str):
        raise InvalidBoardError(f"a big board is written as text, nine rows of nine squares, not {type(text).__name__}")
    chars = [c for c in text if c not in _SEPARATORS]
    for c in chars:
        if c == "0":
            raise InvalidBoardError("'0' is a zero; write the letter O for O's squares")
        if c.upper() not in "XO" and c not in _EMPTY_SPELLINGS:
            raise InvalidBoardError(f"{c!r} is not a square; use X, O and . (or _) for empty")
    if len(chars) != 81:
        raise InvalidBoardError(
            f"the picture has {len(chars)} squares; a big board has 81, nine rows of nine"
        )
    grid = ["." if c in _EMPTY_SPELLINGS else c.upper() for c in chars]
    out = ["."] * 81
    for r in range(9):
        for k in range(9):
            out[9 * ((r // 3) * 3 + k // 3) + (r % 3) * 3 + k % 3] = grid[9 * r + k]
    return "".join(out)


def format_squares(state: BigState, *, numbered: bool = False, playable: frozenset = frozenset()) -> str:
    """Return the 81 squares as nine rows of three boards, ``|`` and dashes between boards.

    With `numbered`, the free cells of the boards in `playable` show their cell number (0-8).
    """
    squares = state.squares
    rows = []
    for r in range(9):
        if r in (3, 6):
            rows.append("------+-------+------")
        parts = []
        for bc in range(3):
            b = (r // 3) * 3 + bc
            cells = []
            for cc in range(3):
                c = (r % 3) * 3 + cc
                ch = squares[9 * b + c]
                cells.append(str(c) if numbered and ch == "." and b in playable else ch)
            parts.append(" ".join(cells))
        rows.append(" | ".join(parts))
    return "\n".join(rows)


def move_name(move: Move) -> str:
    """Return a move as typed: board then cell, ``'4 7'``."""
    return f"{move[0]} {move[1]}"


def read_move(text: str) -> Move:
    """Return (board, cell) from text such as ``'4 7'``; raise InvalidActionError saying why not."""
    parts = str(text).replace(",", " ").split()
    if len(parts) != 2 or not all(p.lstrip("-").isdigit() for p in parts):
        raise InvalidActionError(
            f"{str(text).strip()!r} is not two numbers: type the board and the cell, both 0-8, like '4 7'"
        )
    board, cell = int(parts[0]), int(parts[1])
    check_move_shape((board, cell))
    return board, cell


def check_move_shape(move: object) -> None:
    """Raise InvalidActionError unless `move` is a pair of whole numbers 0-8."""
    if not (isinstance(move, tuple) and len(move) == 2 and all(type(v) is int for v in move)):
        raise InvalidActionError(f"a move is a pair (board, cell) of numbers 0-8, not {move!r}")
    board, cell = move
    if not 0 <= board <= 8:
        raise InvalidActionError(_out_of_range(board))
    if not 0 <= cell <= 8:
        raise InvalidActionError(f"cell {cell} is out of range: cells are numbered 0 to 8")


BOARD_NUMBERS = "boards and cells are both numbered 0-8 row by row:\n0 1 2\n3 4 5\n6 7 8"
MOVE_PROMPT = "Your move (board cell, e.g. 4 7): "


CELL_RANK = (1, 3, 1, 3, 0, 3, 1, 3, 1)  # quiet moves: the centre, then corners, then edges


def order_by(state: BigState, moves: Sequence[Move], rank: Callable[..., int]) -> list[Move]:
    """Return `moves` sorted by ``rank(move, small, target, mover, them)``, lowest first (stable).

    `small` is the board played on before the move, `target` the board the move sends the
    opponent to, as it is after the move; `mover` plays the move and `them` replies.
    """
    squares = state.squares
    mover = "X" if squares.count(".") & 1 else "O"
    them = "O" if mover == "X" else "X"

    def key(move: Move) -> int:
        b, c = move
        small = squares[9 * b : 9 * b + 9]
        target = squares[9 * c : 9 * c + 9]
        if c == b:
            target = target[:c] + mover + target[c + 1 :]
        return rank(move, small, target, mover, them)

    return sorted(moves, key=key)


@lru_cache(maxsize=None)
def board_moves(board: int, small: Small) -> tuple[Move, ...]:
    """Return the moves (board, cell) on the free cells of one small board, in order."""
    return tuple((board, c) for c in free_cells(small))


class BigBoardGame(Game[BigState, Move]):
    """The rules both big-board games share, on the game protocol (``ttt.games.base.Game``).

    A game fills in `winner` and `is_closed` (may a player still play on this small board?);
    the cell of each move sends the opponent to that board, or anywhere when it is closed.
    """

    win_value = WIN_VALUE
    default_player = "default"  # iterative-deepening alpha-beta with the game's heuristic
    solvable = False  # far too big to search to the end
    move_prompt = MOVE_PROMPT
    line_count_evaluate = staticmethod(line_count_evaluate)  # the CSC 242 write-up's line heuristic, the same on both games

    # --- to fill in ---
    def winner(self, state: BigState) -> Optional[Mark]:
        raise NotImplementedError

    @staticmethod
    def is_closed(small: Small) -> bool:
        """Return True if no one may play on this small board any more."""
        raise NotImplementedError

    def check_position(self, squares: Squares) -> None:
        """Raise InvalidBoardError if no game reaches these squares."""
        check_counts(squares)

    def winning_line(self, state: BigState) -> tuple[int, ...]:
        """Return the squares (``9 * board + cell``) of the line that won the game; () if none has."""
        raise NotImplementedError

    def owners(self, state: BigState) -> tuple[str, ...]:
        """Return who holds each small board, 'X', 'O' or '' (default: boards are never held)."""
        return ("",) * 9

    # --- the protocol ---
    def initial(self) -> BigState:
        return BigState(EMPTY, None)

    to_move = staticmethod(to_move)

    def moves(self, state: BigState) -> tuple[Move, ...]:
        """Return the legal moves: the free cells of the board the mover is sent to, or of every
        open board when sent anywhere; none when the game is over."""
        squares, sent_to = state
        if self.winner(state) is not None:
            return ()
        if sent_to is not None:
            return board_moves(sent_to, squares[9 * sent_to : 9 * sent_to + 9])
        closed = self.is_closed
        found: tuple = ()
        for b, s in enumerate(BOARD_SLICES):
            small = squares[s]
            if not closed(small):
                found += board_moves(b, small)
        return found

    def play(self, state: BigState, move: Move) -> BigState:
        """Return the state after `move`; raise InvalidActionError saying why it is illegal."""
        squares, sent_to = state
        try:
            b, c = move
            i = 9 * b + c
            legal = type(b) is int and type(c) is int and 0 <= b <= 8 and 0 <= c <= 8 and squares[i] == "."
        except (TypeError, ValueError):
            legal = False
        if not legal or (sent_to is not None and b != sent_to) or self.winner(state) is not None:
            self._explain(state, move)
        if sent_to is None and self.is_closed(squares[9 * b : 9 * b + 9]):
            self._explain(state, move)
        after = squares[:i] + ("X" if squares.count(".") & 1 else "O") + squares[i + 1 :]
        return BigState(after, None if self.is_closed(after[9 * c : 9 * c + 9]) else c)

    def _explain(self, state: BigState, move: Move) -> None:
        """Raise InvalidActionError saying why `move` is not legal in `state`."""
        check_move_shape(move)
        b, c = move
        w = self.winner(state)
        if w is not None:
            raise InvalidActionError(f"the game is over: {w} has won")
        if not self.moves(state):
            raise InvalidActionError("the game is over: no moves are left")
        if state.sent_to is not None and b != state.sent_to:
            raise InvalidActionError(
                f"wrong board: you must play on board {state.sent_to}, the board the last move's cell sent you to"
            )
        if state.squares[9 * b + c] != ".":
            raise InvalidActionError(f"cell {c} of board {b} is taken by {state.squares[9 * b + c]}")
        raise InvalidActionError(f"board {b} is closed: {self.closed_reason(state.small(b))}")

    def closed_reason(self, small: Small) -> str:
        return "it is full"

    def is_terminal(self, state: BigState) -> bool:
        """Return True if the game is over (each game says when: a line on a small board, or on the big one)."""
        raise NotImplementedError

    def utility(self, state: BigState) -> float:
        """Return WIN_VALUE plus the free squares left if X has won, minus that if O has, else 0."""
        w = self.winner(state)
        if w is None:
            return 0
        value = WIN_VALUE + state.squares.count(".")
        return value if w == "X" else -value

    def parse(self, text: str, *, board: Optional[int] = None) -> BigState:
        """Return the state of a picture of nine rows of nine squares, the mover sent to `board`.

        Raises InvalidBoardError saying why for a bad picture, impossible counts or a `board`
        the mover cannot be sent to (out of range, or closed: then the mover plays anywhere).
        """
        state = BigState(parse_squares(text), board)
        self.check_state(state)
        return state

    def check_state(self, state: BigState) -> None:
        """Raise InvalidBoardError saying why if no game reaches `state`: squares that are not
        81 of X, O and '.', impossible counts (`check_position`), or a board the mover cannot
        be sent to (out of range, or closed: then the mover plays anywhere, `sent_to` None)."""
        squares, board = state
        if not isinstance(squares, str) or len(squares) != 81 or not set(squares) <= set("XO."):
            raise InvalidBoardError(f"a position's squares are 81 characters of X, O and '.', not {squares!r}")
        self.check_position(squares)
        if board is not None:
            if type(board) is not int:
                raise InvalidBoardError(f"the board the mover is sent to is a number 0 to 8 (or None), not {board!r}")
            if not 0 <= board <= 8:
                raise InvalidBoardError(_out_of_range(board))
            if self.is_closed(squares[9 * board : 9 * board + 9]):
                raise InvalidBoardError(
                    f"board {board} is closed ({self.closed_reason(squares[9 * board : 9 * board + 9])}): "
                    "a player sent there plays anywhere, so give board=None"
                )

    def as_state(self, state: Any) -> BigState:
        """Return `state` if it is a position a game reaches; raise InvalidBoardError saying why
        not (text is refused: it does not say which board the mover is sent to)."""
        if not isinstance(state, BigState):
            why = " (text does not say which board the mover is sent to)" if isinstance(state, str) else ""
            raise InvalidBoardError(
                f"the {self.name} player takes a position, not {type(state).__name__}{why};"
                f" get_game({self.name!r}).parse(text, board=B) makes one from text"
            )
        self.check_state(state)
        return state

    def format(self, state: BigState) -> str:
        return format_squares(state)

    def playable_boards(self, state: BigState) -> list[int]:
        """Return the boards the player to move may play on (none when the game is over)."""
        return sorted({b for b, _ in self.moves(state)})

    def format_numbered(self, state: BigState) -> str:
        """Return the board with the free cells the mover may take numbered, and where to play."""
        boards = self.playable_boards(state)
        text = format_squares(state, numbered=True, playable=frozenset(boards))
        if self.is_terminal(state):
            return text
        if state.sent_to is not None:
            where = f"{self.to_move(state)} must play on board {state.sent_to}."
        else:
            where = f"{self.to_move(state)} may play on any open board."
        return f"{text}\n{where}"

    move_name = staticmethod(move_name)

    def parse_move(self, state: BigState, text: str) -> Move:
        """Return the move typed as board and cell (``'4 7'``); raise InvalidActionError saying why not."""
        move = read_move(text)
        self.play(state, move)
        return move

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
