"""A compact, mutable position of the big-board games, for fast search.

The rules are those of ``ttt.games.nineboard`` and ``ttt.games.ultimate`` (the readable ones,
where every move is checked); here they are written for speed:

- each small board is two 9-bit masks, one for X's cells and one for O's (cell ``c`` is bit
  ``c``), and a move is one number ``9 * board + cell`` (``divmod(move, 9)`` is the
  ``(board, cell)`` pair the games use);
- whether a mask holds three in a row is one table look-up (`WINS`), and the free cells of a
  small board are a precomputed tuple (`MOVES_ON`), so nothing is recomputed after a move;
- `push` plays a move *without checking it* and `pop` takes it back, so a search walks one
  position up and down the tree instead of building a new state at every node.

A `Board` is made from a game's state (`Board.of`) and read back (`state`); the tests replay
thousands of random games through both and compare every move, winner and legal-move set.
"""

from __future__ import annotations

from typing import Optional

from ttt.games.bigboard import BigState

LINE_MASKS = (0o007, 0o070, 0o700, 0o111, 0o222, 0o444, 0o421, 0o124)  # rows, columns, diagonals as bits
WINS = tuple(any(m & line == line for line in LINE_MASKS) for m in range(512))  # mask -> has three in a row
FULL = 0o777
ANY = -1  # `sent_to` when the player to move may play on any open board
MOVES_ON = tuple(  # board -> occupied mask -> the moves on its free cells, in order
    tuple(tuple(9 * b + c for c in range(9) if not occupied >> c & 1) for occupied in range(512)) for b in range(9)
)
CELLS = tuple(tuple(c for c in range(9) if m >> c & 1) for m in range(512))  # 9-bit mask -> its set bits, in order
COMPLETES = tuple(  # the boards a player holds (mask) -> the boards whose taking would make three boards in a row
    sum(1 << b for b in range(9) if not held >> b & 1 and WINS[held | 1 << b]) for held in range(512)
)
ULTIMATE, NINE_BOARD = "ultimate", "nine-board"
ONGOING, X_WON, O_WON, TIE = 0, 1, 2, 3  # `result`


