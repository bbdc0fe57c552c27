"""Ultimate tic-tac-toe: rules on hand-drawn positions, heuristics, search, players, CLI."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from big_positions import X_TO_WIN_THE_GAME
from ttt import InvalidActionError, InvalidBoardError, agents, search
from ttt.games.bigboard import WIN_VALUE, BigState
from ttt.games.ultimate import NEAR_WIN, Ultimate, big_board, board_value, evaluate

GAME = Ultimate()
TTT = Path(sys.executable).with_name("ttt")

# X has won board 3 (middle left), which still has free cells; O to move on board 5.
X_WON_BOARD_3 = """
. . . | . . . | . . .
O . . | . X . | . . .
. . . | . . . | . . .
------+-------+------
X X X | . . . | . . .
. . . | . . . | . . .
. . . | . . . | O . .
------+-------+------
. . . | O . . | . . .
. . . | . . . | . . .
. . . | . . . | . . .
"""

# Board 4 (the centre) is full without a line: a dead square of the big board. O to move.
CENTRE_DEAD = """
. . . | . . . | . . .
. . . | . . . | . . .
. . . | . . . | . . .
------+-------+------
. . . | X O X | . . .
. . . | X O O | . . .
. . . | O X X | . . .
------+-------+------
. . . | . . . | . . .
. . . | . . . | . . .
. . . | . . . | . . .
"""


WON_X, WON_O = "XXXOO....", "OOOXX...."  # a board won by X, by O
DRAWN = ("XOXXOOOXX", "OXOOXXXOO")  # full without a line: 5 X 4 O, 4 X 5 O


def from_boards(boards: list[str], board=None) -> BigState:
    """Return the position with these nine small boards, read back from its picture."""
    return GAME.parse(GAME.format(BigState("".join(b.replace("/", "") for b in boards))), board=board)


def endgame(board_1: str, board_8: str, board=None) -> BigState:
    """Return a late position: X owns boards 0 and 4, O owns 2 and 6, 3, 5, 7 are dead, and
    only boards 1 and 8 are open (X takes the game with board 8, on the diagonal 0-4-8)."""
    return from_boards([WON_X, board_1, WON_O, DRAWN[0], WON_X, DRAWN[1], WON_O, DRAWN[0], board_8], board)


# --- rules ----------------------------------------------------------------------------------------


def test_the_first_move_may_go_anywhere_and_sends_the_opponent_on():
    state = GAME.initial()
    assert len(GAME.moves(state)) == 81 and GAME.to_move(state) == "X"
    after = GAME.play(state, (0, 8))
    assert after.sent_to == 8 and list(GAME.moves(after)) == [(8, c) for c in range(9)]


def test_winning_a_small_board_claims_it_and_closes_it():
    state = GAME.parse(X_WON_BOARD_3, board=5)
    assert big_board(state.squares) == "...X....."
    assert GAME.winner(state) is None and not GAME.is_terminal(state)
    with pytest.raises(InvalidBoardError, match="board 3 is closed .X has won it."):
        GAME.parse(X_WON_BOARD_3, board=3)


def test_sent_to_a_won_board_the_player_may_play_on_any_open_board():
    state = GAME.parse(X_WON_BOARD_3, board=5)
    after = GAME.play(state, (5, 3))  # cell 3 sends X to board 3, which X has won
    assert after.sent_to is None
    moves = GAME.moves(after)
    assert all(b != 3 for b, _ in moves)
    assert len(moves) == 81 - 8 - 6  # every free cell but board 3's six
    with pytest.raises(InvalidActionError, match="board 3 is closed: X has won it"):
        GAME.play(after, (3, 4))
    with pytest.raises(InvalidActionError, match="board 3 is closed"):
        GAME.parse_move(after, "3 4")
    assert "any open board" in GAME.format_numbered(after)


def test_sent_to_a_full_board_the_player_may_play_on_any_open_board():
    state = GAME.parse(CENTRE_DEAD, board=0)
    assert big_board(state.squares) == "....=...."
    after = GAME.play(state, (0, 4))  # cell 4 sends X to the dead centre board
    assert after.sent_to is None
    assert len(GAME.moves(after)) == 81 - 9 - 1
    with pytest.raises(InvalidActionError, match="cell 0 of board 4 is taken"):
        GAME.play(after, (4, 0))


def test_winning_the_last_cell_of_a_board_closes_it_as_won_not_dead():
    # X fills board 4's last free cell with a line: X claims it (it is not a dead '=')
    state = from_boards(["........."] * 4 + ["XOX/OXO/OX."] + ["........."] * 4, board=4)
    assert GAME.to_move(state) == "X"
    after = GAME.play(state, (4, 8))
    assert big_board(after.squares) == "....X...." and after.sent_to == 8


def test_three_claimed_boards_in_a_row_win_the_game():
    state = GAME.parse(X_TO_WIN_THE_GAME, board=2)
    assert GAME.to_move(state) == "X" and big_board(state.squares) == "XX......."
    won = GAME.play(state, (2, 2))
    assert GAME.winner(won) == "X" and GAME.is_terminal(won) and GAME.moves(won) == ()
    assert GAME.utility(won) == WIN_VALUE + won.squares.count(".")
    with pytest.raises(InvalidActionError, match="the game is over: X has won"):
        GAME.parse_move(won, "5 5")
    not_yet = GAME.play(state, (2, 5))
    assert GAME.winner(not_yet) is None


def test_a_line_through_a_dead_board_wins_nothing_and_no_moves_left_is_a_draw():
    # X owns boards 0 and 8, the centre is dead: the diagonal can never be X's
    every_board_closed = from_boards([WON_X, DRAWN[1], WON_O, DRAWN[1], DRAWN[0], DRAWN[0], WON_O, DRAWN[0], WON_X])
    assert big_board(every_board_closed.squares) == "X=O===O=X"
    assert GAME.is_terminal(every_board_closed) and GAME.winner(every_board_closed) is None
    assert GAME.utility(every_board_closed) == 0 and GAME.moves(every_board_closed) == ()
    with pytest.raises(InvalidActionError, match="no moves are left"):
        GAME.play(every_board_closed, (0, 8))


@pytest.mark.parametrize(
    "text, message",
    [
        ("5", "'5' is not two numbers"),
        ("5 x", "is not two numbers"),
        ("5 10", "cell 10 is out of range"),
        ("4 4", "wrong board: you must play on board 5"),
        ("5 6", "cell 6 of board 5 is taken by O"),
    ],
)
def test_typed_moves_are_validated_with_a_reason(text, message):
    with pytest.raises(InvalidActionError, match=message):
        GAME.parse_move(GAME.parse(X_WON_BOARD_3, board=5), text)


@pytest.mark.parametrize(
    "boards, message",
    [
        (["XXX/OOO/...", "X........"] + ["........."] * 7, "board 0 has three in a row for both X and O"),
        ([WON_X] * 3 + [WON_O] * 3 + ["........."] * 3, "cannot both have"),
        ([WON_X] * 3 + ["OO.......", "O........"] + ["........."] * 4,
         "X has three boards in a row but X did not move last"),
    ],
)
def test_impossible_positions_are_refused(boards, message):
    with pytest.raises(InvalidBoardError, match=message):
        from_boards(boards)


# --- heuristics -------------------------------------------------------------------------------------


def test_board_values_run_from_minus_one_to_one_won_boards_at_the_ends():
    assert board_value(WON_X) == 1 and board_value(WON_O) == -1 and board_value(DRAWN[0]) == 0
    assert board_value(".........") == 0
    assert 0 < board_value("....X....") < board_value("X...X....") <= 0.8


def test_evaluate_sees_a_win_of_the_game_in_one_move():
    state = GAME.parse(X_TO_WIN_THE_GAME, board=2)
    assert evaluate(state) == NEAR_WIN
    assert GAME.order_moves(state, GAME.moves(state))[0] == (2, 2)


def test_claimed_boards_count_more_than_open_ones():
    assert evaluate(GAME.parse(X_WON_BOARD_3, board=5)) > 0
    # boards 0, 1, 3, 5, 7; board 3's full row scores nothing, its other lines 10 + 5 + 10
    assert GAME.line_count_evaluate(GAME.parse(X_WON_BOARD_3, board=5)) == -10 + 20 + 25 - 15 - 15


def test_heuristic_values_stay_below_the_win_value_in_random_games():
    rng = random.Random(2)
    for _ in range(20):
        state = GAME.initial()
        while not GAME.is_terminal(state):
            assert abs(evaluate(state)) < WIN_VALUE and abs(GAME.line_count_evaluate(state)) < WIN_VALUE
            moves = GAME.moves(state)
            assert sorted(GAME.order_moves(state, moves)) == sorted(moves)
            state = GAME.play(state, rng.choice(moves))
        assert GAME.winner(state) is not None or abs(GAME.utility(state)) == 0


# --- search -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "board_1, board_8, board",
    [
        ("OX./XO./...", "XO./.X./O..", 8),  # O must block cell 8 of board 8
        ("OX./XO./...", "XO./.X./O..", None),
        ("OXO/XO./X..", "XO./.X./O..", 1),
        ("OX./XO./X.O", "X.O/OX./...", None),
    ],
)
def test_depth_limited_search_agrees_with_a_full_search_near_the_end(board_1, board_8, board):
    state = endgame(board_1, board_8, board)
    full = search.alphabeta(GAME, state, order=GAME.order_moves)
    assert full.value == search.alphabeta(GAME, state).value
    left = len(GAME.moves(BigState(state.squares, None)))
    for h in (GAME.evaluate, GAME.line_count_evaluate):
        assert search.depth_limited(GAME, state, depth=left, evaluate=h, order=GAME.order_moves).value == full.value
    quick = search.iterative_deepening(GAME, state, evaluate=GAME.evaluate, seconds=60, order=GAME.order_moves)
    assert quick.value == full.value
    if full.value:
        plies = state.squares.count(".") - (abs(full.value) - WIN_VALUE)
        shallow = search.depth_limited(GAME, state, depth=plies, evaluate=GAME.evaluate, order=GAME.order_moves)
        assert shallow.value == full.value


def test_mcts_finds_the_winning_move():
    result = search.mcts(GAME, GAME.parse(X_TO_WIN_THE_GAME, board=2), rng=random.Random(1), iterations=200)
    assert result.move == (2, 2) and result.value > 0.9


# --- players ------------------------------------------------------------------------------------------


def test_searchers_take_the_win_of_the_game():
    state = GAME.parse(X_TO_WIN_THE_GAME, board=2)
    for name, options in (("line-count", {}), ("default", {"seconds": 0.05}), ("mcts", {"iterations": 200})):
        assert agents.make(name, 0, game="ultimate", **options)(state) == (2, 2)


# --- the command line ---------------------------------------------------------------------------------


def ttt(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    command = [str(TTT)] if TTT.exists() else [sys.executable, "-m", "ttt.cli"]
    return subprocess.run(command + list(args), input=stdin, capture_output=True, text=True, timeout=180)


EVERY_MOVE = "".join(f"{b} {c}\n" for b in range(9) for c in range(9))


def test_play_validates_moves_and_ends_at_end_of_input():
    out = ttt("play", "--game", "ultimate", "--as", "O", "--ai", "line-count", "--seed", "4",
              stdin="hello\n9 1\n1 2 3\n")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Ultimate tic-tac-toe" in text and "claims that square of the big board" in text
    assert "The computer (line-count) plays X." in text
    assert "'hello' is not two numbers" in text and "board 9 is out of range" in text
    assert "'1 2 3' is not two numbers" in text
    assert text.rstrip().endswith("Game abandoned. Goodbye!")
    assert out.stderr == ""


def test_play_a_whole_game_with_the_time_option():
    out = ttt("play", "--game", "ultimate", "--as", "X", "--time", "0.02", "--seed", "5", stdin=EVERY_MOVE * 41)
    assert out.returncode == 0, out.stderr
    assert "The computer (default) plays O." in out.stdout
    assert "wrong board: you must play on board" in out.stdout
    assert "you win" in out.stdout or "the computer beat you" in out.stdout or "tie" in out.stdout
    assert "Game abandoned" not in out.stdout and "Traceback" not in out.stderr


def test_match_json_on_ultimate():
    import json

    out = ttt("match", "--game", "ultimate", "line-count", "random", "-n", "2", "--seed", "1", "--json")
    assert out.returncode == 0, out.stderr
    outcome = json.loads(out.stdout)
    assert outcome["games"] == 2 and sum(outcome["results"]["line-count"].values()) == 2
