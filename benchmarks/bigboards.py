"""The big boards: search speed, depth reached in a time budget, and the default player's match.

Prints, for nine-board and ultimate tic-tac-toe: nodes per second of depth-limited alpha-beta;
the depth iterative deepening completes in 1 s from the opening and from a mid-game position;
the time of a depth-4 search from the opening, for nine-board beside a naive baseline written
here the way the CSC 242 write-up did it (boards as lists copied for every successor, the line heuristic
recomputed at every leaf, no move ordering, no caching); and a match, alternating who moves
first, of the `default` player at `--seconds` per move against `line-count` (depth 4); and the
teaching search beside the fast engine (``ttt.engine.alphabeta``): nodes per CPU second, the
depth each completes in 1 CPU second, and the ratio; and Monte Carlo tree search, the teaching
``ttt.search.mcts`` beside the engine's ``ttt.engine.mcts``: simulations per CPU second from the
opening and two mid-game positions, and the ratio.

    python benchmarks/bigboards.py [--games 100] [--seconds 1] [--game nine-board|ultimate|both]
                                   [--match-only | --no-match]

The full match takes long (about half an hour a game at 1 s per move): run it in the background.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time

from ttt import agents, search
from ttt.cli import match
from ttt.games import get_game

GAMES = ("nine-board", "ultimate")


# --- the naive baseline: the CSC 242 write-up's AdvancedTTT, written plainly ----------------------------------

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


class NaiveState:
    """The CSC 242 write-up's AdvState: nine boards as lists, the player to move, the board sent to."""

    def __init__(self, boards: list, player: str, position):
        self.boards, self.player, self.position = boards, player, position

    def copy_boards(self) -> list:
        return [list(b) for b in self.boards]

    def successors(self) -> list:
        found = []
        positions = [self.position] if self.position is not None and None in self.boards[self.position] else range(9)
        for b in positions:
            for i in range(9):
                if self.boards[b][i] is None:
                    boards = self.copy_boards()
                    boards[b][i] = self.player
                    found.append(((b, i), NaiveState(boards, "O" if self.player == "X" else "X", i)))
        return found


def naive_won(state: NaiveState, player: str) -> bool:
    return any(all(board[i] == player for i in line) for board in state.boards for line in LINES)


def naive_board_val(board: list, me: str, them: str) -> float:
    total = 0.0
    for line in LINES:
        marks = [board[i] for i in line]
        if them not in marks:
            n = marks.count(me)
            total += 5.0 if n == 1 else 10.0 if n == 2 else 0.0
    return total


def naive_util(state: NaiveState) -> float:
    empty = sum(v is None for board in state.boards for v in board)
    if naive_won(state, "X"):
        return 1000.0 + empty
    if naive_won(state, "O"):
        return -1000.0 - empty
    if empty == 0:
        return 0.0
    return sum(naive_board_val(b, "X", "O") - naive_board_val(b, "O", "X") for b in state.boards)


def naive_value(state: NaiveState, depth: int, alpha: float, beta: float, counter: list) -> float:
    counter[0] += 1
    if depth == 0 or naive_won(state, "X") or naive_won(state, "O") or all(None not in b for b in state.boards):
        return naive_util(state)
    if state.player == "X":
        v = -math.inf
        for _, child in state.successors():
            v = max(v, naive_value(child, depth - 1, alpha, beta, counter))
            if v >= beta:
                return v
            alpha = max(alpha, v)
    else:
        v = math.inf
        for _, child in state.successors():
            v = min(v, naive_value(child, depth - 1, alpha, beta, counter))
            if v <= alpha:
                return v
            beta = min(beta, v)
    return v


def naive_search(depth: int) -> tuple[float, int]:
    """Return (value for X, nodes) of the CSC 242 write-up's depth-limited alpha-beta from the opening."""
    counter = [0]
    root = NaiveState([[None] * 9 for _ in range(9)], "X", None)
    return naive_value(root, depth, -math.inf, math.inf, counter), counter[0]


# --- measurements -------------------------------------------------------------------------------


