"""The engine's Monte Carlo tree search: legal moves, counted iterations, wins taken, losses avoided."""

from __future__ import annotations

import random

import pytest

from ttt import agents
from ttt.engine import alphabeta
from ttt.engine.mcts import mcts
from ttt.games import get_game

GAMES = ("ultimate", "nine-board")


def _random_positions(game, rng: random.Random, count: int, *, keep=lambda game, state: True) -> list:
    """Return `count` positions of random games (not over) that `keep` accepts."""
    found = []
    while len(found) < count:
        state = game.initial()
        for _ in range(rng.randrange(4, 60)):
            moves = game.moves(state)
            if not moves:
                break
            state = game.play(state, rng.choice(moves))
        if not game.is_terminal(state) and keep(game, state):
            found.append(state)
    return found


def _wins_at_once(game, state, move) -> bool:
    return game.winner(game.play(state, move)) == game.to_move(state)


def _has_a_win_at_once(game, state) -> bool:
    return any(_wins_at_once(game, state, m) for m in game.moves(state))


@pytest.mark.parametrize("name", GAMES)
def test_moves_are_legal_values_in_range_and_iterations_counted(name):
    game = get_game(name)
    for state in _random_positions(game, random.Random(3), 30, keep=lambda g, s: not _has_a_win_at_once(g, s)):
        result = mcts(game, state, rng=random.Random(0), iterations=50)
        game.play(state, result.move)  # raises if illegal
        assert -1 <= result.value <= 1 and result.nodes == 50


@pytest.mark.parametrize("name", GAMES)
def test_a_win_at_once_is_taken(name):
    game = get_game(name)
    for state in _random_positions(game, random.Random(4), 40, keep=_has_a_win_at_once):
        result = mcts(game, state, rng=random.Random(0), iterations=200)
        assert _wins_at_once(game, state, result.move), game.format_numbered(state)
        assert result.value == (1 if game.to_move(state) == "X" else -1)


def _sends_to_a_loss(game, state, move) -> bool:
    after = game.play(state, move)
    return not game.is_terminal(after) and _has_a_win_at_once(game, after)


def _a_loss_to_avoid(game, state) -> bool:
    """Some moves hand the opponent a win at once, and some do not and are not lost by force
    within four moves (as the engine's alpha-beta sees it); none wins at once."""
    moves = game.moves(state)
    losing = [m for m in moves if _sends_to_a_loss(game, state, m)]
    if _has_a_win_at_once(game, state) or not 0 < len(losing) < len(moves):
        return False
    sign = 1 if game.to_move(state) == "X" else -1
    return any(sign * alphabeta.depth_limited(game, game.play(state, m), depth=4).value > -game.win_value
               for m in moves if m not in losing)


@pytest.mark.parametrize("name", GAMES)
def test_a_move_that_hands_the_opponent_a_win_at_once_is_avoided(name):
    game = get_game(name)
    for state in _random_positions(game, random.Random(5), 15, keep=_a_loss_to_avoid):
        result = mcts(game, state, rng=random.Random(0), iterations=1500)
        assert not _sends_to_a_loss(game, state, result.move), game.format_numbered(state)


def test_the_same_seed_and_iterations_give_the_same_search():
    game = get_game("ultimate")
    state = game.initial()
    first = mcts(game, state, rng=random.Random(7), iterations=300)
    assert mcts(game, state, rng=random.Random(7), iterations=300) == first


def test_a_budget_is_needed_and_a_finished_game_has_no_move():
    game = get_game("nine-board")
    with pytest.raises(ValueError, match="give mcts a budget"):
        mcts(game, game.initial(), rng=random.Random(0))
    over = _random_positions(game, random.Random(6), 1, keep=_has_a_win_at_once)[0]
    over = next(game.play(over, m) for m in game.moves(over) if _wins_at_once(game, over, m))
    result = mcts(game, over, rng=random.Random(0), iterations=10)
    assert result.move is None and result.nodes == 0 and abs(result.value) >= game.win_value


@pytest.mark.parametrize("engine", ["fast", "teaching"])
def test_the_mcts_player_runs_on_either_engine(engine):
    game = get_game("ultimate")
    play = agents.make("mcts", 1, game="ultimate", engine=engine, iterations=30)
    game.play(game.initial(), play(game.initial()))
    with pytest.raises(ValueError, match="unknown engine 'turbo'"):
        agents.make("mcts", 1, game="ultimate", engine="turbo")
