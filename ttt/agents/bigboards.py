"""Players for the big boards (nine-board and ultimate): random, the CSC 242 write-up's search, the default
searcher and Monte Carlo tree search.

Each factory takes a seeded ``random.Random`` and returns ``state -> (board, cell)``. The
searchers shuffle the moves at the root before ordering them, so among moves the search finds
equally good the choice is random (seeded), and matches between them do not repeat one game.
"""

from __future__ import annotations

import random
from typing import Any, Sequence

from ttt import search
from ttt.agents import register
from ttt.games import BIG_BOARD_GAMES, get_game



def _require_moves(game: Any, state: Any) -> Sequence:
    """Return the legal moves; raise ValueError if the game is already over."""
    moves = game.moves(state)
    if not moves:
        raise ValueError(f"the game is over: there is no move to make in\n{game.format(state)}")
    return moves


def shuffled_root(game: Any, root: Any, rng: random.Random):
    """Return an ordering ``(state, moves) -> moves``: `game.order_moves`, the root's moves
    shuffled first (the sort is stable, so equally ranked moves stay in random order)."""

    def order(state: Any, moves: Sequence) -> list:
        if state is root:
            moves = list(moves)
            rng.shuffle(moves)
        return game.order_moves(state, moves)

    return order


def random_player(game: Any, rng: random.Random):
    """Plays a legal move chosen at random."""

    def play(state: Any):
        return rng.choice(list(_require_moves(game, state)))

    return play


def line_count_player(game: Any, rng: random.Random, *, depth: int = 4):
    """The CSC 242 write-up's computer: alpha-beta to depth 4 with the write-up's line heuristic."""

    def play(state: Any):
        moves = _require_moves(game, state)
        if len(moves) == 1:
            return moves[0]
        return search.depth_limited(
            game, state, depth=depth, evaluate=game.line_count_evaluate, order=shuffled_root(game, state, rng)
        ).move

    return play


def default_player(game: Any, rng: random.Random, engine: str = "fast", *, seconds: float = 1.0):
    """The strongest: iterative deepening alpha-beta with a heuristic, `seconds` a move.

    `engine` "fast" (the default) searches with ``ttt.engine.alphabeta`` on bit masks, its own
    heuristic and move order, `seconds` of CPU time; "teaching" with ``ttt.search.iterative_deepening``
    on the game's states, ``game.evaluate`` and ``game.order_moves``, `seconds` of wall time.
    Either way wins are worth more the sooner they come. (`engine` is given by name, like
    `seconds`; it is not keyword-only so that ``agents.options`` still lists only ``seconds``,
    the option the terminal and the widgets pass.)
    """
    from ttt.engine import alphabeta  # the engine's tables are built on first use, not at import

    engines = ("fast", "teaching")
    if engine not in engines:
        raise ValueError(f"unknown engine {engine!r}: choose one of {', '.join(map(repr, engines))}")

    def play(state: Any):
        moves = _require_moves(game, state)
        if len(moves) == 1:
            return moves[0]
        if engine == "fast":
            return alphabeta.iterative_deepening(game, state, seconds=seconds, rng=rng).move
        return search.iterative_deepening(
            game, state, evaluate=game.evaluate, seconds=seconds, order=shuffled_root(game, state, rng)
        ).move

    return play


def mcts_player(game: Any, rng: random.Random, engine: str = "fast", *, seconds: float = 1.0,
                iterations: int | None = None):
    """Monte Carlo tree search (UCT) with random playouts, `seconds` a move (or `iterations`).

    `engine` "fast" (the default) searches with ``ttt.engine.mcts`` on bit masks, `seconds` of
    CPU time: its playouts end when a player can win the game at once, and it proves wins and
    losses (an MCTS-solver), so it never hands the opponent a win it has seen. "teaching"
    searches with ``ttt.search.mcts``, the readable UCT, `seconds` of wall time. (`engine` is
    given by name, as for the default player.)
    """
    from ttt.engine.mcts import mcts as fast_mcts  # imported when a player is made, not with ttt.agents

    engines = ("fast", "teaching")
    if engine not in engines:
        raise ValueError(f"unknown engine {engine!r}: choose one of {', '.join(map(repr, engines))}")
    run = fast_mcts if engine == "fast" else search.mcts

    def play(state: Any):
        moves = _require_moves(game, state)
        if len(moves) == 1:
            return moves[0]
        return run(game, state, rng=rng, seconds=None if iterations else seconds, iterations=iterations).move

    return play


def _register(game_name: str) -> None:
    game = get_game(game_name)
    for name, factory in (
        ("random", random_player),
        ("line-count", line_count_player),
        ("default", default_player),
        ("mcts", mcts_player),
    ):

        def make(rng: random.Random, _factory=factory, **options: Any):
            return _factory(game, rng, **options)

        make.__doc__ = factory.__doc__
        make.__wrapped__ = factory  # type: ignore[attr-defined]
        register(name, game=game_name)(make)


for _name in BIG_BOARD_GAMES:
    _register(_name)