def mid_game(game, plies: int = 14, seed: int = 3):
    """Return the position after `plies` moves of line-count against itself (seeded, repeatable)."""
    player = agents.make("line-count", seed, game=game.name)
    state = game.initial()
    for _ in range(plies):
        state = game.play(state, player(state))
    assert not game.is_terminal(state)
    return state


def timed(fn):
    t = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - t


def speed(name: str) -> None:
    game = get_game(name)
    positions = {"opening": game.initial(), "mid-game": mid_game(game)}
    print(f"{name}: search speed (depth-limited alpha-beta, game.order_moves, game.evaluate)")
    print(f"{'position':<12}{'depth':>6}{'nodes':>10}{'seconds':>10}{'nodes/s':>11}{'1 s reaches':>13}")
    for label, state in positions.items():
        r, t = timed(lambda: search.depth_limited(game, state, depth=5, evaluate=game.evaluate, order=game.order_moves))
        deep = search.iterative_deepening(game, state, evaluate=game.evaluate, seconds=1.0, order=game.order_moves)
        print(f"{label:<12}{5:>6}{r.nodes:>10,}{t:>10.3f}{r.nodes / t:>11,.0f}{'depth ' + str(deep.depth):>13}")
    print()


def teaching_reach(game, state, budget: float) -> tuple[int, float]:
    """Return (depth completed within `budget` CPU seconds, nodes per CPU second) of the teaching
    search: depth-limited alpha-beta at depth 1, 2, 3, ... (iterative deepening, timed by CPU)."""
    spent, nodes, reached = 0.0, 0, 0
    for depth in range(1, 65):
        start = time.process_time()
        r = search.depth_limited(game, state, depth=depth, evaluate=game.evaluate, order=game.order_moves)
        spent += time.process_time() - start
        nodes += r.nodes
        if spent > budget:
            break
        reached = depth
    return reached, nodes / spent


def engine_speed(name: str) -> None:
    """Print the teaching search beside the engine's (ttt.engine.alphabeta), each with its own
    heuristic: nodes per CPU second, and the depth completed in 1 CPU second."""
    from ttt.engine import alphabeta

    game = get_game(name)
    positions = {"opening": game.initial(), "mid-game": mid_game(game)}
    print(f"{name}: teaching search (ttt.search) against the engine (ttt.engine.alphabeta), 1 CPU second")
    print(f"{'position':<12}{'teaching nodes/s':>18}{'engine nodes/s':>16}{'ratio':>7}"
          f"{'teaching depth':>16}{'engine depth':>14}")
    for label, state in positions.items():
        depth, rate = teaching_reach(game, state, 1.0)
        start = time.process_time()
        r = alphabeta.iterative_deepening(game, state, seconds=1.0, rng=random.Random(0))
        fast = r.nodes / (time.process_time() - start)
        print(f"{label:<12}{rate:>18,.0f}{fast:>16,.0f}{fast / rate:>6.1f}x{depth:>16}{r.depth:>14}")
    print()


def mcts_rate(search_fn, game, state, seconds: float) -> tuple[float, int]:
    """Return (simulations per CPU second, simulations) of one search of about `seconds`."""
    start = time.process_time()
    result = search_fn(game, state, rng=random.Random(0), seconds=seconds)
    return result.nodes / (time.process_time() - start), result.nodes


def mcts_speed(name: str, seconds: float = 1.0) -> None:
    """Print the simulations per CPU second of the teaching MCTS (``ttt.search.mcts``, timed by
    the clock on the wall, counted here in CPU time), of the engine's plain-Python one
    (``ttt.engine.mcts``, decisive playouts and a solver, timed in CPU time) and, when numba is
    installed, of the compiled one (``ttt.engine.compiled``), from the opening and after 14 and
    24 moves of line-count against itself. The engine stops early where it proves the position."""
    from ttt.engine import compiled
    from ttt.engine.mcts import mcts as plain_mcts

    game = get_game(name)
    positions = {"opening": game.initial(), "14 moves": mid_game(game, 14), "24 moves": mid_game(game, 24)}
    print(f"{name}: Monte Carlo tree search, teaching (ttt.search.mcts) against the engine's plain-Python "
          f"(ttt.engine.mcts) and compiled (ttt.engine.compiled) ones, {seconds:g} s each")
    head = f"{'position':<12}{'teaching sims/s':>17}{'plain sims/s':>14}{'ratio':>7}"
    print(head + (f"{'compiled sims/s':>17}{'ratio':>8}" if compiled.AVAILABLE else "  (compiled: numba is not installed)"))
    if compiled.AVAILABLE:
        compiled.warm_up()
    for label, state in positions.items():
        teaching, _ = mcts_rate(search.mcts, game, state, seconds)
        plain, _ = mcts_rate(plain_mcts, game, state, seconds)
        row = f"{label:<12}{teaching:>17,.0f}{plain:>14,.0f}{plain / teaching:>6.1f}x"
        if compiled.AVAILABLE:
            fast, _ = mcts_rate(compiled.mcts, game, state, seconds)
            row += f"{fast:>17,.0f}{fast / teaching:>7.0f}x"
        print(row)
    print()


