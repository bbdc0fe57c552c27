"""The one game loop: a `Session` (a game in progress), `play_game` and `match`.

The terminal game (``ttt play``), the widgets (``ttt.widgets``) and the lessons all drive a
`Session`: it holds the game, the position, who plays each side (a player, or ``None`` for a
person), the last move and the outcome, and it refuses an illegal move with the reason. A
player with a prepare step (the big boards' compiled search compiles, once per machine) is
prepared before the game by the front end that drives it, saying why it waits: `prepare` and
`preparing`, the sentence's one home.

    >>> from ttt.games.classic import TicTacToe
    >>> from ttt import agents
    >>> session = Session(TicTacToe(), {"X": None, "O": agents.make("minimax")})
    >>> session.play(4)                      # you, X, take the centre: the new state
    '....X....'
    >>> session.play_computer()              # perfect play answers in a corner
    0
    >>> session.state, session.over
    ('O...X....', False)
    >>> print(play_game(TicTacToe(), agents.make("win-block"), agents.make("minimax")))  # None: a tie
    None
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from ttt.errors import InvalidActionError
from ttt.games.base import Player


def player_name(player: Any) -> str:
    """Return the name a message uses for a player: its ``__name__``, else 'the computer'."""
    return getattr(player, "__name__", "the computer")


# -- a player's prepare step: work it does once before its first move (the compiled search
# compiles, or loads from numba's cache on disk), which every front end runs before the game
# so that no move's clock pays for it, saying why it waits.

_prepared: set = set()  # the prepare steps done in this process
_preparing = threading.Lock()  # one prepare step at a time: a second caller waits, then finds it done


def preparing(player: Any) -> Optional[str]:
    """Return the sentence a front end shows while `player` prepares, or None when it has no
    prepare step left to do in this process."""
    step = getattr(player, "prepare", None)
    if step is None or step in _prepared:
        return None
    return f"Preparing {player_name(player)}'s compiled search (once per machine: up to a minute, then cached)…"


def prepare(player: Any, say: Optional[Callable[[str], Any]] = None) -> None:
    """Run `player`'s prepare step if it has one not yet done in this process, first passing
    `say` the sentence that says why it waits (`preparing`). Safe from several threads."""
    sentence = preparing(player)
    if sentence is None:
        return
    if say is not None:
        say(sentence)
    with _preparing:
        if player.prepare not in _prepared:
            player.prepare()
            _prepared.add(player.prepare)


@dataclass
class Session:
    """A game in progress: the position, who plays each side, the last move, the outcome.

    `players` maps 'X' and 'O' to a player ``state -> move``, or to ``None`` for a person, who
    moves with `play`. `new` starts again from the initial position.
    """

    game: Any
    players: Mapping[str, Optional[Player]]
    state: Any = None
    last_move: Any = None
    moves: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.state is None:
            self.state = self.game.initial()

    # -- what the position means

    @property
    def to_move(self) -> str:
        """Return the mark to move: 'X' or 'O'."""
        return self.game.to_move(self.state)

    @property
    def over(self) -> bool:
        """Return True once the game has ended."""
        return self.game.is_terminal(self.state)

    @property
    def winner(self) -> Optional[str]:
        """Return 'X' or 'O' if that side has won, else None."""
        return self.game.winner(self.state)

    @property
    def outcome(self) -> Optional[str]:
        """Return 'X' or 'O' (the winner), 'tie', or None while the game goes on."""
        return self.game.outcome(self.state)

    @property
    def computer_to_move(self) -> bool:
        """Return True if the game goes on and a player (not a person) has the move."""
        return not self.over and self.players.get(self.to_move) is not None

    def legal_moves(self) -> list:
        """Return the moves the side to move may make (none once the game is over)."""
        return [] if self.over else list(self.game.moves(self.state))

    # -- moves

    def new(self) -> None:
        """Start again from the initial position."""
        self.state, self.last_move, self.moves = self.game.initial(), None, []

    def play(self, move: Any) -> Any:
        """Make `move` for the side to move; return the new state.

        Raises InvalidActionError saying why if the game is over or the move is illegal; the
        position is then unchanged.
        """
        if self.over:
            raise InvalidActionError(f"the game is over: {self.game.move_name(move)} cannot be played")
        self.state = self.game.play(self.state, move)
        self.last_move = move
        self.moves.append(move)
        return self.state

    def computer_move(self) -> Any:
        """Return the move the player of the side to move chooses (the position is unchanged)."""
        player = self.players.get(self.to_move)
        if player is None:
            raise ValueError(f"{self.to_move} is played by a person: there is no computer to ask")
        return player(self.state)

    def play_computer(self) -> Any:
        """Let the player of the side to move choose and make its move; return the move.

        Raises InvalidActionError naming the player if it returns an illegal move.
        """
        player = self.players.get(self.to_move)
        move = self.computer_move()
        try:
            self.play(move)
        except InvalidActionError as error:
            raise InvalidActionError(f"{player_name(player)} played an illegal move: {error}") from None
        return move


def play_game(game: Any, x: Player, o: Player) -> Optional[str]:
    """Return the winner ('X' or 'O') of one game between players `x` and `o`, or None for a tie.

    Raises InvalidActionError naming the player if a player returns an illegal move.
    """
    session = Session(game, {"X": x, "O": o})
    while not session.over:
        session.play_computer()
    return session.winner


@dataclass
class MatchResult:
    """The tally of a match: games played (of those asked for), and wins, ties, losses by name."""

    games: int
    results: dict[str, dict[str, int]]
    asked: int = 0
    stopped: bool = False  # True when the time limit ended the match early

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"games": N, "results": {name: {"wins", "ties", "losses"}, ...}}``."""
        return {"games": self.games, "results": self.results}


def match(
    game: Any,
    a: Player,
    b: Player,
    *,
    games: int,
    names: Sequence[str] = ("A", "B"),
    progress: bool = False,
    limit: Optional[float] = None,
) -> MatchResult:
    """Return the tally of up to `games` games between `a` and `b`, alternating who moves first.

    With `limit` (seconds), no new game starts once that much time has passed; the result
    says how many games were played and whether the limit stopped the match.
    """
    from tqdm.auto import tqdm

    first, second = names
    results = {name: {"wins": 0, "ties": 0, "losses": 0} for name in dict.fromkeys((first, second))}
    start = time.perf_counter()
    played, stopped = 0, False
    for k in tqdm(range(games), desc=f"{first} v {second}", unit="game", disable=not progress, leave=False):
        if limit is not None and time.perf_counter() - start > limit:
            stopped = True
            break
        a_is_x = k % 2 == 0
        won = play_game(game, a, b) if a_is_x else play_game(game, b, a)
        played += 1
        if won is None:
            for name in results:
                results[name]["ties"] += 1
            continue
        a_won = (won == "X") == a_is_x
        results[first]["wins" if a_won else "losses"] += 1
        if second != first:
            results[second]["losses" if a_won else "wins"] += 1
    return MatchResult(played, results, asked=games, stopped=stopped)


__all__ = ["MatchResult", "Session", "match", "play_game", "player_name", "prepare", "preparing"]
