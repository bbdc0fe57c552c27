"""The engine's compact board plays by the same rules as the readable games, move for move."""

from __future__ import annotations

import random

import pytest

from big_positions import random_game
from ttt.engine.board import ANY, Board
from ttt.games import get_game
from ttt.games.bigboard import BigState

GAMES = ("ultimate", "nine-board")


def _moves(board: Board) -> list[tuple[int, int]]:
    return [divmod(m, 9) for m in board.moves()]


@pytest.mark.parametrize("name", GAMES)
def test_random_games_agree_with_the_rules_move_for_move(name):
    """2,000 random games a game: after every move the same position, legal moves, winner and end."""
    game = get_game(name)
    rng = random.Random(f"engine-{name}")
    moves_checked = 0
    for _ in range(2000):
        state, board = game.initial(), Board(name)
        while True:
            legal = game.moves(state)
            assert _moves(board) == list(legal), game.format(state)
            assert board.state() == state
            assert board.winner() == game.winner(state)
            assert bool(board.result) == game.is_terminal(state)
            if not legal:
                break
            move = rng.choice(legal)
            state = game.play(state, move)
            board.push(9 * move[0] + move[1])
            moves_checked += 1
        assert game.outcome(state) == (board.winner() or "tie")
    assert moves_checked > 2000 * 15


@pytest.mark.parametrize("name", GAMES)
def test_pop_takes_back_every_move_exactly(name):
    rng = random.Random(1)
    for _ in range(200):
        board = Board(name)
        seen = []
        while board.moves():
            seen.append((board.key(), board.closed, board.x_boards, board.o_boards, board.turn, board.free, board.result))
            board.push(rng.choice(board.moves()))
        while seen:
            board.pop()
            assert (board.key(), board.closed, board.x_boards, board.o_boards, board.turn, board.free, board.result) == seen.pop()


@pytest.mark.parametrize("name", GAMES)
def test_a_board_made_from_a_state_in_mid_game_is_that_state(name):
    game = get_game(name)
    rng = random.Random(2)
    for _ in range(300):
        state = random_game(game, rng, 0, 40)
        board = Board.of(game, state)
        assert board.state() == state
        assert _moves(board) == list(game.moves(state))
        assert board.winner() == game.winner(state)
        assert bool(board.result) == game.is_terminal(state)


@pytest.mark.parametrize("name", GAMES)
def test_a_snapshot_restores_the_position_whatever_was_played_since(name):
    game = get_game(name)
    rng = random.Random(3)
    for _ in range(200):
        board = Board.of(game, random_game(game, rng, 0, 50))
        fields = (board.key(), board.closed, board.x_boards, board.o_boards, board.turn, board.free, board.result)
        snapshot = board.snapshot()
        scratch = Board(name)  # another board, in another position: the opening
        while board.moves():  # the game played on to its end
            board.push(rng.choice(board.moves()))
        for target in (board, scratch):
            target.restore(snapshot)
            assert (target.key(), target.closed, target.x_boards, target.o_boards, target.turn, target.free,
                    target.result) == fields
            assert target.moves() == Board.of(game, target.state()).moves()


def test_sent_to_a_closed_board_means_any_open_board():
    game = get_game("ultimate")
    board = Board.of(game, BigState("XXX......" + "OO......." + "." * 63, None))
    assert board.sent_to == ANY and board.closed == 1 and board.x_boards == 1


def test_unknown_rules_are_refused_by_name():
    with pytest.raises(ValueError, match="unknown rules 'tictactoe'"):
        Board("tictactoe")
