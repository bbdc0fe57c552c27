"""ttt.tictactoe (the CS50 reference) against an independent oracle, on all 5,478 positions."""

from __future__ import annotations

import copy
import subprocess
import sys
import textwrap

import pytest

import oracle
from ttt import InvalidActionError, InvalidBoardError
from ttt import tictactoe as T
from ttt.games import classic

POSITIONS = oracle.all_positions()


def test_there_are_5478_reachable_positions_and_the_library_agrees():
    assert len(POSITIONS) == 5478
    assert set(classic.reachable_positions()) == {oracle.to_text(c) for c in POSITIONS}


def test_initial_state_is_empty_and_fresh():
    a, b = T.initial_state(), T.initial_state()
    assert a == [[None] * 3] * 3
    a[0][0] = T.X
    assert b[0][0] is T.EMPTY and a[1][0] is T.EMPTY


@pytest.mark.parametrize("cells", POSITIONS, ids=oracle.to_text)
def test_every_function_on_every_position(cells):
    board = oracle.to_lists(cells)
    before = copy.deepcopy(board)
    assert T.winner(board) == oracle.line_owner(cells)
    assert T.terminal(board) is oracle.over(cells)
    if oracle.over(cells):
        assert T.utility(board) == oracle.score(cells)
        assert T.minimax(board) is None
    else:
        assert T.player(board) == oracle.next_player(cells)
        assert T.actions(board) == oracle.free_actions(cells)
        move = T.minimax(board)
        assert move in oracle.free_actions(cells)
        assert oracle.game_value(oracle.after(cells, move)) == oracle.game_value(cells), "minimax chose a losing move"
        for action in oracle.free_actions(cells):
            new = T.result(board, action)
            assert new == oracle.to_lists(oracle.after(cells, action))
            assert all(new[i] is not board[i] for i in range(3)), "result shares a row with its input"
    assert board == before, "a function changed the board it was given"


def test_result_raises_on_every_taken_square_of_every_position():
    count = 0
    for cells in POSITIONS:
        if oracle.over(cells):
            continue
        board = oracle.to_lists(cells)
        for k, v in enumerate(cells):
            if v is not None:
                with pytest.raises(InvalidActionError, match=rf"taken by {v}"):
                    T.result(board, (k // 3, k % 3))
                count += 1
    assert count > 10_000


@pytest.mark.parametrize(
    "action, reason",
    [
        ((3, 0), "row 3 is off the board"),
        ((0, -1), "column -1 is off the board"),
        ((1,), "not a pair"),
        ((1, 1, 1), "not a pair"),
        (None, "not a pair"),
        (4, "not a pair"),
        ("ab", "must be a whole number"),
        ((1.0, 1), "must be a whole number"),
        ((True, 0), "must be a whole number"),
    ],
)
def test_result_raises_a_value_error_that_says_why(action, reason):
    board = T.initial_state()
    with pytest.raises(InvalidActionError, match=reason) as caught:
        T.result(board, action)
    assert isinstance(caught.value, ValueError)
    assert board == T.initial_state()


def test_result_after_a_win_raises_the_game_is_over():
    board = T.from_text("XXX/OO./...")
    with pytest.raises(InvalidActionError, match="the game is over: X has won"):
        T.result(board, (2, 2))


@pytest.mark.parametrize(
    "board, reason",
    [
        ("XO./...", "a board is a list of 3 rows, not str"),
        ([[None] * 3] * 2, "a board has 3 rows, this one has 2"),
        ([[None] * 3, [None] * 2, [None] * 3], "row 1 of the board has 2 squares"),
        ([[None] * 3, None, [None] * 3], "row 1 of the board is NoneType"),
        ([[None, "x", None], [None] * 3, [None] * 3], r"square \(0, 1\) holds 'x'"),
        ([[None, 0, None], [None] * 3, [None] * 3], r"square \(0, 1\) holds 0"),
        ([[None, [], None], [None] * 3, [None] * 3], r"square \(0, 1\) holds \[\]"),
    ],
)
def test_a_malformed_board_is_rejected_with_the_reason(board, reason):
    for function in (T.player, T.actions, T.winner, T.terminal, T.utility, T.minimax):
        with pytest.raises(InvalidBoardError, match=reason):
            function(board)


def test_utility_of_an_o_win_is_minus_one_not_the_seeds_typo():
    assert T.utility(T.from_text("OOO/XX./X..")) == -1
    assert T.utility(T.from_text("XXX/OO./...")) == 1


def test_minimax_wins_at_once_when_it_can():
    assert T.minimax(T.from_text("XX./OO./...")) == (0, 2)
    assert T.minimax(T.from_text("XX./OO./X..")) == (1, 2)


def test_importing_tictactoe_stays_light():
    code = "import sys, ttt.tictactoe; print(' '.join(sorted(sys.modules)))"
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
    heavy = {m for m in loaded if m.split(".")[0] in {"ipywidgets", "graphviz", "IPython", "jupyter_core", "tqdm", "matplotlib", "numpy", "nbformat"}}
    assert not heavy


def test_works_unchanged_as_the_tictactoe_module_of_a_cs50_runner(tmp_path):
    (tmp_path / "tictactoe.py").write_text(open(T.__file__).read())
    (tmp_path / "runner.py").write_text(
        textwrap.dedent(
            """
            import tictactoe as ttt
            assert ttt.__file__.endswith("runner_dir/tictactoe.py"), ttt.__file__
            board = ttt.initial_state()
            while not ttt.terminal(board):
                move = ttt.minimax(board)
                board = ttt.result(board, move)
            print("winner", ttt.winner(board), "utility", ttt.utility(board))
            """
        )
    )
    (tmp_path / "runner_dir").mkdir()
    (tmp_path / "tictactoe.py").rename(tmp_path / "runner_dir" / "tictactoe.py")
    (tmp_path / "runner.py").rename(tmp_path / "runner_dir" / "runner.py")
    out = subprocess.run([sys.executable, "runner.py"], cwd=tmp_path / "runner_dir", capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "winner None utility 0"
