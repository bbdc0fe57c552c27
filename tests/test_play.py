"""The one game loop (`ttt.play`): a Session, play_game and match, as the CLI and the widgets use them."""

from __future__ import annotations

import pytest

from ttt import agents
from ttt.errors import InvalidActionError
from ttt.games import get_game
from ttt.games.classic import TicTacToe
from ttt.play import MatchResult, Session, match, play_game

GAME = TicTacToe()


def test_a_session_plays_a_person_against_a_player_and_says_the_outcome():
    session = Session(GAME, {"X": None, "O": agents.make("minimax")})
    assert session.to_move == "X" and not session.computer_to_move and session.outcome is None
    session.play(4)
    assert session.computer_to_move and session.last_move == 4
    reply = session.play_computer()
    assert session.last_move == reply and session.moves == [4, reply] and session.state.count("O") == 1
    while not session.over:
        session.play(session.legal_moves()[0]) if not session.computer_to_move else session.play_computer()
    assert session.outcome in ("tie", "O") and session.legal_moves() == []
    session.new()
    assert session.state == GAME.initial() and session.last_move is None and session.moves == []


def test_a_session_refuses_illegal_moves_with_the_reason_and_changes_nothing():
    session = Session(GAME, {"X": None, "O": None})
    session.play(0)
    with pytest.raises(InvalidActionError, match="square 0 is taken by X"):
        session.play(0)
    assert session.state == "X........" and session.moves == [0]
    for square in (3, 1, 4, 2):
        session.play(square)
    with pytest.raises(InvalidActionError, match="the game is over"):
        session.play(8)
    with pytest.raises(ValueError, match="played by a person"):
        Session(GAME, {"X": None, "O": None}).computer_move()


def test_a_player_that_cheats_is_named():
    def cheat(state):
        return 0

    session = Session(GAME, {"X": agents.make("random", seed=1), "O": cheat})
    session.play_computer()
    if session.state[0] == ".":
        session.play_computer()  # O's move is legal only if X did not take square 0
        session.play_computer()
    with pytest.raises(InvalidActionError, match="cheat played an illegal move"):
        while True:
            session.play_computer()


@pytest.mark.parametrize("game", ["tictactoe", "nine-board"])
def test_play_game_and_match_from_the_cli_are_the_library_s(game):
    from ttt import cli

    assert cli.play_game is play_game and cli.match is match
    x, o = agents.make("random", 1, game=game), agents.make("random", 2, game=game)
    assert play_game(get_game(game), x, o) in ("X", "O", None)


def test_match_tallies_alternating_first_and_stops_at_its_time_limit():
    outcome = match(GAME, agents.make("minimax"), agents.make("random", seed=3), games=6, names=("minimax", "random"))
    assert isinstance(outcome, MatchResult) and outcome.games == 6 and not outcome.stopped
    assert outcome.results["minimax"]["losses"] == 0 and outcome.to_dict()["games"] == 6
    assert sum(outcome.results["random"].values()) == 6
    same = match(GAME, agents.make("minimax"), agents.make("minimax"), games=2, names=("m", "m"))
    assert same.results == {"m": {"wins": 0, "ties": 2, "losses": 0}}
    stopped = match(GAME, agents.make("minimax"), agents.make("random", seed=3), games=1000, limit=0)
    assert stopped.games == 0 and stopped.stopped and stopped.asked == 1000
