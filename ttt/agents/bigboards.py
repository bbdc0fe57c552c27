"""Players of the big boards (nine-board and ultimate): the CSC 242 write-up's search, the default
searcher and Monte Carlo tree search (random play is ``ttt.agents.generic``'s, as on any game).

Each plays ``state -> (board, cell)``; they play the two games ``ttt.engine`` knows
(`BIG_BOARDS`). The searchers shuffle the moves at the root before ordering them, so among
moves the search finds equally good the choice is random (seeded), and matches between them do
not repeat one game.
"""

from __future__ import annotations

import math
import random
from typing import Any, Optional, Sequence

from ttt import search
from ttt.agents import Agent, require_moves
from ttt.games.bigboard import BigBoardGame
from ttt.games.nineboard import NineBoard
from ttt.games.ultimate import Ultimate

BIG_BOARDS = (NineBoard.name, Ultimate.name)  # the games these players play: the engine's (``ttt.engine.board``)


def shuffled_root(game: Any, root: Any, rng: random.Random):
    """Return an ordering ``(state, moves) -> moves``: `game.order_moves`, the root's moves
    shuffled first (the sort is stable, so equally ranked moves stay in random order)."""

    def order(state: Any, moves: Sequence) -> list:
        if state is root:
            moves = list(moves)
            rng.shuffle(moves)
        return game.order_moves(state, moves)

    return order


class LineCount(Agent):
    """The CSC 242 write-up's computer: alpha-beta to depth 4 with the write-up's line heuristic.

    (`depth`, given in Python, searches deeper or shallower.)
    """

    name = "line-count"
    games = BIG_BOARDS

    def __init__(self, game: BigBoardGame, rng: random.Random, *, depth: int = 4) -> None:
        super().__init__(game, rng)
        self.depth = depth

    def __call__(self, state: Any):
        moves = self.legal_moves(state)
        if len(moves) == 1:
            return moves[0]
        game = self.game
        return search.depth_limited(
            game, state, depth=self.depth, evaluate=game.line_count_evaluate, order=shuffled_root(game, state, self.rng)
        ).move


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


class Default(Agent):
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

    name = "default"
    games = BIG_BOARDS

    def __init__(self, game: BigBoardGame, rng: random.Random, engine: str = "fast", *, seconds: float = 1.0) -> None:
        super().__init__(game, rng)
        self.engine, self.seconds = resolve_engine(engine), seconds
        _check_budget(seconds)
        if self.engine == "compiled":
            from ttt.engine import compiled

            self._mcts = _searcher(game, rng, self.engine, dict(seconds=seconds, heuristic=compiled.HEURISTIC))
            self.prepare = self._mcts.prepare
        elif self.engine == "plain":
            from ttt.engine import alphabeta  # the engine's tables are built on first use, not at import

            self._deepen = alphabeta.iterative_deepening

    def __call__(self, state: Any):
        if self.engine == "compiled":
            return self._mcts(state)
        moves = self.legal_moves(state)
        if len(moves) == 1:
            return moves[0]
        game, seconds, rng = self.game, self.seconds, self.rng
        if self.engine == "plain":
            return self._deepen(game, state, seconds=seconds, rng=rng).move
        return search.iterative_deepening(
            game, state, evaluate=game.evaluate, seconds=seconds, order=shuffled_root(game, state, rng)
        ).move


class MCTS(Agent):
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

    name = "mcts"
    games = BIG_BOARDS

    def __init__(self, game: BigBoardGame, rng: random.Random, engine: str = "fast", *, seconds: float = 1.0,
                 iterations: Optional[int] = None) -> None:
        super().__init__(game, rng)
        engine = resolve_engine(engine)
        _check_budget(seconds, iterations)
        budget = dict(seconds=None if iterations is not None else seconds, iterations=iterations)
        self._mcts = _searcher(game, rng, engine, budget)
        if hasattr(self._mcts, "prepare"):
            self.prepare = self._mcts.prepare

    def __call__(self, state: Any):
        return self._mcts(state)


def installed_engines(game: str) -> str:
    """Return the sentence that says which engine the default and mcts players of `game` search
    with on this machine ('' for a game they do not play)."""
    from ttt.engine.compiled import INSTALL_HINT

    if game not in BIG_BOARDS:
        return ""
    if resolve_engine("fast") != "compiled":
        return f"Installed here: plain Python, so default is alpha-beta ({INSTALL_HINT})."
    if game == Ultimate.name:
        return ("Installed here: the fast extra, so mcts is the compiled MCTS, and default the same"
                " search guided by the heuristic's estimates.")
    return "Installed here: the fast extra, so default and mcts are the compiled MCTS."


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
        moves = require_moves(game, state)
        if len(moves) == 1:
            return moves[0]
        if engine == "compiled":
            compiled.warm_up()  # the first move compiles the search (or loads it) before its clock starts
        return run(game, state, rng=rng, **budget).move

    if engine == "compiled":
        play.prepare = compiled.warm_up  # type: ignore[attr-defined]  # for a front end to call, saying why it waits
    return play
