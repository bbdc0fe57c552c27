"""The game protocol: what search, players, pictures and widgets may ask of a game.

States are immutable and hashable (strings or tuples), so search can memoize them. X always
moves first and is MAX; O is MIN. ``utility`` is from X's point of view.

A game declares what callers may need to know about it (its `name`, `win_value`, whether it
has a heuristic `evaluate`, whether it is small enough to search to the end, its `instructions`
and `move_prompt`) and inherits sensible defaults for the optional parts (`format_numbered`,
`grid`, `winning_line`, `outcome`, `solve`, `as_state`) by subclassing `Game`, so no caller has
to probe a game with ``getattr`` or test its name. A subclass that sets `name` in its own body
is a game: it is registered by being defined (`GAMES`; ``ttt.games.get_game`` makes one by name).
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Hashable, Optional, Protocol, Sequence, TypeVar, runtime_checkable

from ttt.registry import Registry

Mark = str  # 'X' or 'O': a side of the game, and what it puts on the board
Player = Callable[[Any], Any]  # a player: a function from a state to the move it chooses
State = TypeVar("State", bound=Hashable)
Move = TypeVar("Move", bound=Hashable)


@runtime_checkable
class Game(Protocol[State, Move]):
    """A two-player, zero-sum, perfect-information game on immutable states."""

    name: ClassVar[str]  # what ``get_game``, ``ttt --game`` and the players' `games` call it
    win_value: ClassVar[float] = 1  # the smallest |utility| of a game that is won or lost
    evaluate: ClassVar[Optional[Callable[..., float]]] = None  # a heuristic value for X, if the game has one
    instructions: ClassVar[str] = ""  # how to play, shown before a game in the terminal
    move_prompt: ClassVar[str] = "Your move: "  # what the terminal asks a person for
    default_player: ClassVar[str] = "random"  # the registered player the terminal and the widgets start with
    solvable: ClassVar[bool] = True  # small enough to search to the end: the players that do (minimax) play it

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in vars(cls):
            GAMES.add(cls)

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

    def solve(self, state: State) -> tuple[float, Optional[Move]]:
        """Return (the value of `state` for X with perfect play, a best move; None once the game is over).

        The default searches to the end (minimax), keeping each position's value for the next
        call, and takes the first best move in `order_moves`' order: for a `solvable` game.
        """
        values: dict = self.__dict__.setdefault("_solved", {})

        def value(s: State) -> float:
            if s not in values:
                if self.is_terminal(s):
                    values[s] = self.utility(s)
                else:
                    best = max if self.to_move(s) == "X" else min
                    values[s] = best(value(self.play(s, m)) for m in self.moves(s))
            return values[s]

        if self.is_terminal(state):
            return self.utility(state), None
        scored = [(value(self.play(state, m)), m) for m in self.order_moves(state, self.moves(state))]
        best = (max if self.to_move(state) == "X" else min)(v for v, _ in scored)
        return best, next(m for v, m in scored if v == best)

    def as_state(self, given: Any) -> State:
        """Return what a player was handed as a state of this game; raise InvalidBoardError
        saying why it is not one (default: `given` as it is; a game that reads text may take text)."""
        return given


GAMES = Registry("game", "ttt.games")  # every game class, by its name
