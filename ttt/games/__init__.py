"""The games, all on one protocol (``ttt.games.base.Game``): classic 3x3 and the big boards."""

from __future__ import annotations

from importlib import import_module

from ttt.games.base import Game
from ttt.games.classic import TicTacToe

_GAMES = {
    "tictactoe": ("ttt.games.classic", "TicTacToe"),
    "nine-board": ("ttt.games.nineboard", "NineBoard"),
    "ultimate": ("ttt.games.ultimate", "Ultimate"),
}

BIG_BOARD_GAMES = ("nine-board", "ultimate")  # the games on nine small boards (``ttt.games.bigboard``)


def game_names() -> list[str]:
    """Return the names `get_game` accepts."""
    return sorted(_GAMES)


def get_game(name: str = "tictactoe") -> Game:
    """Return a new game object by name; raise ValueError listing the names for an unknown one."""
    if name not in _GAMES:
        raise ValueError(f"unknown game {name!r}; choose one of: {', '.join(game_names())}")
    module, cls = _GAMES[name]
    return getattr(import_module(module), cls)()


__all__ = ["BIG_BOARD_GAMES", "Game", "TicTacToe", "game_names", "get_game"]
