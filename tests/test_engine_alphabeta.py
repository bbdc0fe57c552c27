"""The engine's alpha-beta (ttt.engine.alphabeta) and its heuristics on masks (ttt.engine.evaluate).

Two checks make the fast search trustworthy by comparison with the readable one:

- each heuristic on a `Board` equals a reference written on the game's state (the games' own
  ``evaluate``, or the engine's heuristic spelled out on strings with ``ttt.games``' functions)
  on thousands of random positions;
- the engine's search at a fixed depth, with its table and its move order, finds the value
  ``ttt.search.depth_limited`` finds with the same heuristic (on states).
"""

from __future__ import annotations

import random
from functools import lru_cache

import pytest

import big_positions
from ttt import agents, search
from ttt.engine import alphabeta
from ttt.engine import evaluate as heuristics
from ttt.engine.board import Board
from ttt.games import get_game, nineboard, ultimate
from ttt.games.bigboard import BOARD_SLICES, BigState, to_move
from ttt.games import classic
from ttt.games.classic import LINES

GAMES = ("ultimate", "nine-board")


@lru_cache(maxsize=None)
def random_fill(small: str) -> tuple[float, float]:
    """X's and O's chances of taking a small board (its nine characters) when its free cells are
    filled one at a time, in random order, each by X or O with even odds: the engine's `_random_fill`
    written on strings."""
    winner = classic.winner(small)
    if winner is not None:
        return (1.0, 0.0) if winner == "X" else (0.0, 1.0)
    free = [c for c in range(9) if small[c] == "."]
    if not free:
        return 0.0, 0.0
    outcomes = [random_fill(small[:c] + mark + small[c + 1 :]) for c in free for mark in "XO"]
    return sum(x for x, _ in outcomes) / len(outcomes), sum(o for _, o in outcomes) / len(outcomes)


def reference_engine_ultimate(state: BigState) -> float:
    """The engine's ultimate heuristic written on the game's state: `ultimate.evaluate`'s lines and
    boards from each board's chances under random filling, the board the mover is sent to taken
    after the mover's best cell there."""
    squares, sent_to = state
    big = ultimate.big_board(squares)
    game_value = ultimate.evaluate(state)
    if ultimate.big_winner(big) is not None or "." not in big or abs(game_value) == heuristics.NEAR_WIN:
        return game_value  # the game's end, or a win the mover takes at once
    mover = to_move(state)
    sign = 1 if mover == "X" else -1
    chances = [random_fill(squares[s]) for s in BOARD_SLICES]
    if sent_to is not None:
        small = state.small(sent_to)
        after = [random_fill(small[:c] + mover + small[c + 1 :]) for c in range(9) if small[c] == "."]
        chances[sent_to] = max(after, key=lambda xo: sign * (xo[0] - xo[1]))
    score = 0.0
    for a, b, c in LINES:
        score += 60 * (chances[a][0] * chances[b][0] * chances[c][0] - chances[a][1] * chances[b][1] * chances[c][1])
    score += 8 * sum((x - o) * len(lines) for (x, o), lines in zip(chances, classic.LINES_THROUGH))
    if sent_to is None:
        score += sign * heuristics.FREE_CHOICE
    return max(-heuristics.NEAR_WIN + 1, min(heuristics.NEAR_WIN - 1, score))


# (game, the heuristic on a Board, the same on a state)
PAIRS = [
    ("ultimate", heuristics.game_ultimate, ultimate.evaluate),
    ("ultimate", heuristics.ultimate, reference_engine_ultimate),
    ("nine-board", heuristics.game_nine_board, nineboard.evaluate),
    ("nine-board", heuristics.nine_board, nineboard.evaluate),
]
PAIR_IDS = ["ultimate-game", "ultimate-engine", "nine-board-game", "nine-board-engine"]


def random_positions(name: str, count: int, seed: int, *, ongoing: bool = False) -> list[BigState]:
    """Return `count` positions of random games (every position of each game, until `count`)."""
    game = get_game(name)
    rng = random.Random(seed)
    found: list[BigState] = []
    while len(found) < count:
        state = game.initial()
        while len(found) < count:
            if not (ongoing and game.is_terminal(state)):
                found.append(state)
            moves = game.moves(state)
            if not moves:
                break
            state = game.play(state, rng.choice(moves))
    return found


def sampled_positions(name: str, count: int, seed: int) -> list[BigState]:
    """Return `count` ongoing positions, each from a random game stopped after a random number of moves."""
    return big_positions.random_positions(get_game(name), random.Random(seed), count)


@pytest.mark.parametrize("name, on_board, on_state", PAIRS, ids=PAIR_IDS)
def test_each_heuristic_on_masks_equals_its_reference_on_states(name, on_board, on_state):
    game = get_game(name)
    for state in random_positions(name, 5000, seed=11):
        assert on_board(Board.of(game, state)) == pytest.approx(on_state(state), abs=1e-9), game.format(state)


@pytest.mark.parametrize("name, on_board, on_state", PAIRS, ids=PAIR_IDS)
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_the_engine_finds_the_teaching_search_value_at_each_depth(name, on_board, on_state, depth):
    """With its table, killers and move order, the engine's value is plain alpha-beta's."""
    game = get_game(name)
    for state in sampled_positions(name, 40 if depth < 3 else 25, seed=depth):
        fast = alphabeta.depth_limited(game, state, depth=depth, evaluate=on_board)
        slow = search.depth_limited(game, state, depth=depth, evaluate=on_state, order=game.order_moves)
        assert fast.value == pytest.approx(slow.value, abs=1e-6), game.format(state)
        assert fast.depth == depth and fast.move in game.moves(state)


