"""Games and players declare their names once, on their classes (``ttt.registry``): a game and a
player defined here, in a test module, are found by name, play a match and are listed by the
``ttt`` command; the players of any game play a game they have never seen; one message says
"unknown player"."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from ttt import agents, cli
from ttt.agents import Agent
from ttt.errors import InvalidActionError, InvalidBoardError
from ttt.games import game_names, get_game
from ttt.games.base import Game
from ttt.play import match

PACKAGE = Path(__file__).resolve().parent.parent / "ttt"


class Row(Game):
    """Three in a row on one row of five cells (a state: five characters of X, O and '.')."""

    name = "test-row"

    def initial(self) -> str:
        return "....."

    def to_move(self, state: str) -> str:
        return "X" if state.count("X") == state.count("O") else "O"

    def winner(self, state: str):
        return next((m for m in "XO" if m * 3 in state), None)

    def moves(self, state: str) -> list[int]:
        return [] if self.winner(state) else [i for i, c in enumerate(state) if c == "."]

    def play(self, state: str, move: int) -> str:
        if move not in self.moves(state):
            raise InvalidActionError(f"cell {move} cannot be played")
        return state[:move] + self.to_move(state) + state[move + 1:]

    def is_terminal(self, state: str) -> bool:
        return not self.moves(state)

    def utility(self, state: str) -> float:
        return {"X": 1, "O": -1, None: 0}[self.winner(state)]

    def order_moves(self, state: str, moves):
        return list(moves)

    def parse(self, text: str) -> str:
        if len(text) != 5 or set(text) - set("XO."):
            raise InvalidBoardError(f"{text!r} is not five cells of X, O and '.'")
        return text

    def format(self, state: str) -> str:
        return state

    def move_name(self, move: int) -> str:
        return str(move)

    def parse_move(self, state: str, text: str) -> int:
        self.play(state, int(text))
        return int(text)


class LeftMost(Agent):
    """Plays the leftmost free cell."""

    name = "test-leftmost"
    games = (Row.name,)

    def __call__(self, state: str) -> int:
        return self.legal_moves(state)[0]


def test_a_game_declared_in_a_test_module_is_found_by_its_name():
    assert Row.name in game_names() and isinstance(get_game(Row.name), Row)


def test_a_player_declared_in_a_test_module_plays_its_game_only():
    assert LeftMost.name in agents.names(Row.name) and LeftMost.name not in agents.names()
    assert agents.describe(Row.name)[LeftMost.name] == "Plays the leftmost free cell."
    with pytest.raises(ValueError, match=f"^player 'test-leftmost' plays test-row only, not tictactoe; choose one of: "
                                         f"{', '.join(agents.names())}$"):
        agents.make(LeftMost.name)


def test_the_players_of_any_game_play_a_new_one_and_the_3x3_players_do_not():
    names = agents.names(Row.name)
    assert {"random", "minimax", "alphabeta", LeftMost.name} <= set(names)
    assert not {"win-block", "ai1", "ai2", "rich-knight", "default", "mcts", "line-count"} & set(names)
    assert agents.make("minimax", game=Row.name)("XX.O.") == 2  # wins at once
    assert agents.make("alphabeta", game=Row.name)("XX.O.") == 2
    assert get_game(Row.name).solve(".....") == (0, 0)  # a tie with best play; the first best move


def test_a_player_declared_in_a_test_module_plays_a_match():
    game = get_game(Row.name)
    outcome = match(game, agents.make(LeftMost.name, game=Row.name), agents.make("minimax", game=Row.name),
                    games=4, names=(LeftMost.name, "minimax"))
    assert outcome.games == 4 and outcome.results["minimax"]["losses"] == 0
    assert sum(outcome.results[LeftMost.name].values()) == 4


def ttt(*argv: str) -> str:
    """Run a ``ttt`` subcommand in this process (where the classes above are declared); return what it printed."""
    out = io.StringIO()
    args = cli.build_parser().parse_args(argv)
    assert args.func(args, stdout=out) == 0
    return out.getvalue()


def test_the_ttt_command_plays_a_declared_game_between_declared_players():
    outcome = json.loads(ttt("match", "--game", Row.name, LeftMost.name, "random", "-n", "6", "--seed", "1", "--json"))
    assert outcome["games"] == 6 and set(outcome["results"]) == {LeftMost.name, "random"}
    listed = [line.split()[0] for line in ttt("players", "--game", Row.name).splitlines() if line]
    assert listed == agents.names(Row.name)


def test_a_name_is_taken_once():
    with pytest.raises(ValueError, match="two games are called 'test-row': "):
        class Another(Row):
            name = "test-row"
    with pytest.raises(ValueError, match="two players are called 'random': "):
        class MyRandom(LeftMost):
            name = "random"
    assert isinstance(get_game(Row.name), Row) and "random" in agents.names(Row.name)


def test_unknown_player_is_written_once_in_the_package():
    said = [f"{path.relative_to(PACKAGE)}:{k}" for path in sorted(PACKAGE.rglob("*.py"))
            for k, line in enumerate(path.read_text().splitlines(), 1) if "unknown player" in line.lower()]
    assert len(said) == 1, said
