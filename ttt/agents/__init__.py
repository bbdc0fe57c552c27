"""Players, made by name: plain callables ``state -> move`` on a game of ``ttt.games``.

    >>> from ttt import agents
    >>> agents.names()
    ['ai1', 'ai2', 'alphabeta', 'minimax', 'random', 'rich-knight', 'win-block']
    >>> play = agents.make("win-block")
    >>> play("XX./OO./...")   # a 3x3 board as text works too
    2

For 3x3 tic-tac-toe a state is nine characters (``'XO..X...O'``) and a move a square 0-8.
`cs50` turns any player into a CS50-style function ``board -> (i, j)`` on list-of-lists boards,
and `from_cs50` goes the other way, so a student's own ``minimax`` can play in a match or on
the board widget. Randomness comes only from a ``random.Random(seed)`` given to the player.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Optional

from ttt.errors import InvalidBoardError
from ttt.games.base import Player

Factory = Callable[..., Player]  # (rng: random.Random, **options) -> Player

_REGISTRY: dict[str, dict[str, tuple[Factory, str]]] = {}
_MODULES = {  # game -> the module whose import registers its players
    "tictactoe": "ttt.agents.classic",
    "nine-board": "ttt.agents.bigboards",
    "ultimate": "ttt.agents.bigboards",
}


def register(name: str, *, game: str = "tictactoe", summary: str = "") -> Callable[[Factory], Factory]:
    """Return a decorator that registers `factory(rng, *, option=default, ...) -> Player` under `name`.

    A factory's keyword-only parameters are the player's options (see `options`).
    """

    def decorate(factory: Factory) -> Factory:
        doc = summary or (factory.__doc__ or "").strip().splitlines()[0]
        _REGISTRY.setdefault(game, {})[name] = (factory, doc)
        return factory

    return decorate


def _players(game: str) -> dict[str, tuple[Factory, str]]:
    if game not in _MODULES:
        raise ValueError(f"no players for game {game!r}; games with players: {', '.join(sorted(_MODULES))}")
    __import__(_MODULES[game])
    return _REGISTRY.get(game, {})


def names(game: str = "tictactoe") -> list[str]:
    """Return the names of the players registered for `game`, sorted."""
    return sorted(_players(game))


def describe(game: str = "tictactoe") -> dict[str, str]:
    """Return name -> one-line description of each player for `game`."""
    return {name: doc for name, (_, doc) in sorted(_players(game).items())}


def options(name: str, *, game: str = "tictactoe") -> list[str]:
    """Return the keyword options player `name` of `game` accepts (such as ``seconds``), sorted."""
    players = _players(game)
    if name not in players:
        raise ValueError(f"unknown player {name!r}; choose one of: {', '.join(sorted(players))}")
    return sorted(_accepted(players[name][0], keyword_only=True))


def make(name: str, seed: Optional[int] = None, *, game: str = "tictactoe", **options: Any) -> Player:
    """Return the player called `name` for `game`, its randomness seeded with `seed`.

    Raises ValueError naming the registered players if there is no player called `name`.
    """
    players = _players(game)
    if name not in players:
        raise ValueError(f"unknown player {name!r}; choose one of: {', '.join(sorted(players))}")
    factory, _ = players[name]
    accepted = _accepted(factory)
    unknown = sorted(set(options) - accepted)
    if unknown:
        takes = f"it takes {', '.join(sorted(accepted))}" if accepted else "it takes none"
        raise ValueError(f"player {name!r} has no option {unknown[0]!r}; {takes}")
    return _named(factory(random.Random(seed), **options), name, game, factory.__doc__)


def _accepted(factory: Factory, *, keyword_only: bool = False) -> set[str]:
    """The options `factory` accepts by name: its keyword-only ones (what `options` lists), and
    unless `keyword_only` any other it takes by name after the game and the random generator
    (such as the big boards' ``engine``)."""
    import inspect

    kinds = {inspect.Parameter.KEYWORD_ONLY}
    if not keyword_only:
        kinds.add(inspect.Parameter.POSITIONAL_OR_KEYWORD)
    parameters = inspect.signature(factory).parameters.values()
    return {p.name for p in parameters if p.kind in kinds and p.name not in ("game", "rng")}


def _named(player: Player, name: str, game: str, doc: Optional[str] = None) -> Player:
    """Return `player` wrapped with its name, game and description (its own docstring, else
    `doc`); a 3x3 player also takes boards as text. A player's `prepare` (work to do once before
    its first move, such as compiling its search) is kept."""
    if game == "tictactoe":
        from ttt.games.classic import parse_board

        def play(board: Any) -> Any:
            if not (isinstance(board, str) and len(board) == 9 and set(board) <= set("XO.")):
                board = parse_board(board)
            return player(board)

    else:
        from ttt.games import get_game
        from ttt.games.bigboard import BigState

        rules = get_game(game)

        def play(state: Any) -> Any:
            if not isinstance(state, BigState):
                why = " (text does not say which board the mover is sent to)" if isinstance(state, str) else ""
                raise InvalidBoardError(
                    f"the {game} player takes a position, not {type(state).__name__}{why};"
                    f" get_game({game!r}).parse(text, board=B) makes one from text"
                )
            rules.check_state(state)
            return player(state)

    play.__name__ = name
    play.__qualname__ = name
    play.__doc__ = player.__doc__ or doc
    play.game = game  # type: ignore[attr-defined]
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
    play.game = "tictactoe"  # type: ignore[attr-defined]
    return play


def as_player(who: Player | str, *, game: str = "tictactoe", seed: Optional[int] = None) -> Player:
    """Return a player from a registered name, a registered player, or a CS50-style function."""
    if isinstance(who, str):
        return make(who, seed, game=game)
    if getattr(who, "game", None) == game:
        return who
    if game == "tictactoe":
        return from_cs50(who)
    return who


__all__ = ["Player", "as_player", "cs50", "describe", "from_cs50", "make", "names", "options", "register"]
