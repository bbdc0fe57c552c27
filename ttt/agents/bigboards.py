"""Players for the big boards (nine-board and ultimate): random, the CSC 242 write-up's search, the default
searcher and Monte Carlo tree search.

Each factory takes a seeded ``random.Random`` and returns ``state -> (board, cell)``. The
searchers shuffle the moves at the root before ordering them, so among moves the search finds
equally good the choice is random (seeded), and matches between them do not repeat one game.
"""

from __future__ import annotations

import math
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
    """The CSC 242 write-up's computer: alpha-beta to depth 4 with the write-up's line heuristic.

    (`depth`, given in Python, searches deeper or shallower.)
    """

    def play(state: Any):
        moves = _require_moves(game, state)
        if len(moves) == 1:
            return moves[0]
        return search.depth_limited(
            game, state, depth=depth, evaluate=game.line_count_evaluate, order=shuffled_root(game, state, rng)
        ).move

    return play


ENGINES = ("fast", "compiled", "plain", "teaching")


def _check_budget(seconds: float | None, iterations: int | None = None) -> None:
    """Refuse a budget a search cannot run on, saying why (0 would be read as no budget, and
    infinity never ends); `seconds` is checked even when `iterations` is the budget."""
    if iterations is not None:
        if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
            raise ValueError(f"iterations must be a whole number of simulations a move, 1 or more, not {iterations!r}")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds < math.inf:
        raise ValueError(f"seconds must be a positive, finite number of seconds a move, not {seconds!r}")


def resolve_engine(engine: str) -> str:
    """Return the engine a player plays with: `engine`, with "fast" made "compiled" when the
    fast extra is installed and "plain" when it is not; refuse an unknown one by name."""
    from ttt.engine import compiled  # imported when a player is made, not with ttt.agents

    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}: choose one of {', '.join(map(repr, ENGINES))}")
    if engine == "fast":
        return "compiled" if compiled.AVAILABLE else "plain"
    if engine == "compiled" and not compiled.AVAILABLE:
        raise ValueError(f"the compiled engine is not installed ({compiled.INSTALL_HINT});"
                         " engine='fast' or 'plain' plays without it")
    return engine


def default_player(game: Any, rng: random.Random, engine: str = "fast", *, seconds: float = 1.0):
    """The strongest player installed (the compiled MCTS with the fast extra, else alpha-beta), seconds a move.

    `engine` "fast" (the default) is "compiled" when the fast extra (numba) is installed, else
    "plain". "compiled": the compiled Monte Carlo tree search (``ttt.engine.compiled``), as
    `mcts` plays it (keeping its tree from move to move) but, on ultimate, with the engine's
    heuristic judging each new node and backed up as a minimax value beside the playouts' mean
    (the compiled MCTS beat alpha-beta on both big boards, and these estimates beat the MCTS
    without them on ultimate: see ``docs/players.md``); "plain": iterative deepening alpha-beta on the engine's bit masks
    (``ttt.engine.alphabeta``), its own heuristic and move order; both take `seconds` of CPU
    time. "teaching": ``ttt.search.iterative_deepening`` on the game's states, ``game.evaluate``
    and ``game.order_moves``, `seconds` of wall time. The alpha-beta searches value wins more
    the sooner they come. (`engine` is chosen in Python only, by name; the terminal and the
    widgets pass `seconds`, the one option ``agents.options`` lists.)
    """
    engine = resolve_engine(engine)
    _check_budget(seconds)
    if engine == "compiled":
        from ttt.engine import compiled

        return _searcher(game, rng, engine, dict(seconds=seconds, heuristic=compiled.HEURISTIC))
    from ttt.engine import alphabeta  # the engine's tables are built on first use, not at import

    def play(state: Any):
        moves = _require_moves(game, state)
        if len(moves) == 1:
            return moves[0]
        if engine == "plain":
            return alphabeta.iterative_deepening(game, state, seconds=seconds, rng=rng).move
        return search.iterative_deepening(
            game, state, evaluate=game.evaluate, seconds=seconds, order=shuffled_root(game, state, rng)
        ).move

    return play


def mcts_player(game: Any, rng: random.Random, engine: str = "fast", *, seconds: float = 1.0,
                iterations: int | None = None):
    """Monte Carlo tree search (UCT) with playouts that take a win on the spot and a solver, seconds a move.

    (Or `iterations` a move instead of `seconds`: when `iterations` is given, it is the whole
    budget and `seconds` is not used.)

    `engine` "fast" (the default) is "compiled" when the fast extra (numba) is installed, else
    "plain". Both search the engine's bit masks for `seconds` of CPU time: their playouts end
    when a player can win the game at once, and they prove wins and losses (an MCTS-solver),
    so they never hand the opponent a win they have seen, and they keep their tree from one
    move to the next (``ttt.engine.mcts.Tree``). "plain" is ``ttt.engine.mcts``, in plain
    Python; "compiled" (``ttt.engine.compiled``) runs about ten times the simulations a second.
    "teaching" searches with ``ttt.search.mcts``, the readable UCT, `seconds` of wall time.
    (`engine` is given by name, as for the default player.)
    """
    engine = resolve_engine(engine)
    _check_budget(seconds, iterations)
    return _searcher(game, rng, engine, dict(seconds=None if iterations is not None else seconds, iterations=iterations))


def _searcher(game: Any, rng: random.Random, engine: str, options: dict):
    """A player that plays `engine`'s MCTS with `options` (its budget and settings) from each
    position, keeping its tree from one move to the next where the engine can."""
    from ttt.engine import compiled
    from ttt.engine.mcts import Tree, mcts as plain_mcts

    budget = dict(options)
    if engine != "teaching":
        budget["tree"] = compiled.Tree() if engine == "compiled" else Tree()
    run = {"compiled": compiled.mcts, "plain": plain_mcts, "teaching": search.mcts}[engine]

    def play(state: Any):
        moves = _require_moves(game, state)
        if len(moves) == 1:
            return moves[0]
        if engine == "compiled":
            compiled.warm_up()  # the first move compiles the search (or loads it) before its clock starts
        return run(game, state, rng=rng, **budget).move

    if engine == "compiled":
        play.prepare = compiled.warm_up  # type: ignore[attr-defined]  # for a front end to call, saying why it waits
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
