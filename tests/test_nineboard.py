"""The CSC 242 write-up's nine-board game: rules on hand-drawn positions, heuristics, search, players, CLI."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from ttt import InvalidActionError, InvalidBoardError, agents, search
from ttt.games import get_game
from ttt.games.bigboard import WIN_VALUE, BigState, parse_squares, line_count_evaluate
from ttt.games.nineboard import NEAR_WIN, NineBoard, evaluate

GAME = NineBoard()
TTT = Path(sys.executable).with_name("ttt")

# Board 2 (top right) is full without a line (5 X, 4 O): O to move, sent to board 0 here.
BOARD_2_FULL = """
. . . | . . . | X O X
. . . | . . . | X O O
. . . | . . . | O X X
------+-------+------
. . . | . . . | . . .
. . . | . . . | . . .
. . . | . . . | . . .
------+-------+------
. . . | . . . | . . .
. . . | . . . | . . .
. . . | . . . | . . .
"""

# Board 4 (the centre) has only its centre free; O to move there fills it without a line.
CENTRE_ALMOST_FULL = """
O . . | . . . | . . .
. . . | . . . | . . .
. . . | . . . | . . .
------+-------+------
. . . | X O X | . . .
. . . | X . O | . . .
. . . | O X X | . . .
------+-------+------
. . . | . . . | . . .
. . . | . . . | . . .
. . . | . . . | . . .
"""

# X has two in a row on board 8 (bottom right); O, to move on board 5, must not play cell 8.
X_THREATENS_BOARD_8 = """
. . . | . . . | . . .
. . X | . . . | . . .
. . . | . . . | . . .
------+-------+------
. . . | . . . | . . O
. . . | . . . | . . .
. . . | . . . | . . .
------+-------+------
. . . | . . . | X X .
. . . | . . . | O . .
. . . | . . . | . . .
"""

# Full boards without a line, drawn patterns (5 X 4 O, and 4 X 5 O): boards 0, 2, 4, 6, 8 take
# the first, 1, 3, 5, 7 the second (41 X, 40 O). Near the end = a few of their cells blanked.
DRAWN = ("XOX/XOO/OXX", "OXO/OXX/XOO")


def near_end(blanks: dict[int, tuple[int, ...]], board=None) -> BigState:
    """Return the drawn boards with the given cells blanked, as the game reads it from a picture."""
    squares = list("".join(DRAWN[b % 2].replace("/", "") for b in range(9)))
    for b, cells in blanks.items():
        for c in cells:
            squares[9 * b + c] = "."
    return GAME.parse(GAME.format(BigState("".join(squares))), board=board)


def threat() -> BigState:
    """Return X_THREATENS_BOARD_8 with O to move on board 5."""
    return GAME.parse(X_THREATENS_BOARD_8, board=5)


def x_can_win() -> BigState:
    """Return the position after O sends X to board 8, where X wins with cell 2."""
    return GAME.play(threat(), (5, 8))


# --- rules ----------------------------------------------------------------------------------------


def test_the_first_move_may_go_anywhere_and_sends_the_opponent_on():
    state = GAME.initial()
    assert state == BigState("." * 81, None)
    assert GAME.to_move(state) == "X" and len(GAME.moves(state)) == 81
    after = GAME.play(state, (4, 7))
    assert after.sent_to == 7 and GAME.to_move(after) == "O"
    assert list(GAME.moves(after)) == [(7, c) for c in range(9)]
    assert after.squares[9 * 4 + 7] == "X"
    back_home = GAME.play(state, (4, 4))
    assert list(GAME.moves(back_home)) == [(4, c) for c in (0, 1, 2, 3, 5, 6, 7, 8)]


def test_pictures_read_row_by_row_into_boards_and_cells():
    squares = parse_squares(X_THREATENS_BOARD_8)
    assert squares[9 * 8 + 0] == squares[9 * 8 + 1] == "X"
    assert squares[9 * 8 + 3] == "O" and squares[9 * 5 + 2] == "O"
    assert GAME.format(BigState(squares)).split() == X_THREATENS_BOARD_8.split()


def test_sent_to_a_full_board_the_player_may_play_anywhere():
    state = GAME.parse(BOARD_2_FULL, board=0)
    assert GAME.to_move(state) == "O"
    after = GAME.play(state, (0, 2))  # cell 2 sends X to board 2, which is full
    assert after.sent_to is None
    assert len(GAME.moves(after)) == 81 - 9 - 1
    assert all(b != 2 for b, _ in GAME.moves(after))
    assert GAME.play(after, (7, 3)).sent_to == 3
    assert "any open board" in GAME.format_numbered(after)


def test_filling_the_board_you_play_on_sends_the_opponent_anywhere():
    state = GAME.parse(CENTRE_ALMOST_FULL, board=4)
    assert GAME.moves(state) == ((4, 4),)
    after = GAME.play(state, (4, 4))
    assert after.sent_to is None and GAME.winner(after) is None
    assert len(GAME.moves(after)) == 81 - 10


def test_a_full_board_cannot_be_the_board_a_player_is_sent_to():
    with pytest.raises(InvalidBoardError, match="board 2 is closed .*full.* plays anywhere"):
        GAME.parse(BOARD_2_FULL, board=2)


def test_three_in_a_row_on_any_small_board_wins_at_once():
    state = x_can_win()
    assert GAME.to_move(state) == "X" and state.sent_to == 8
    won = GAME.play(state, (8, 2))
    assert GAME.winner(won) == "X" and GAME.is_terminal(won)
    assert GAME.moves(won) == ()
    assert GAME.utility(won) == WIN_VALUE + 81 - 7  # quicker wins are worth more
    with pytest.raises(InvalidActionError, match="the game is over: X has won"):
        GAME.play(won, (2, 0))


def test_no_moves_left_is_a_draw():
    state = near_end({8: (8,)}, board=8)
    assert GAME.to_move(state) == "X" and GAME.moves(state) == ((8, 8),)
    end = GAME.play(state, (8, 8))
    assert GAME.is_terminal(end) and GAME.winner(end) is None and GAME.utility(end) == 0


@pytest.mark.parametrize(
    "text, message",
    [
        ("4", "'4' is not two numbers"),
        ("four seven", "is not two numbers"),
        ("4 7 1", "is not two numbers"),
        ("9 0", "board 9 is out of range"),
        ("0 -1", "cell -1 is out of range"),
        ("0 0", "wrong board: you must play on board 5"),
        ("5 2", "cell 2 of board 5 is taken by O"),
    ],
)
def test_typed_moves_are_validated_with_a_reason(text, message):
    with pytest.raises(InvalidActionError, match=message):
        GAME.parse_move(threat(), text)


def test_typed_moves_and_move_names_round_trip():
    state = threat()
    for move in GAME.moves(state):
        assert GAME.parse_move(state, GAME.move_name(move)) == move
    assert GAME.parse_move(state, " 5, 8 ") == (5, 8)


@pytest.mark.parametrize("move", [(5,), (5, 1.0), "5 1", (True, 1), (5, 9), None])
def test_play_refuses_malformed_moves(move):
    with pytest.raises(InvalidActionError):
        GAME.play(threat(), move)


@pytest.mark.parametrize(
    "picture, message",
    [
        ("X" * 81, "81 X and 0 O"),
        ("." * 80, "has 80 squares"),
        ("." * 80 + "0", "zero"),
        ("." * 80 + "?", "'?' is not a square"),
        (GAME.format(BigState("XXX......" + "OOO......" + "." * 63)), "boards 0 and 1 both have three in a row"),
        (GAME.format(BigState("OOO......" + "XX.XX...." + "." * 63)), "O has three in a row on board 0 but O did not"),
    ],
)
def test_impossible_pictures_are_refused(picture, message):
    with pytest.raises(InvalidBoardError, match=message):
        GAME.parse(picture)


# --- heuristics ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "small, score",
    [
        ("....X....", 20),  # the centre is on four lines
        ("X........", 15),  # a corner on three
        (".X.......", 10),  # an edge on two
        ("XX.......", 10 + 5 + 5 + 5),  # a row of two, and one mark on each of three other lines
        ("XO.......", 5 + 5 - 5),  # row 0 is blocked; X keeps column 0 and a diagonal, O column 1
        ("OX.......", 5 - 5 - 5),  # X keeps column 1; O keeps column 0 and a diagonal
    ],
)
def test_line_count_line_scores_of_one_board(small, score):
    assert line_count_evaluate(BigState(small + "." * 72)) == score
    assert line_count_evaluate(BigState("." * 72 + small)) == score  # any board counts the same


def test_line_count_sums_the_boards_x_minus_o():
    board_0 = 10  # X on cell 5: row 1 and column 2
    board_5 = -15  # O on corner 2: row 0, column 2, a diagonal
    board_8 = 10 + 5 + 5 - 5  # X X . / O . .: X's row of two, diagonal, column 1; O's row 1
    assert line_count_evaluate(threat()) == board_0 + board_5 + board_8 == 10


def test_evaluate_sees_an_immediate_win():
    assert evaluate(x_can_win()) == NEAR_WIN
    assert abs(evaluate(threat())) < NEAR_WIN  # O to move on board 5 can still avoid cell 8


def test_heuristic_values_stay_below_the_win_value_in_random_games():
    rng = random.Random(1)
    for _ in range(30):
        state = GAME.initial()
        while not GAME.is_terminal(state):
            for h in (evaluate, line_count_evaluate):
                assert abs(h(state)) < WIN_VALUE
            state = GAME.play(state, rng.choice(GAME.moves(state)))
        assert abs(GAME.utility(state)) >= WIN_VALUE or GAME.winner(state) is None


def test_order_moves_tries_wins_first_and_gifts_last():
    state = threat()  # O to move on board 5
    ordered = GAME.order_moves(state, GAME.moves(state))
    assert sorted(ordered) == sorted(GAME.moves(state))
    assert ordered[-1] == (5, 8)  # sends X to board 8, where X wins
    assert GAME.order_moves(x_can_win(), GAME.moves(x_can_win()))[0] == (8, 2)


# --- search -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "blanks, board",
    [
        ({8: (0, 4, 8), 7: (0,)}, None),
        ({3: (0, 2, 4), 6: (0, 3, 6)}, None),
        ({0: (4,), 4: (0, 8), 8: (4,), 2: (2, 6)}, 4),
        ({1: (1, 4, 7), 5: (3, 5), 7: (0, 4)}, 5),
        ({0: (0, 1, 2), 1: (0, 1, 2), 2: (0, 1)}, None),
    ],
)
def test_depth_limited_search_agrees_with_a_full_search_near_the_end(blanks, board):
    state = near_end(blanks, board)
    full = search.alphabeta(GAME, state)
    left = state.squares.count(".")
    for h in (GAME.evaluate, GAME.line_count_evaluate):
        deep = search.depth_limited(GAME, state, depth=left, evaluate=h, order=GAME.order_moves)
        assert deep.value == full.value
    quick = search.iterative_deepening(GAME, state, evaluate=GAME.evaluate, seconds=60, order=GAME.order_moves)
    assert quick.value == full.value
    if full.value:  # a forced win: found by a search just deep enough to see its end
        plies = left - (abs(full.value) - WIN_VALUE)
        shallow = search.depth_limited(GAME, state, depth=plies, evaluate=GAME.evaluate, order=GAME.order_moves)
        assert shallow.value == full.value


def test_some_positions_near_the_end_are_forced_wins():
    values = {search.alphabeta(GAME, near_end(b, board)).value
              for b, board in [({0: (0, 1, 2), 1: (0, 1, 2), 2: (0, 1)}, None), ({8: (0, 4, 8), 7: (0,)}, None)]}
    assert any(abs(v) >= WIN_VALUE for v in values)


def test_depth_4_from_the_opening_node_counts():
    state = GAME.initial()
    seed = search.depth_limited(GAME, state, depth=4, evaluate=GAME.line_count_evaluate, order=GAME.order_moves)
    unordered = search.depth_limited(GAME, state, depth=4, evaluate=GAME.line_count_evaluate)
    assert seed.value == unordered.value == 10
    assert seed.nodes == 1744 and unordered.nodes == 2260


def test_depth_limited_trace_records_heuristic_leaves():
    from ttt.trace import record

    trace = record(GAME, threat(), algorithm="depth-limited", depth=2)
    leaves = [n for n in trace.nodes.values() if n.leaf == "estimate"]
    assert leaves and all(n.value == evaluate(n.state) for n in leaves)


def test_mcts_takes_a_winning_move_and_counts_its_playouts():
    state = x_can_win()
    result = search.mcts(GAME, state, rng=random.Random(0), iterations=300)
    assert result.move == (8, 2) and result.nodes == 300 and result.value > 0.9
    with pytest.raises(ValueError, match="budget"):
        search.mcts(GAME, state, rng=random.Random(0))


# --- players ------------------------------------------------------------------------------------------


def test_searchers_win_at_once_and_do_not_send_the_opponent_to_a_win():
    for name, options in (("line-count", {}), ("default", {"seconds": 0.05})):
        assert agents.make(name, 0, game="nine-board", **options)(x_can_win()) == (8, 2)
        for seed in range(3):
            assert agents.make(name, seed, game="nine-board", **options)(threat())[1] != 8


def test_the_default_player_beats_random_play():
    game = get_game("nine-board")
    from ttt.cli import match

    outcome = match(game, agents.make("default", 1, game="nine-board", seconds=0.02),
                    agents.make("random", 2, game="nine-board"), games=4, names=("default", "random"))
    assert outcome.results["default"]["wins"] == 4


# --- the command line ---------------------------------------------------------------------------------


def ttt(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    command = [str(TTT)] if TTT.exists() else [sys.executable, "-m", "ttt.cli"]
    return subprocess.run(command + list(args), input=stdin, capture_output=True, text=True, timeout=120)


EVERY_MOVE = "".join(f"{b} {c}\n" for b in range(9) for c in range(9))


def test_play_validates_moves_and_ends_at_end_of_input():
    out = ttt("play", "--game", "nine-board", "--as", "X", "--ai", "line-count", "--seed", "1",
              stdin="4\n9 9\nx y\n4 4\n")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Nine-board tic-tac-toe" in text and "like 4 7" in text
    assert "'4' is not two numbers" in text
    assert "board 9 is out of range" in text
    assert "'x y' is not two numbers" in text
    assert "O must play on board 4." in text
    assert "The computer takes 4 " in text
    assert text.rstrip().endswith("Game abandoned. Goodbye!")
    assert out.stderr == ""


def test_play_a_whole_game_with_the_time_option():
    # The script offers every square in turn, many times over: the wrong ones are refused with
    # a reason, and the first legal one is played.
    out = ttt("play", "--game", "nine-board", "--as", "O", "--time", "0.05", "--seed", "2", stdin=EVERY_MOVE * 41)
    assert out.returncode == 0, out.stderr
    assert "The computer (default) plays X." in out.stdout
    assert "wrong board: you must play on board" in out.stdout
    assert "you win" in out.stdout or "the computer beat you" in out.stdout or "tie" in out.stdout
    assert "Game abandoned" not in out.stdout and "Traceback" not in out.stderr


def test_match_runs_on_the_big_board():
    out = ttt("match", "--game", "nine-board", "default", "random", "-n", "2", "--time", "0.02", "--seed", "3")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "2 games of nine-board, alternating who starts"
    bad = ttt("match", "--game", "nine-board", "default", "random", "-n", "2", "--time", "0")
    assert bad.returncode == 2 and "--time must be a positive, finite number of seconds" in bad.stderr
    endless = ttt("match", "--game", "nine-board", "default", "random", "-n", "2", "--time", "inf")
    assert endless.returncode == 2 and "--time must be a positive, finite number of seconds, not inf" in endless.stderr
