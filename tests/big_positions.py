"""Positions of the big-board games that several test files use: random games stopped part way,
and a position where X wins ultimate with one move."""

from __future__ import annotations

import random
from typing import Any, Callable

# X has claimed boards 0 and 1 and has two in a row on board 2 (top right); X to move there.
X_TO_WIN_THE_GAME = """
X X X | X X X | X X .
O O . | O O . | O . .
. . . | . . . | . . .
------+-------+------
. . . | . . . | . . .
. . . | . . . | . . .
. . . | . . . | . . .
------+-------+------
O . . | O . . | O . .
. . . | . . . | . . .
. . . | . . . | . . .
"""


def random_game(game: Any, rng: random.Random, fewest: int = 0, most: int = 60) -> Any:
    """Return the state of a random game of `game` stopped after ``rng.randrange(fewest, most)``
    moves drawn from `rng` (fewer if it ends sooner)."""
    state = game.initial()
    for _ in range(rng.randrange(fewest, most)):
        moves = game.moves(state)
        if not moves:
            break
        state = game.play(state, rng.choice(moves))
    return state


def random_positions(game: Any, rng: random.Random, count: int, *, fewest: int = 0, most: int = 60,
                     keep: Callable[[Any, Any], bool] = lambda game, state: True) -> list:
    """Return `count` positions of random games (`random_game`) where the game goes on and `keep` holds."""
    found = []
    while len(found) < count:
        state = random_game(game, rng, fewest, most)
        if not game.is_terminal(state) and keep(game, state):
            found.append(state)
    return found