class Board:
    """One position of nine-board or ultimate tic-tac-toe, changed in place by `push` and `pop`.

    Fields (read them; change them only through `push` and `pop`): `xs` and `os`, each small
    board's cells as a 9-bit mask; `closed`, the boards no one may play on (full, or in ultimate
    also won), as a 9-bit mask; `x_boards` and `o_boards`, the boards each has won (ultimate);
    `sent_to`, the board the mover must play on or `ANY`; `turn`, 0 when X moves and 1 when O
    does; `free`, the free squares; `result`, `ONGOING`, `X_WON`, `O_WON` or `TIE`.
    """

    __slots__ = ("ultimate", "xs", "os", "closed", "x_boards", "o_boards", "sent_to", "turn", "free", "result", "_stack")

    def __init__(self, rules: str = ULTIMATE) -> None:
        if rules not in (ULTIMATE, NINE_BOARD):
            raise ValueError(f"unknown rules {rules!r}: the engine plays {ULTIMATE!r} and {NINE_BOARD!r}")
        self.ultimate = rules == ULTIMATE
        self.xs = [0] * 9
        self.os = [0] * 9
        self.closed = 0
        self.x_boards = 0
        self.o_boards = 0
        self.sent_to = ANY
        self.turn = 0
        self.free = 81
        self.result = ONGOING
        self._stack: list[tuple] = []

    # --- to and from the games' states ------------------------------------------------------

    @classmethod
    def of(cls, game, state: BigState) -> "Board":
        """Return the board of `state`, a position of `game` (nine-board or ultimate)."""
        board = cls(game.name)
        squares, sent_to = state
        for i in range(81):
            mark = squares[i]
            if mark != ".":
                b, c = divmod(i, 9)
                if mark == "X":
                    board.xs[b] |= 1 << c
                else:
                    board.os[b] |= 1 << c
        board.free = squares.count(".")
        board.turn = 0 if board.free & 1 else 1
        board._settle()
        if sent_to is not None and not board.closed >> sent_to & 1:
            board.sent_to = sent_to
        return board

    def _settle(self) -> None:
        """Work out `closed`, the won boards and `result` from the masks (after setting them directly)."""
        self.closed = self.x_boards = self.o_boards = 0
        self.result = ONGOING
        for b in range(9):
            x, o = self.xs[b], self.os[b]
            if self.ultimate:
                if WINS[x]:
                    self.x_boards |= 1 << b
                elif WINS[o]:
                    self.o_boards |= 1 << b
                if WINS[x] or WINS[o] or x | o == FULL:
                    self.closed |= 1 << b
            else:
                if WINS[x] or WINS[o]:
                    self.result = X_WON if WINS[x] else O_WON
                if x | o == FULL:
                    self.closed |= 1 << b
        if self.ultimate:
            if WINS[self.x_boards]:
                self.result = X_WON
            elif WINS[self.o_boards]:
                self.result = O_WON
            elif self.closed == FULL:
                self.result = TIE
        elif self.result == ONGOING and self.free == 0:
            self.result = TIE

    def state(self) -> BigState:
        """Return this position as the games write it: a `BigState`."""
        squares = []
        for b in range(9):
            x, o = self.xs[b], self.os[b]
            squares += ["X" if x >> c & 1 else "O" if o >> c & 1 else "." for c in range(9)]
        return BigState("".join(squares), None if self.sent_to == ANY else self.sent_to)

    def copy(self) -> "Board":
        """Return an independent copy (without the moves that `pop` could take back)."""
        new = Board.__new__(Board)
        new.ultimate, new.closed, new.x_boards, new.o_boards = self.ultimate, self.closed, self.x_boards, self.o_boards
        new.xs, new.os = self.xs[:], self.os[:]
        new.sent_to, new.turn, new.free, new.result = self.sent_to, self.turn, self.free, self.result
        new._stack = []
        return new

    def snapshot(self) -> tuple:
        """Return the position as one tuple, for `restore` (cheaper to keep than a `copy`)."""
        return (tuple(self.xs), tuple(self.os), self.closed, self.x_boards, self.o_boards,
                self.sent_to, self.turn, self.free, self.result)

    def restore(self, snapshot: tuple) -> None:
        """Set this board to a position `snapshot` returned, forgetting the moves `pop` could take back."""
        xs, os, self.closed, self.x_boards, self.o_boards, self.sent_to, self.turn, self.free, self.result = snapshot
        self.xs, self.os = list(xs), list(os)
        self._stack.clear()

    # --- the rules --------------------------------------------------------------------------

    def moves(self) -> list[int]:
        """Return the legal moves (``9 * board + cell``) in the games' order; none when the game is over."""
        if self.result:
            return []
        xs, os = self.xs, self.os
        if self.sent_to != ANY:
            b = self.sent_to
            return list(MOVES_ON[b][xs[b] | os[b]])
        closed = self.closed
        found: list[int] = []
        for b in range(9):
            if not closed >> b & 1:
                found += MOVES_ON[b][xs[b] | os[b]]
        return found

    def push(self, move: int) -> None:
        """Play `move` (``9 * board + cell``) for the player to move. It is not checked: the
        search only plays moves that `moves` gave it (use the game's ``play`` to check one)."""
        b, c = divmod(move, 9)
        self._stack.append((move, self.closed, self.x_boards, self.o_boards, self.sent_to, self.result))
        bit = 1 << c
        if self.turn:
            mask = self.os[b] = self.os[b] | bit
        else:
            mask = self.xs[b] = self.xs[b] | bit
        self.free -= 1
        full = (self.xs[b] | self.os[b]) == FULL
        if WINS[mask]:
            if not self.ultimate:
                self.result = O_WON if self.turn else X_WON
            elif self.turn:
                self.o_boards |= 1 << b
                self.closed |= 1 << b
                if WINS[self.o_boards]:
                    self.result = O_WON
            else:
                self.x_boards |= 1 << b
                self.closed |= 1 << b
                if WINS[self.x_boards]:
                    self.result = X_WON
        if full:
            self.closed |= 1 << b
        if not self.result and (self.closed == FULL if self.ultimate else not self.free):
            self.result = TIE
        self.sent_to = ANY if self.closed >> c & 1 else c
        self.turn ^= 1

    def pop(self) -> int:
        """Take back the last move `push` played, and return it."""
        move, self.closed, self.x_boards, self.o_boards, self.sent_to, self.result = self._stack.pop()
        b, c = divmod(move, 9)
        self.turn ^= 1
        self.free += 1
        if self.turn:
            self.os[b] &= ~(1 << c)
        else:
            self.xs[b] &= ~(1 << c)
        return move

    def winner(self) -> Optional[str]:
        """Return 'X' or 'O' if that player has won, else None."""
        return "X" if self.result == X_WON else "O" if self.result == O_WON else None

    def key(self) -> tuple:
        """Return a hashable key of the position (the cells and the board the mover is sent to)."""
        return (*self.xs, *self.os, self.sent_to)
