"""Ultimate tic-tac-toe: ttt's rules and players measured against OpenSpiel's.

OpenSpiel (``pip install -e '.[peers]'``, the benchmark extra; never a dependency of ttt) has
ultimate tic-tac-toe as ``ultimate_tic_tac_toe`` and a C++ Monte Carlo tree search,
``pyspiel.MCTSBot``. This script prints three things:

1. **The rules check.** `--rules-games` random games (default 1,500), each played move by move
   through ttt's ``get_game("ultimate")`` and OpenSpiel's game at once. At every state it
   compares the 81 squares, the mark to move, the board the mover is sent to (``sent_to``), the
   set of legal moves, whether the game is over, and at the end the winner; and it checks
   OpenSpiel's name for each action played. It prints the games, the moves and the mismatches;
   any mismatch ends the script with an error before the matches.

   OpenSpiel's encoding, as this check verifies it: actions are 0-8. When the mover is sent to
   a board, an action is the cell (0-8, row by row, named ``Local board B: x(row,col)``). When
   the mover may play on any open board (the first move, or sent to a closed board), a move
   is two actions by the same player: first the board (``Choose local board B``; only open
   boards are legal), then the cell. Player 0 is X. A small board that fills up without a line
   is claimed by no one, as in ttt, and the game is a tie when every board is closed.

2. **The matches.** Each pairing (`--players`: ttt's ``default`` and ``mcts``) plays `--games` games (default
   60) against OpenSpiel's MCTSBot at each of `--seconds` (default 0.5 and 2 seconds a move),
   alternating who plays X. With the fast extra (numba) installed, ``mcts`` is the compiled MCTS
   (``ttt.engine.compiled``) and ``default`` the same search with the heuristic's estimates
   backed up (``heuristic=HEURISTIC``); without it ``default`` is the engine's alpha-beta and
   ``mcts`` its plain-Python MCTS. `--engine` picks one for both (``plain``
   measures the plain-Python players on a machine that has numba); the script prints which
   engine played. The bot has the defaults of OpenSpiel's own examples
   (``examples/mcts_example.cc`` and ``python/examples/mcts.py``): UCT constant ``uct_c=2``,
   ``solve=True`` (the MCTS-Solver) and 1,000 MB for its tree; its evaluations are one random
   rollout each (``RandomRolloutEvaluator(n_rollouts=1, seed)``, the Python example's default;
   the C++ example's is 10).

   Equal CPU seconds a move: ttt's players take ``seconds=`` of CPU time (``time.process_time``);
   MCTSBot takes a number of simulations, so the script measures its simulations per CPU second
   (``time.process_time`` around each search, first from the opening, then a running average of
   its own searches in the game) and gives each move that rate times the budget. When the bot
   may choose any board, its move is two searches (the board, then the cell) sharing the
   budget. The solver ends a search early when it proves the result; the table says how
   often (``proven``), as that lowers the bot's mean. Each searched move of both sides is timed with ``time.process_time``, and the table
   shows both means, so the reader sees whether the budgets were equal. A move with one legal
   choice is played at once, by both sides, and not counted. (The bot's move is
   ``mcts_search`` then ``best_child``, which is what ``MCTSBot.step`` does with more than one
   simulation, but tells how many simulations it ran.)

   Each game has its own seed (`--seed` plus its number; the same numbers in every pairing)
   for ttt's player and for the bot and its rollouts. Games are reproducible only as far as the
   bots allow: both stop by time, so the number of simulations differs from run to run. Games
   run in `--jobs` worker processes (default: all cores), one game in one single-threaded process.

   A row per pairing: seconds a move, games, ttt's wins / ties / losses, ttt's score (a win 1, a
   tie 0.5) with a 95% interval by bootstrap over games (10,000 resamples, percentiles), and
   the mean CPU seconds a move of each side.

3. **Simulations per CPU second**, side by side, from the opening and from three fixed mid-game
   states (random moves from fixed seeds): OpenSpiel's MCTSBot; ttt's teaching search
   (``ttt.search.mcts``, its ``nodes`` are its simulations); the engine's plain-Python MCTS
   (``ttt.engine.mcts``); and the compiled one (``ttt.engine.compiled``) when numba is
   installed, without and with the heuristic's estimates (``mcts``'s search and ``default``'s).
   Each search runs about `--rate-seconds` (default 1).

It prints the 1-minute load average at the start and the end (a busy machine slows everything,
but both sides' budgets are CPU seconds, so it changes how long the run takes, not the scores).

How long it takes: the rules check about ten seconds; the matches (2 pairings, 60 games at 0.5 s
and 60 at 2 s; a game is about 48 moves, 23 or so searched by each side) about 4 CPU hours,
so about 2 hours on two idle cores. `--quick` (4 games a
pairing at 0.1 s, 200 rules games, searches of 0.2 s) runs in about a minute. Each pairing's
row is printed as soon as its last game ends; `--log FILE` keeps every game as it ends (a JSON
line each), and `--report FILE...` prints the tables of kept games without playing, so the
pairings of a long run can be played in separate runs, or a run cut short still be read.

    python benchmarks/peers.py [--players default mcts] [--seconds 0.5 2] [--games 60]
                               [--rules-games 1500] [--jobs N] [--seed 0] [--quick]
                               [--log FILE] [--report FILE ...] [--no-peers]

``--no-peers`` needs no OpenSpiel: it prints only the simulations per CPU second of ttt's own
searches (part 3 without the bot's row), each as a ratio to the teaching search.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from importlib.metadata import version
from typing import Optional

from tqdm import tqdm

from ttt import agents, search
from ttt.agents.bigboards import resolve_engine
from ttt.engine import compiled
from ttt.engine.mcts import mcts as engine_mcts
from ttt.games import get_game
from ttt.games.bigboard import BigState

INSTALL_HINT = (
    "OpenSpiel's pyspiel is not installed: install the benchmark extra with "
    "`pip install -e '.[peers]'` in this repository (make bench does it), then run this again."
)
SPIEL_GAME = "ultimate_tic_tac_toe"
UCT_C = 2.0  # OpenSpiel's examples' default
MAX_MEMORY_MB = 1000  # OpenSpiel's C++ example's default: past it the bot prunes its tree
PLAYERS = ("default", "mcts")
MARKS = {0: "X", 1: "O"}  # OpenSpiel's players
FULL = dict(games=60, seconds=[0.5, 2.0], rules_games=1500, rate_seconds=1.0)
QUICK = dict(games=4, seconds=[0.1], rules_games=200, rate_seconds=0.2)
MID_GAME = ((12, 1), (24, 2), (36, 3))  # (random moves, seed) of the fixed mid-game states

pyspiel = None  # the module, once `load_pyspiel` has found it


def load_pyspiel() -> None:
    """Import pyspiel, or exit saying in one sentence how to install it."""
    global pyspiel
    try:
        import pyspiel as module
    except ImportError:
        sys.exit(INSTALL_HINT)
    pyspiel = module


# --- the two encodings ----------------------------------------------------------------------


def spiel_actions(state: BigState, move: tuple) -> list[int]:
    """Return OpenSpiel's actions for ttt's `move` in `state`: the cell, after the board when
    the mover may play on any open board."""
    board, cell = move
    return [cell] if state.sent_to is not None else [board, cell]


def spiel_view(s) -> tuple[str, Optional[int]]:
    """Return (the 81 squares as ttt writes them, the board the mover is sent to) of an
    OpenSpiel state, read from its text (nine rows of three boards, then the forced board)."""
    lines = str(s).splitlines()
    rows = [line.split() for line in lines if line and not line.startswith(("Current", "Forced"))]
    squares = ["."] * 81
    for r, groups in enumerate(rows):
        for g, group in enumerate(groups):
            for k, ch in enumerate(group):
                squares[9 * ((r // 3) * 3 + g) + (r % 3) * 3 + k] = ch.upper()
    forced = lines[-1].split(":")[1].strip()
    return "".join(squares), None if forced == "any" else int(forced)


def spiel_moves(s) -> set:
    """Return OpenSpiel's legal moves as ttt's (board, cell) pairs."""
    if s.is_terminal():
        return set()
    sent_to = spiel_view(s)[1]
    if sent_to is not None:
        return {(sent_to, cell) for cell in s.legal_actions()}
    moves = set()
    for board in s.legal_actions():
        chosen = s.clone()
        chosen.apply_action(board)
        moves |= {(board, cell) for cell in chosen.legal_actions()}
    return moves


def spiel_winner(s) -> Optional[str]:
    """Return 'X' or 'O' if that player has won the (finished) OpenSpiel game, else None."""
    returns = s.returns()
    return "X" if returns[0] > 0 else "O" if returns[1] > 0 else None


def action_names(state: BigState, move: tuple, mark: str) -> list[str]:
    """Return the names OpenSpiel should give the actions of `move`, played by `mark`."""
    board, cell = move
    played = f"Local board {board}: {mark.lower()}({cell // 3},{cell % 3})"
    return [played] if state.sent_to is not None else [f"Choose local board {board}", played]


# --- 1. the rules check ------------------------------------------------------------------------


def compare(game, state: BigState, s) -> list[str]:
    """Return what differs between ttt's `state` and OpenSpiel's `s` (nothing when they agree)."""
    found = []
    squares, sent_to = spiel_view(s)
    over = game.is_terminal(state)
    if squares != state.squares:
        found.append(f"squares: ttt {state.squares} OpenSpiel {squares}")
    if over != s.is_terminal():
        found.append(f"game over: ttt {over} OpenSpiel {s.is_terminal()}")
    ours, theirs = set(game.moves(state)), spiel_moves(s)
    if ours != theirs:
        found.append(f"legal moves: only ttt {sorted(ours - theirs)}, only OpenSpiel {sorted(theirs - ours)}")
    if over and s.is_terminal() and game.winner(state) != spiel_winner(s):
        found.append(f"winner: ttt {game.winner(state)} OpenSpiel {spiel_winner(s)}")
    if not over and not s.is_terminal():
        if sent_to != state.sent_to:
            found.append(f"sent_to: ttt {state.sent_to} OpenSpiel {sent_to}")
        if MARKS[s.current_player()] != game.to_move(state):
            found.append(f"to move: ttt {game.to_move(state)} OpenSpiel {MARKS[s.current_player()]}")
    return found


def check_random_game(seed: int) -> dict:
    """Play one random game (moves chosen from ttt's, seeded) through both; return its counts."""
    game = get_game("ultimate")
    spiel_game = pyspiel.load_game(SPIEL_GAME)
    rng = random.Random(seed)
    state, s = game.initial(), spiel_game.new_initial_state()
    problems, moves, free = [], 0, 0
    while True:
        problems += [f"game {seed} move {moves}: {p}" for p in compare(game, state, s)]
        if problems or game.is_terminal(state):
            break
        move = rng.choice(game.moves(state))
        mark = game.to_move(state)
        free += state.sent_to is None
        for action, name in zip(spiel_actions(state, move), action_names(state, move, mark)):
            if s.action_to_string(s.current_player(), action) != name:
                problems.append(f"game {seed} move {moves}: action {action} is "
                                f"{s.action_to_string(s.current_player(), action)!r}, not {name!r}")
            s.apply_action(action)
        state = game.play(state, move)
        moves += 1
    return {"moves": moves, "free": free, "problems": problems, "winner": game.winner(state)}


def rules_check(games: int, seed: int) -> bool:
    """Print the rules check of `games` random games; return True if both agree everywhere."""
    print(f"Rules check: {games:,} random games through ttt and OpenSpiel ({SPIEL_GAME})")
    moves = free = 0
    problems, winners = [], {"X": 0, "O": 0, None: 0}
    for k in tqdm(range(games), desc="rules", unit="game", leave=False, file=sys.stderr):
        result = check_random_game(seed + k)
        moves, free = moves + result["moves"], free + result["free"]
        problems += result["problems"]
        winners[result["winner"]] += 1
    print(f"  games {games:,}   moves {moves:,} (free choice of board: {free:,})   "
          f"X won {winners['X']:,}, O won {winners['O']:,}, ties {winners[None]:,}")
    print(f"  mismatches {len(problems)}")
    for p in problems[:10]:
        print(f"  MISMATCH {p}")
    print()
    return not problems


# --- 2. the matches -------------------------------------------------------------------------


_OPENING_RATE: Optional[float] = None  # MCTSBot's simulations per CPU second from the opening, in this process


def opening_rate() -> float:
    """Return MCTSBot's simulations per CPU second from the opening, measured once per process."""
    global _OPENING_RATE
    if _OPENING_RATE is None:
        spiel_game = pyspiel.load_game(SPIEL_GAME)
        sims, cpu = spiel_search(spiel_game, spiel_game.new_initial_state(), 5000, seed=0)[1:]
        _OPENING_RATE = sims / cpu
    return _OPENING_RATE


def spiel_search(spiel_game, s, simulations: int, seed: int, evaluator=None) -> tuple[int, int, float]:
    """Run MCTSBot's search from `s`; return (its action, simulations run, CPU seconds)."""
    evaluator = evaluator or pyspiel.RandomRolloutEvaluator(1, seed)
    bot = pyspiel.MCTSBot(spiel_game, evaluator, UCT_C, max(2, simulations), MAX_MEMORY_MB, True, seed, False)
    start = time.process_time()
    root = bot.mcts_search(s)
    cpu = time.process_time() - start
    return root.best_child().action, root.explore_count, cpu


class BudgetedBot:
    """OpenSpiel's MCTSBot given `seconds` of CPU a move: its simulations a search are its
    measured simulations per CPU second times the CPU seconds the search may take."""

    def __init__(self, spiel_game, seconds: float, seed: int) -> None:
        self.spiel_game = spiel_game
        self.seconds = seconds
        self.rng = random.Random(seed)
        self.evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
        self.rate = opening_rate()
        self.owed = 0.0  # CPU seconds the searches that ran all their simulations fell short by (negative: over)
        self.cpu = 0.0  # over the searched moves
        self.moves = 0
        self.proven = 0  # searched moves the solver ended early
        self.simulations = 0

    def search(self, s, seconds: float) -> tuple[int, float]:
        """Return (an action, CPU seconds) from a search of about `seconds`, and update the rate.

        The rate is a running average (rollouts shorten as the game goes on), and what earlier
        searches fell short of their seconds (or went over) is added to this one's, so the
        bot's mean matches the budget. A search the solver ends early (the result is proven)
        is not made up for: ttt's alpha-beta stops early on a proven result too.
        """
        planned = min(1.5 * seconds, max(0.5 * seconds, seconds + self.owed))
        wanted = max(2, round(self.rate * planned))
        action, sims, cpu = spiel_search(self.spiel_game, s, wanted, self.rng.randrange(2**31), self.evaluator)
        if sims >= wanted:
            self.owed += seconds - cpu
            if cpu > 0.002:
                self.rate = 0.5 * self.rate + 0.5 * sims / cpu
        self.simulations += sims
        self.cut_short = self.cut_short or sims < wanted
        return action, cpu

    def move(self, s) -> list[int]:
        """Return the actions of the bot's next move in `s` (two when it may choose the board)."""
        s = s.clone()
        decisions = 2 if spiel_view(s)[1] is None else 1
        actions, spent, searched = [], 0.0, False
        self.cut_short = False
        for k in range(decisions):
            legal = s.legal_actions()
            if len(legal) == 1:
                action = legal[0]
            else:
                action, cpu = self.search(s, (self.seconds - spent) / (decisions - k))
                spent, searched = spent + cpu, True
            actions.append(action)
            s.apply_action(action)
        if searched:
            self.cpu += spent
            self.moves += 1
            self.proven += self.cut_short
        return actions


@dataclass
class GameResult:
    """One game of a pairing: how it ended for ttt, and the CPU time of each side."""

    player: str
    seconds: float
    seed: int
    ttt_mark: str
    outcome: str  # 'win', 'tie' or 'loss', for ttt
    plies: int
    ttt_cpu: float
    ttt_moves: int
    bot_cpu: float
    bot_moves: int
    bot_proven: int
    bot_simulations: int
    engine: str = ""  # the engine ttt's player searched with


def play_game(player_name: str, seconds: float, seed: int, ttt_mark: str, engine: str = "fast") -> GameResult:
    """Play one game of ttt's `player_name` against the budgeted MCTSBot; return its result."""
    if pyspiel is None:
        load_pyspiel()
    game = get_game("ultimate")
    spiel_game = pyspiel.load_game(SPIEL_GAME)
    player = agents.make(player_name, seed, game="ultimate", seconds=seconds, engine=engine)
    if engine == "compiled":
        compiled.warm_up()  # numba compiles (or loads) the search once per process, before any move is timed
    bot = BudgetedBot(spiel_game, seconds, seed)
    state, s = game.initial(), spiel_game.new_initial_state()
    ttt_cpu, ttt_moves, plies = 0.0, 0, 0
    while not game.is_terminal(state):
        moves = game.moves(state)
        if game.to_move(state) != ttt_mark:
            actions = bot.move(s)
            move = tuple(actions) if state.sent_to is None else (state.sent_to, actions[0])
        elif len(moves) == 1:
            move = moves[0]
        else:
            start = time.process_time()
            move = player(state)
            ttt_cpu, ttt_moves = ttt_cpu + time.process_time() - start, ttt_moves + 1
        for action in spiel_actions(state, move):
            s.apply_action(action)
        state = game.play(state, move)
        plies += 1
    if s.is_terminal() != game.is_terminal(state) or spiel_winner(s) != game.winner(state):
        raise AssertionError(f"game {seed}: ttt and OpenSpiel disagree on the end of the game")
    w = game.winner(state)
    outcome = "tie" if w is None else "win" if w == ttt_mark else "loss"
    return GameResult(player_name, seconds, seed, ttt_mark, outcome, plies, ttt_cpu, ttt_moves,
                      bot.cpu, bot.moves, bot.proven, bot.simulations, engine)


def run_games(tasks: list[tuple], jobs: int, log: Optional[str] = None) -> list[GameResult]:
    """Play every (player, seconds, seed, ttt_mark) of `tasks`, in `jobs` processes, with a
    progress bar. Each game is appended to `log` (JSON lines) as it ends, and each pairing's row
    is printed as soon as its last game ends, so a long run shows its results on the way."""
    bar = tqdm(total=len(tasks), desc="matches", unit="game", leave=False, file=sys.stderr)
    left = {}
    for name, sec, *_ in tasks:
        left[name, sec] = left.get((name, sec), 0) + 1
    results = []

    def finished(result: GameResult) -> None:
        results.append(result)
        bar.update()
        if log:
            with open(log, "a") as out:
                out.write(json.dumps(asdict(result)) + "\n")
        left[result.player, result.seconds] -= 1
        if not left[result.player, result.seconds]:
            rows = [r for r in results if (r.player, r.seconds) == (result.player, result.seconds)]
            tqdm.write(f"finished: {pairing_row(rows)}", file=sys.stdout)
            sys.stdout.flush()

    if jobs == 1:
        for task in tasks:
            finished(play_game(*task))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for future in as_completed([pool.submit(play_game, *task) for task in tasks]):
                finished(future.result())
    bar.close()
    return results


def read_results(path: str) -> list[GameResult]:
    """Return the games a `--log` file holds (one JSON object a line)."""
    with open(path) as lines:
        return [GameResult(**json.loads(line)) for line in lines if line.strip()]


def bootstrap_interval(scores: list[float], resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """Return the 95% percentile-bootstrap interval of the mean of `scores` (resampling games)."""
    rng = random.Random(seed)
    n = len(scores)
    means = sorted(sum(rng.choices(scores, k=n)) / n for _ in range(resamples))
    return means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]


PAIRING_HEAD = (f"{'pairing':<36}{'s/move':>7}{'games':>7}{'wins':>6}{'ties':>6}{'losses':>8}"
                f"{'ttt score [95% CI]':>24}{'ttt CPU s/move':>16}{'MCTSBot CPU s/move':>20}"
                f"{'MCTSBot sims/move':>19}{'proven':>8}")


def pairing_row(rows: list[GameResult]) -> str:
    """Return the table's row for the games of one pairing and budget."""
    name, sec = rows[0].player, rows[0].seconds
    count = {k: sum(r.outcome == k for r in rows) for k in ("win", "tie", "loss")}
    scores = [{"win": 1.0, "tie": 0.5, "loss": 0.0}[r.outcome] for r in rows]
    low, high = bootstrap_interval(scores)
    ttt_cpu = sum(r.ttt_cpu for r in rows) / max(1, sum(r.ttt_moves for r in rows))
    bot_moves = max(1, sum(r.bot_moves for r in rows))
    bot_cpu = sum(r.bot_cpu for r in rows) / bot_moves
    sims = sum(r.bot_simulations for r in rows) / bot_moves
    proven = sum(r.bot_proven for r in rows) / bot_moves
    score = f"{sum(scores) / len(scores):.3f} [{low:.2f}, {high:.2f}]"
    label = f"ttt {name}" + (f" ({rows[0].engine})" if rows[0].engine else "") + " vs MCTSBot"
    return (f"{label:<36}{sec:>7g}{len(rows):>7}{count['win']:>6}{count['tie']:>6}"
            f"{count['loss']:>8}{score:>24}{ttt_cpu:>16.3f}{bot_cpu:>20.3f}{sims:>19,.0f}{proven:>8.0%}")


def print_matches(results: list[GameResult], players: list[str], seconds: list[float]) -> None:
    """Print a row for each pairing and budget: ttt's wins, ties, losses, score and both CPU times."""
    unequal = []
    print("Matches: ttt's player against OpenSpiel's MCTSBot (C++, random rollouts, solver, uct_c 2), "
          "alternating who plays X")
    print(PAIRING_HEAD)
    engines = list(dict.fromkeys(r.engine for r in results))  # (games kept by several runs may differ)
    for name in players:
        for engine in engines:
            for sec in seconds:
                rows = [r for r in results if (r.player, r.engine, r.seconds) == (name, engine, sec)]
                if not rows:
                    continue
                print(pairing_row(rows))
                ttt_cpu = sum(r.ttt_cpu for r in rows) / max(1, sum(r.ttt_moves for r in rows))
                bot_cpu = sum(r.bot_cpu for r in rows) / max(1, sum(r.bot_moves for r in rows))
                if abs(ttt_cpu - bot_cpu) > 0.1 * sec:
                    unequal.append(f"ttt {name} ({engine}) at {sec:g} s")
    plies = [r.plies for r in results]
    print(f"(score: a win 1, a tie 0.5; 95% interval by bootstrap over games; CPU s/move: the mean over "
          f"moves with more than one legal choice; proven: MCTSBot's moves whose search its solver ended early; games last {min(plies)}-{max(plies)} moves, "
          f"{sum(plies) / len(plies):.0f} on average)")
    if unequal:
        print(f"WARNING: the two sides' CPU seconds a move differ by more than 10% of the budget in: "
              f"{', '.join(unequal)}. A search the solver or alpha-beta proves ends early, and a player "
              f"that keeps to the clock gets less CPU than its seconds on a busy machine (load "
              f"{os.getloadavg()[0]:.1f}): read the scores with the CPU columns.")
    print()


# --- 3. simulations per CPU second -------------------------------------------------------------


def fixed_states() -> list[tuple[str, BigState, list[int]]]:
    """Return (label, ttt state, OpenSpiel actions) of the opening and the fixed mid-game states."""
    game = get_game("ultimate")
    found = [("opening", game.initial(), [])]
    for plies, seed in MID_GAME:
        rng = random.Random(seed)
        state, actions = game.initial(), []
        for _ in range(plies):
            move = rng.choice(game.moves(state))
            actions += spiel_actions(state, move)
            state = game.play(state, move)
        assert not game.is_terminal(state), (plies, seed)
        found.append((f"after {plies}", state, actions))
    return found


def ttt_rate(mcts, game, state: BigState, seconds: float) -> float:
    """Return the simulations per CPU second of one of ttt's MCTS functions from `state`."""
    start = time.process_time()
    result = mcts(game, state, rng=random.Random(0), seconds=seconds)
    return result.nodes / (time.process_time() - start)


def spiel_rate(spiel_game, s, seconds: float) -> float:
    """Return MCTSBot's simulations per CPU second from `s`, in a search of about `seconds`."""
    _, sims, cpu = spiel_search(spiel_game, s, 2000, seed=0)
    _, sims, cpu = spiel_search(spiel_game, s, round(sims / cpu * seconds), seed=1)
    return sims / cpu


def print_rates(seconds: float, *, peers: bool = True) -> None:
    """Print the simulations per CPU second of each MCTS, a row each, from the fixed states, then
    each of ttt's rows as a ratio to the first row: OpenSpiel's MCTSBot, or without `peers` (no
    OpenSpiel) ttt's teaching search."""
    game = get_game("ultimate")
    spiel_game = pyspiel.load_game(SPIEL_GAME) if peers else None
    states = fixed_states()
    searches = [("teaching search", search.mcts), ("engine, plain Python", engine_mcts)]
    if compiled.AVAILABLE:
        compiled.warm_up()
        searches.append(("engine, compiled", compiled.mcts))
        searches.append(("compiled, estimates", functools.partial(compiled.mcts, heuristic=compiled.HEURISTIC)))
    print(f"Simulations per CPU second (random rollouts to the end; searches of about {seconds:g} s)")
    print(f"{'MCTS':<28}" + "".join(f"{label:>13}" for label, _, _ in states))
    rows = ([("OpenSpiel MCTSBot (C++)", [])] if peers else []) + [(f"ttt {label}", []) for label, _ in searches]
    for label, state, actions in tqdm(states, desc="speed", leave=False, file=sys.stderr):
        if peers:
            s = spiel_game.new_initial_state()
            for action in actions:
                s.apply_action(action)
            rows[0][1].append(spiel_rate(spiel_game, s, seconds))
        for (_, found), (_, mcts) in zip(rows[1:] if peers else rows, searches):
            found.append(ttt_rate(mcts, game, state, seconds))
    for label, rates in rows:
        print(f"{label:<28}" + "".join(f"{rate:>13,.0f}" for rate in rates))
    (base_label, base), others = rows[0], rows[1:]
    print(f"Ratio to {base_label}")
    for label, rates in others:
        print(f"{label:<28}" + "".join(f"{rate / b:>12.2f}x" for rate, b in zip(rates, base)))
    print("(mid-game: the states after N random moves, seeds " + ", ".join(f"{s}" for _, s in MID_GAME) + ")")
    print()


# --- the command -------------------------------------------------------------------------------


def load_average(when: str) -> None:
    print(f"1-minute load average at the {when}: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", nargs="+", choices=PLAYERS, default=list(PLAYERS),
                        help="ttt's players to pair with MCTSBot (default: default mcts)")
    parser.add_argument("--seconds", nargs="+", type=float,
                        help="CPU seconds a move for both sides, one match each (default: 0.5 2)")
    parser.add_argument("--games", type=int, help="games a pairing and budget, alternating X (default: 60)")
    parser.add_argument("--rules-games", type=int, help="random games in the rules check (default: 1500)")
    parser.add_argument("--rate-seconds", type=float, help="length of each simulations-per-second search (default: 1)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help=f"worker processes for the matches (default: the cores, {os.cpu_count()})")
    parser.add_argument("--engine", choices=["fast", "compiled", "plain"], default="fast",
                        help="the engine ttt's players search with (default: fast, the compiled one when numba is installed)")
    parser.add_argument("--seed", type=int, default=0, help="the first game's seed (default: 0)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: 4 games a pairing at 0.1 s, 200 rules games, 0.2 s searches")
    parser.add_argument("--no-matches", action="store_true", help="only the rules check and the speeds")
    parser.add_argument("--no-peers", action="store_true",
                        help="without OpenSpiel: only ttt's own searches' simulations per CPU second, side by side")
    parser.add_argument("--log", metavar="FILE",
                        help="append each game to FILE as it ends (JSON lines), to keep a long run's games")
    parser.add_argument("--report", metavar="FILE", nargs="+",
                        help="play nothing: print the match tables of the games in these --log files")
    args = parser.parse_args(argv)
    for key, value in (QUICK if args.quick else FULL).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.games < 1 or args.jobs < 1 or args.rules_games < 0:
        parser.error("--games and --jobs must be at least 1, --rules-games at least 0")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.report:
        results = [r for path in args.report for r in read_results(path)]
        players = list(dict.fromkeys(r.player for r in results))
        print_matches(results, players, sorted({r.seconds for r in results}))
        return 0
    start = time.perf_counter()
    if args.no_peers:
        load_average("start")
        print()
        print_rates(args.rate_seconds, peers=False)
        load_average("end")
        return 0
    load_pyspiel()
    load_average("start")
    print()
    if not rules_check(args.rules_games, args.seed):
        print("FAILED: ttt and OpenSpiel disagree on the rules (see the mismatches above); no matches played.")
        return 1
    if not args.no_matches:
        engine = resolve_engine(args.engine)
        print(f"ttt's engine: {engine}" + (f" (numba {version('numba')})" if engine == "compiled" else ""))
        tasks = [(name, sec, args.seed + k, "X" if k % 2 == 0 else "O", engine)
                 for name in args.players for sec in args.seconds for k in range(args.games)]
        print_matches(run_games(tasks, args.jobs, args.log), args.players, args.seconds)
    print_rates(args.rate_seconds)
    load_average("end")
    print(f"{(time.perf_counter() - start) / 60:.1f} minutes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
