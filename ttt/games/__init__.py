"""The games, all on one protocol (``ttt.games.base.Game``): classic 3x3 and the big boards.

Each game class declares its `name` and is found by it: a game in a new module of this
package needs no other line (``ttt.registry``).

    >>> from ttt.games import game_names, get_game
    >>> "ultimate" in game_names()
    True
    >>> get_game("ultimate")
    Ultimate()
"""

from __future__ import annotations

from typing import Optional

from ttt.games.base import GAMES, Game
from ttt.games.classic import TicTacToe


def game_names(kind: Optional[type] = None) -> list[str]:
    """Return the names `get_game` accepts, sorted: of every game, or of the games of `kind`
    (a class such as ``ttt.games.bigboard.BigBoardGame``)."""
    return [name for name, cls in GAMES.classes().items() if kind is None or issubclass(cls, kind)]


def get_game(name: str = "tictactoe", kind: Optional[type] = None) -> Game:
    """Return a new game object by name; raise ValueError listing the names (of the games of
    `kind`, when given) for an unknown one."""
    games = GAMES.classes()
    if name not in games or (kind is not None and not issubclass(games[name], kind)):
        raise ValueError(f"unknown game {name!r}; choose one of: {', '.join(game_names(kind))}")
    return games[name]()


__all__ = ["Game", "TicTacToe", "game_names", "get_game"]
