"""Players, made by name: plain callables ``state -> move`` on a game of ``ttt.games``.

    >>> from ttt import agents
    >>> "win-block" in agents.names(), "win-block" in agents.names("ultimate")   # the players of a game
    (True, False)
    >>> play = agents.make("win-block")
    >>> play("XX./OO./...")   # a 3x3 board as text works too
    2

Each player is a class (`Agent`) that declares its `name` and the `games` it plays; defining it
registers it, and a class in a new module of this package needs no other line
(``ttt.registry``). `names`, `make`, the ``ttt`` command and the widgets read the players
from there. The players that play any game on the protocol (``random``, ``minimax``,
``alphabeta``) are in ``ttt.agents.generic``; the rule-based 3x3 players, in
``ttt.agents.classic``; the big boards' searchers, in ``ttt.agents.bigboards``.

For 3x3 tic-tac-toe a state is nine characters (``'XO..X...O'``) and a move a square 0-8.
`cs50` turns any player into a CS50-style function ``board -> (i, j)`` on list-of-lists boards,
and `from_cs50` goes the other way, so a student's own ``minimax`` can play in a match or on
the board widget. Randomness comes only from a ``random.Random(seed)`` given to the player.
"""

from __future__ import annotations

import random
from typing import Any, Callable, ClassVar, Optional, Sequence

from ttt.games import get_game
from ttt.games.base import Game, Player
from ttt.games.classic import TicTacToe
from ttt.registry import Registry


class Agent:
    """A player that has a name: ``Agent(game, rng, **options)(state) -> move``.

    A subclass declares `name` (what `make`, ``ttt players`` and the widgets call it), the
    `games` it plays by name (None: every game on the protocol) and, if it searches to the end
    of the game, `searches_to_end` (then it plays only the games small enough for that,
    ``Game.solvable``). Its docstring's first line says what it does (`describe`); the
    keyword-only parameters of its ``__init__`` after `game` and `rng` are its options.
    A player with work to do once before its first move (the compiled search compiles) sets
    ``self.prepare`` to a function that does it (see ``ttt.play.prepare``).
    """

    name: ClassVar[str]
    games: ClassVar[Optional[tuple[str, ...]]] = None
    searches_to_end: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in vars(cls):
            PLAYERS.add(cls)

    def __init__(self, game: Game, rng: random.Random) -> None:
        self.game, self.rng = game, rng

    @classmethod
    def plays(cls, game: Game) -> bool:
        """Return True if this player plays `game` (a game object)."""
        return (cls.games is None or game.name in cls.games) and (game.solvable or not cls.searches_to_end)

    def __call__(self, state: Any) -> Any:
        """Return the move this player chooses in `state`, a position of its game."""
        raise NotImplementedError

    def legal_moves(self, state: Any) -> Sequence:
        """Return the legal moves in `state`; raise ValueError if the game is already over."""
        return require_moves(self.game, state)


PLAYERS = Registry("player", "ttt.agents")  # every player class, by its name


def require_moves(game: Game, state: Any) -> Sequence:
    """Return the legal moves of `game` in `state`; raise ValueError if the game is already over."""
    moves = game.moves(state)
    if not moves:
        raise ValueError(f"the game is over: there is no move to make in\n{game.format(state)}")
    return moves


def _playing(game: str) -> dict[str, type[Agent]]:
    rules = get_game(game)
    return {name: cls for name, cls in PLAYERS.classes().items() if cls.plays(rules)}


def names(game: str = "tictactoe") -> list[str]:
    """Return the names of the players of `game`, sorted."""
    return list(_playing(game))


def describe(game: str = "tictactoe") -> dict[str, str]:
    """Return name -> one-line description of each player of `game`."""
    return {name: next(iter((cls.__doc__ or "").strip().splitlines()), "") for name, cls in _playing(game).items()}


def lookup(name: str, *, game: str = "tictactoe") -> type[Agent]:
    """Return the class of the player called `name` if it plays `game`.

    Raises ValueError naming the players of `game` if there is no player called `name`, or
    saying which games it plays if it does not play this one: the message of every front end.
    """
    players = _playing(game)
    if name in players:
        return players[name]
    choose = f"choose one of: {', '.join(players)}"
    cls = PLAYERS.classes().get(name)
    if cls is None:
        raise ValueError(f"unknown player {name!r}; {choose}")
    if cls.games is not None and game not in cls.games:
        raise ValueError(f"player {name!r} plays {' and '.join(cls.games)} only, not {game}; {choose}")
    raise ValueError(f"player {name!r} searches to the end of the game, which {game} is too big for; {choose}")


