"""The game protocol: what search, players, pictures and widgets may ask of a game.

States are immutable and hashable (strings or tuples), so search can memoize them. X always
moves first and is MAX; O is MIN. ``utility`` is from X's point of view.

A game declares what callers may need to know about it (`win_value`, whether it has a
heuristic `evaluate`, its `instructions` and `move_prompt`) and inherits sensible defaults for
the optional parts (`format_numbered`, `grid`, `winning_line`, `outcome`) by subclassing `Game`, so no caller
has to probe a game with ``getattr`` or test its name.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Hashable, Optional, Protocol, Sequence, TypeVar, runtime_checkable

Mark = str  # 'X' or 'O': a side of the game, and what it puts on the board
Player = Callable[[Any], Any]  # a player: a function from a state to the move it chooses
State = TypeVar("State", bound=Hashable)
Move = TypeVar("Move", bound=Hashable)


@runtime_checkable
class Game(Protocol[State, Move]):
    """A two-player, zero-sum, perfect-information game on immutable states."""

    name: ClassVar[str]
    win_value: ClassVar[float] = 1  # the smallest |utility| of a game that is won or lost
    evaluate: ClassVar[Optional[Callable[..., float]]] = None  # a heuristic value for X, if the game has one
    instructions: ClassVar[str] = ""  # how to play, shown before a game in the terminal
    move_prompt: ClassVar[str] = "Your move: "  # what the terminal asks a person for
    default_player: ClassVar[str] = "random"  # the registered player the terminal and the widgets start with

    def initial(self) -> State:
        """Return the starting position."""

    def to_move(self, state: State) -> Mark:
        """Return 'X' or 'O': whose turn it is in `state`."""

    def moves(self, state: State) -> Sequence[Move]:
        """Return the legal moves in `state`, in the game's fixed (row-major) order; none if over."""

    def play(self, state: State, move: Move) -> State:
        """Return the state after `move`; raise InvalidActionError for an illegal move."""

    def winner(self, state: State) -> Mark | None:
        """Return 'X' or 'O' if that player has won, else None."""

    def is_terminal(self, state: State) -> bool:
        """Return True when the game is over (a win, or no move left)."""

    def utility(self, state: State) -> float:
        """Return the value of a terminal state for X (positive: X won, negative: O won, 0: a tie)."""

    def order_moves(self, state: State, moves: Sequence[Move]) -> list[Move]:
        """Return `moves` sorted most promising first (used by alpha-beta's move ordering)."""

    def parse(self, text: str) -> State:
        """Return the state a person typed as text; raise InvalidBoardError saying why not."""

    def format(self, state: State) -> str:
        """Return `state` as text, one row a line."""

    def move_name(self, move: Move) -> str:
        """Return `move` as a person would type it."""

    def parse_move(self, state: State, text: str) -> Move:
        """Return the move a person typed in `state`; raise InvalidActionError saying why not."""

    # --- with defaults: a game overrides them where it can do better ---------------------------

    def format_numbered(self, state: State) -> str:
        """Return `state` as text with the free squares a person may type numbered (default: `format`)."""
        return self.format(state)

    def grid(self, state: State) -> Optional[tuple[str, ...]]:
        """Return the board as rows of one-character squares, if it is drawn as one grid (else None)."""
        return None

    def winning_line(self, state: State) -> tuple[int, ...]:
        """Return the squares of the line that won the game, as the game numbers squares; () if none has."""
        return ()

    def outcome(self, state: State) -> Optional[str]:
        """Return how the game ended: 'X' or 'O' (the winner) or 'tie'; None while it goes on."""
        if not self.is_terminal(state):
            return None
        return self.winner(state) or "tie"