@pytest.mark.parametrize("name", GAMES)
def test_deeper_searches_agree_with_plain_alpha_beta_on_the_engine_heuristic(name):
    """Depth 4 and 5 (the table now matters): the same value as the teaching search, given the
    engine's own heuristic read through a Board."""
    game = get_game(name)
    on_board = heuristics.for_rules(name)

    def on_state(state):
        return on_board(Board.of(game, state))

    for depth, count in ((4, 6), (5, 2)):
        for state in sampled_positions(name, count, seed=100 + depth):
            fast = alphabeta.depth_limited(game, state, depth=depth)
            slow = search.depth_limited(game, state, depth=depth, evaluate=on_state, order=game.order_moves)
            assert fast.value == pytest.approx(slow.value, abs=1e-6), game.format(state)


WINNABLE = {
    # X holds boards 0 and 1 and has two in a row on board 2, where it is sent: 2 2 wins the game
    "ultimate": BigState(
        "XXX" "OO." "O.." + "XXX" "O.O" "..." + "XX." "..." "O.." + "...." "O...." + "." * 18 + "...." "O...." + "." * 18, 2
    ),
    # X has two in a row on board 4, where it is sent: 4 2 wins
    "nine-board": BigState("." * 36 + "XX." "O.." "..." + "O" + "." * 35, 4),
}


@pytest.mark.parametrize("name", GAMES)
def test_it_takes_a_winning_move(name):
    game = get_game(name)
    state = WINNABLE[name]
    game.check_position(state.squares)
    assert to_move(state) == "X"
    expected = (state.sent_to, 2)
    fast = alphabeta.depth_limited(game, state, depth=1)
    assert fast.move == expected and fast.value == 1000 + state.squares.count(".") - 1
    deep = alphabeta.iterative_deepening(game, state, seconds=0.2, rng=random.Random(0))
    assert deep.move == expected
    assert agents.make("default", 0, game=name, seconds=0.1)(state) == expected


@pytest.mark.parametrize("name", GAMES)
def test_depth_one_completes_even_with_no_time(name):
    game = get_game(name)
    for state in sampled_positions(name, 30, seed=5):
        result = alphabeta.iterative_deepening(game, state, seconds=0, rng=random.Random(1))
        assert result.depth >= 1 and result.move in game.moves(state)


@pytest.mark.parametrize("name", GAMES)
def test_it_never_returns_an_illegal_move(name):
    """Whole games of the engine against a random player, and many random positions: every
    move the engine returns is legal where it is returned."""
    game = get_game(name)
    rng = random.Random(3)
    for state in sampled_positions(name, 60, seed=9):
        assert alphabeta.iterative_deepening(game, state, seconds=0.005, rng=rng).move in game.moves(state)
    for k in range(4):
        state = game.initial()
        while not game.is_terminal(state):
            if len(game.moves(state)) % 2 == k % 2:
                move = alphabeta.iterative_deepening(game, state, seconds=0.01, rng=rng).move
            else:
                move = rng.choice(game.moves(state))
            state = game.play(state, move)  # raises InvalidActionError on an illegal move


def test_the_root_shuffle_varies_the_choice_among_equals():
    game = get_game("ultimate")
    state = game.play(game.initial(), (4, 4))  # O sent to the centre board: corners all alike
    moves = {alphabeta.depth_limited(game, state, depth=1).move}
    moves |= {alphabeta.iterative_deepening(game, state, seconds=0, rng=random.Random(k)).move for k in range(20)}
    assert len(moves) > 1


@pytest.mark.parametrize("name", GAMES)
def test_a_finished_game_and_a_depth_below_one_are_refused(name):
    game = get_game(name)
    finished = random_positions(name, 400, seed=1)
    over = next(s for s in finished if game.is_terminal(s))
    with pytest.raises(ValueError, match="the game is over"):
        alphabeta.iterative_deepening(game, over, seconds=0.1)
    with pytest.raises(ValueError, match="depth must be at least 1"):
        alphabeta.depth_limited(game, game.initial(), depth=0)


@pytest.mark.parametrize("name", GAMES)
def test_the_default_player_runs_on_every_engine(name):
    game = get_game(name)
    state = sampled_positions(name, 1, seed=4)[0]
    for engine in ("fast", "compiled", "plain", "teaching"):
        assert agents.make("default", 0, game=name, seconds=0.05, engine=engine)(state) in game.moves(state)
    with pytest.raises(ValueError, match="unknown engine 'turbo': choose one of 'fast', 'compiled', 'plain', 'teaching'"):
        agents.make("default", 0, game=name, engine="turbo")


def test_the_fast_engine_is_the_compiled_one_when_numba_is_there_and_the_plain_one_when_not(monkeypatch):
    """Without the fast extra, "fast" plays on plain Python and "compiled" is refused, saying
    what to install."""
    from ttt.agents import bigboards
    from ttt.engine import compiled

    assert bigboards.resolve_engine("fast") == ("compiled" if compiled.AVAILABLE else "plain")
    monkeypatch.setattr(compiled, "AVAILABLE", False)
    assert bigboards.resolve_engine("fast") == "plain"
    with pytest.raises(ValueError, match=r"the compiled engine is not installed \(.*pip install 'ttt\[fast\]'\); engine='fast' or 'plain' plays without it"):
        agents.make("default", 0, game="ultimate", engine="compiled")
