"""The ``ttt`` command, end to end in real subprocesses with scripted input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ttt import agents
from ttt.engine import compiled

TTT = Path(sys.executable).with_name("ttt")


def ttt(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    command = [str(TTT)] if TTT.exists() else [sys.executable, "-m", "ttt.cli"]
    return subprocess.run(command + list(args), input=stdin, capture_output=True, text=True, timeout=60)


def test_play_validates_input_and_asks_again():
    # X: garbage, out of range, a taken square, then a real game against win-block.
    out = ttt("play", "--as", "X", "--ai", "win-block", stdin="hello\n42\n4\n4\n0\n8\n2\n6\n7\n5\n3\n1\n")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "three in a row" in text  # the instructions
    assert "'hello' is not a number" in text
    assert "square 42 is not on the board" in text
    assert "square 4 is taken by X" in text
    assert "The computer takes 0." in text  # win-block answers the centre with a corner
    assert "Traceback" not in out.stderr


def test_play_ends_cleanly_at_end_of_input():
    out = ttt("play", stdin="X\n")
    assert out.returncode == 0
    assert "Game abandoned. Goodbye!" in out.stdout
    assert out.stderr == ""


def test_play_as_o_against_the_unbeatable_player_is_never_a_win():
    moves = "\n".join(str(s) for s in range(9) for _ in range(2)) + "\n"
    out = ttt("play", "--as", "O", stdin=moves)
    assert out.returncode == 0, out.stderr
    assert "The computer (minimax) plays X." in out.stdout
    assert "The computer takes 4." in out.stdout  # X opens in the centre
    assert "you win" not in out.stdout
    assert "tie" in out.stdout or "the computer beat you" in out.stdout


def test_play_asks_for_a_side_until_it_gets_one():
    out = ttt("play", "--ai", "random", "--seed", "3", stdin="Y\nx\n")
    assert "Please type X or O." in out.stdout
    assert "plays O." in out.stdout


def test_an_unknown_player_is_a_clear_error():
    out = ttt("play", "--ai", "deep-blue")
    assert out.returncode == 2
    assert out.stderr.strip() == "ttt: error: unknown player 'deep-blue'; choose one of: " + ", ".join(agents.names())


def test_match_json_tallies_every_game_by_the_names_given():
    out = ttt("match", "minimax", "random", "-n", "20", "--seed", "5", "--json")
    assert out.returncode == 0, out.stderr
    outcome = json.loads(out.stdout)
    assert outcome["games"] == 20
    assert set(outcome["results"]) == {"minimax", "random"}
    mine, theirs = outcome["results"]["minimax"], outcome["results"]["random"]
    assert mine["losses"] == theirs["wins"] == 0
    assert sum(mine.values()) == sum(theirs.values()) == 20
    assert mine["wins"] == theirs["losses"] and mine["ties"] == theirs["ties"]
    again = ttt("match", "minimax", "random", "-n", "20", "--seed", "5", "--json")
    assert json.loads(again.stdout) == outcome


def test_match_prints_a_table():
    out = ttt("match", "win-block", "ai1", "-n", "10", "--seed", "1")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "10 games of tictactoe, alternating who starts"
    assert lines[1].split() == ["player", "wins", "ties", "losses"]
    assert [line.split()[0] for line in lines[2:]] == ["win-block", "ai1"]


def test_match_of_a_player_against_itself():
    out = ttt("match", "minimax", "minimax", "-n", "4", "--json")
    assert json.loads(out.stdout) == {"games": 4, "results": {"minimax": {"wins": 0, "ties": 4, "losses": 0}}}


@pytest.mark.parametrize("args, message", [(("match", "a", "b", "-n", "0"), "-n must be at least 1"), (("match", "nope", "random"), "unknown player 'nope'")])
def test_match_errors(args, message):
    out = ttt(*args)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


@pytest.mark.numba
def test_the_compiled_search_is_prepared_before_the_first_move_saying_so():
    out = ttt("play", "--game", "nine-board", "--as", "O", "--time", "0.1")
    assert out.returncode == 0, out.stderr
    assert "Preparing default's compiled search" in out.stdout
    assert out.stdout.index("Preparing") < out.stdout.index("The computer takes")
    match = ttt("match", "--game", "nine-board", "default", "random", "-n", "1", "--time", "0.05", "--json")
    assert json.loads(match.stdout)["games"] == 1  # stdout holds the JSON alone
    assert "Preparing default's compiled search" in match.stderr


def test_players_lists_a_big_board_games_players_and_says_which_engine_is_installed():
    out = ttt("players", "--game", "ultimate")
    assert out.returncode == 0, out.stderr
    names = [line.split()[0] for line in out.stdout.splitlines() if line and not line.startswith("Installed")]
    assert names == agents.names("ultimate")
    installed = "the compiled MCTS" if compiled.AVAILABLE else "default is alpha-beta"
    assert "Installed here: " in out.stdout and installed in out.stdout
    assert "Installed" not in ttt("players").stdout  # 3x3 players have no engines
