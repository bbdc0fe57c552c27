"""The players of any game on the protocol (``ttt.games.base.Game``): random play, and the two
searches to the end, which play the games small enough for that (``Game.solvable``).

Each takes the game and a seeded ``random.Random`` and plays whichever side is to move.
"""

from __future__ import annotations

from typing import Any

from ttt import search
from ttt.agents import Agent


class RandomPlayer(Agent):
    """Plays a legal move chosen at random."""

    name = "random"

    def __call__(self, state: Any) -> Any:
        return self.rng.choice(list(self.legal_moves(state)))


class Minimax(Agent):
    """Perfect play (memoized minimax): wins when it can, never loses."""

    name = "minimax"
    searches_to_end = True

    def __call__(self, state: Any) -> Any:
        self.legal_moves(state)
        return self.game.solve(state)[1]


class AlphaBeta(Agent):
    """Alpha-beta search with move ordering, from scratch every move: never loses."""

    name = "alphabeta"
    searches_to_end = True

    def __call__(self, state: Any) -> Any:
        self.legal_moves(state)
        return search.alphabeta(self.game, state, order=self.game.order_moves).move