def depth4(name: str) -> None:
    game = get_game(name)
    state = game.initial()
    print(f"{name}: depth 4 from the opening")
    print(f"{'search':<52}{'value':>8}{'nodes':>10}{'seconds':>10}")
    rows = []
    if name == "nine-board":
        (value, nodes), t = timed(lambda: naive_search(4))
        rows.append(("naive (the CSC 242 write-up: copied lists, no ordering, no cache)", value, nodes, t))
    for label, evaluate in (("the CSC 242 write-up's heuristic, ordered, cached", game.line_count_evaluate),
                            ("own heuristic (default), ordered, cached", game.evaluate)):
        r, t = timed(lambda: search.depth_limited(game, state, depth=4, evaluate=evaluate, order=game.order_moves))
        rows.append((label, r.value, r.nodes, t))
    for label, value, nodes, t in rows:
        print(f"{label:<52}{value:>8.0f}{nodes:>10,}{t:>10.4f}")
    if name == "nine-board":
        print(f"speed-up of the CSC 242 write-up's heuristic over the naive search: {rows[0][3] / rows[1][3]:.0f}x "
              f"(same value: {rows[0][1] == rows[1][1]})")
    print("Goal: depth 4 in under 0.1 s (the CSC 242 write-up reports minutes).")
    print()


def run_match(name: str, games: int, seconds: float, seed: int) -> dict:
    game = get_game(name)
    a = agents.make("default", seed, game=name, seconds=seconds)
    b = agents.make("line-count", seed + 1, game=name)
    t0 = time.perf_counter()
    outcome = match(game, a, b, games=games, names=("default", "line-count"), progress=sys.stderr.isatty())
    elapsed = time.perf_counter() - t0
    r = outcome.results["default"]
    print(f"{name}: {games} games, default at {seconds:g} s per move against line-count (depth 4), alternating first")
    print(f"{'player':<10}{'wins':>6}{'ties':>6}{'losses':>8}")
    for who, row in outcome.results.items():
        print(f"{who:<10}{row['wins']:>6}{row['ties']:>6}{row['losses']:>8}")
    print(f"default won {100 * r['wins'] / games:.0f}% (goal: at least 80%) in {elapsed / 60:.1f} min")
    print()
    return outcome


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="games in the match (default: 100)")
    parser.add_argument("--seconds", type=float, default=1.0, help="default's time per move (default: 1)")
    parser.add_argument("--game", choices=GAMES + ("both",), default="both")
    parser.add_argument("--seed", type=int, default=0, help="seed for the players' random tie-breaks")
    parts = parser.add_mutually_exclusive_group()
    parts.add_argument("--match-only", action="store_true", help="only the match")
    parts.add_argument("--no-match", action="store_true", help="everything but the match")
    args = parser.parse_args(argv)
    names = GAMES if args.game == "both" else (args.game,)
    if not args.match_only:
        for name in names:
            depth4(name)  # first: the caches start cold
        for name in names:
            speed(name)
        for name in names:
            engine_speed(name)
        for name in names:
            mcts_speed(name)
    if not args.no_match:
        for name in names:
            run_match(name, args.games, args.seconds, args.seed)
    sys.stdout.flush()


if __name__ == "__main__":
    random.seed(0)
    main()