def options(name: str, *, game: str = "tictactoe") -> list[str]:
    """Return the keyword options player `name` of `game` accepts (such as ``seconds``), sorted."""
    return sorted(_accepted(lookup(name, game=game), keyword_only=True))


def make(name: str, seed: Optional[int] = None, *, game: str = "tictactoe", **options: Any) -> Player:
    """Return the player called `name` for `game`, its randomness seeded with `seed`.

    Raises ValueError naming the players of `game` if it has no player called `name` (`lookup`).
    """
    cls = lookup(name, game=game)
    accepted = _accepted(cls)
    unknown = sorted(set(options) - accepted)
    if unknown:
        takes = f"it takes {', '.join(sorted(accepted))}" if accepted else "it takes none"
        raise ValueError(f"player {name!r} has no option {unknown[0]!r}; {takes}")
    rules = get_game(game)
    return _named(cls(rules, random.Random(seed), **options), name, rules)


def _accepted(cls: type[Agent], *, keyword_only: bool = False) -> set[str]:
    """The options `cls` accepts by name: its keyword-only ones (what `options` lists), and
    unless `keyword_only` any other it takes by name after the game and the random generator
    (such as the big boards' ``engine``)."""
    import inspect

    kinds = {inspect.Parameter.KEYWORD_ONLY}
    if not keyword_only:
        kinds.add(inspect.Parameter.POSITIONAL_OR_KEYWORD)
    parameters = inspect.signature(cls).parameters.values()
    return {p.name for p in parameters if p.kind in kinds and p.name not in ("game", "rng")}


def _named(player: Agent, name: str, game: Game) -> Player:
    """Return `player` as a function with its name, game and description, that takes what
    ``game.as_state`` takes (a 3x3 board as text, say) and refuses what it refuses. A player's
    `prepare` (work to do once before its first move, such as compiling its search) is kept."""

    def play(state: Any) -> Any:
        return player(game.as_state(state))

    play.__name__ = name
    play.__qualname__ = name
    play.__doc__ = type(player).__doc__
    play.game = game.name  # type: ignore[attr-defined]
    if hasattr(player, "prepare"):
        play.prepare = player.prepare  # type: ignore[attr-defined]
    return play


def cs50(player: Player | str, seed: Optional[int] = None) -> Callable[[list], tuple[int, int]]:
    """Return a CS50-style function ``board -> (i, j)`` on list-of-lists boards for a 3x3 player."""
    from ttt.tictactoe import to_text

    play = make(player, seed) if isinstance(player, str) else player

    def move(board: list) -> tuple[int, int]:
        return divmod(play(to_text(board)), 3)

    move.__name__ = getattr(play, "__name__", "player")
    return move


def from_cs50(function: Callable[[list], Any]) -> Player:
    """Return a player on text boards from a CS50-style ``board -> (i, j)`` function.

    The player raises InvalidActionError, saying why, if the function returns something that
    is not a legal (i, j) for the board it was given.
    """
    from ttt.games.classic import play as play_square
    from ttt.tictactoe import _square_of, from_text

    def play(state: str) -> int:
        action = function(from_text(state))
        square = _square_of(action)
        play_square(state, square)  # raises InvalidActionError, saying why, for an illegal move
        return square

    play.__name__ = getattr(function, "__name__", "function")
    play.game = TicTacToe.name  # type: ignore[attr-defined]
    return play


def as_player(who: Player | str, *, game: str = "tictactoe", seed: Optional[int] = None) -> Player:
    """Return a player from a registered name, a registered player, or a CS50-style function."""
    if isinstance(who, str):
        return make(who, seed, game=game)
    if getattr(who, "game", None) == game:
        return who
    if game == TicTacToe.name:
        return from_cs50(who)
    return who


__all__ = ["Agent", "Player", "as_player", "cs50", "describe", "from_cs50", "lookup", "make", "names", "options",
           "require_moves"]
