"""Tests for grader.checks: each check passes the reference and the lessons' solutions, and fails
on a planted bug with a message that shows the first failing case."""

from __future__ import annotations

import copy
import functools
import re
import sys
from pathlib import Path

import pytest

import ttt.tictactoe as ref
from grader import checks
from grader.checks import CheckFailed
from lesson_code import LESSONS, solution_namespace
from ttt.games import bigboard, classic

sys.path.insert(0, str(Path(__file__).resolve().parent / "data"))
import naive_tictactoe as naive  # noqa: E402


def lesson(name: str, **kwargs) -> dict:
    return solution_namespace(name, **kwargs)


@functools.lru_cache(maxsize=None)
def solutions(name: str) -> dict:
    return lesson(name)


L1, L2, L3, L4, L5, L6 = LESSONS


def failure(check, function, **kwargs) -> str:
    """Return the message of the CheckFailed that `check(function)` raises."""
    with pytest.raises(CheckFailed) as raised:
        check(function, **kwargs)
    return str(raised.value)


# --- a fast, independent minimax to stand for a student's (memoized on the board's text) -------


@functools.lru_cache(maxsize=None)
def _value(text: str) -> int:
    board = naive_board(text)
    if naive.terminal(board):
        return naive.utility(board)
    values = [_value(ref.to_text(naive.result(board, a))) for a in naive.actions(board)]
    return max(values) if naive.player(board) == "X" else min(values)


def naive_board(text: str) -> list:
    return [[None if c == "." else c for c in text[r : r + 3]] for r in (0, 3, 6)]


def fast_minimax(board):
    if naive.terminal(board):
        return None
    pick = max if naive.player(board) == "X" else min
    return pick(sorted(naive.actions(board)), key=lambda a: _value(ref.to_text(naive.result(board, a))))


# --- every check passes correct functions --------------------------------------------------------

REFERENCE_CASES = [
    (checks.check_player, ref.player),
    (checks.check_actions, ref.actions),
    (checks.check_result, ref.result),
    (checks.check_winner, ref.winner),
    (checks.check_terminal, ref.terminal),
    (checks.check_utility, ref.utility),
    (checks.check_minimax, ref.minimax),
    (checks.check_rk_board, checks.rk_board),
    (checks.check_line_score, checks.line_score),
    (checks.check_evaluate, bigboard.line_count_evaluate),
]


@pytest.mark.parametrize("check, function", REFERENCE_CASES, ids=lambda x: getattr(x, "__name__", ""))
def test_checks_pass_the_reference(check, function, capsys):
    with checks.reference_allowed():
        summary = check(function)
    assert "correct on" in summary
    assert capsys.readouterr().out == f"hidden tests: {summary}\n"  # labelled where it shows, in the notebook


@pytest.mark.parametrize("name", ["player", "actions", "result", "winner", "terminal", "utility"])
def test_checks_pass_a_naive_cs50_solution(name, capsys):
    getattr(checks, f"check_{name}")(getattr(naive, name))
    assert f"{name}: correct on all" in capsys.readouterr().out


@pytest.mark.parametrize(
    "lesson_name, check_name, function",
    [
        (L1, "check_player", "player"),
        (L1, "check_actions", "actions"),
        (L1, "check_result", "result"),
        (L2, "check_winner", "winner"),
        (L2, "check_terminal", "terminal"),
        (L2, "check_utility", "utility"),
        (L2, "check_rk_board", "rk_board"),
        (L2, "check_poss_win", "poss_win"),
        (L3, "check_win_block", "win_block"),
        (L5, "check_alphabeta", "alphabeta"),
        (L5, "check_alphabeta_calls", "alphabeta"),
        (L6, "check_line_score", "line_score"),
        (L6, "check_evaluate", "evaluate"),
        (L6, "check_depth_limited", "depth_limited_move"),
    ],
)
def test_checks_pass_the_lessons_solutions(lesson_name, check_name, function, capsys):
    getattr(checks, check_name)(solutions(lesson_name)[function])
    assert capsys.readouterr().out.strip()


def test_minimax_check_accepts_any_optimal_move_and_reports_the_plan(capsys):
    summary = checks.check_minimax(fast_minimax)
    assert summary == "minimax: correct on all 5,478 positions: an optimal move on the 4,520 where the game goes on, " \
                      "None on the 958 where it is over."
    assert capsys.readouterr().out == "hidden tests: " + summary + "\n"


def test_search_plan_is_fixed_and_holds_every_position():
    plan = checks.search_plan()
    assert plan is checks.search_plan() and len(plan) == len(set(plan)) == 5_478
    assert set(plan) == set(classic.reachable_positions())
    assert plan[-1] == classic.EMPTY_BOARD and plan[0].count(".") == 0  # latest first, the empty board last


def twin_checked_last() -> str:
    """Return a position with three or four marks, not over, that has a losing move, and is not the first of
    its symmetric family in BFS order (a check that took one position of each family would skip it)."""
    first: dict = {}
    for text in classic.reachable_positions():
        if 3 <= 9 - text.count(".") <= 4 and not classic.is_terminal(text):
            family = classic.canonical(text)
            if family in first and set(classic.moves(text)) - set(classic.optimal_moves(text)):
                return text
            first.setdefault(family, text)
    raise AssertionError("no such position")


def test_a_minimax_wrong_on_one_position_of_a_symmetric_family_fails():
    twin = twin_checked_last()
    losing = min(set(classic.moves(twin)) - set(classic.optimal_moves(twin)))

    def minimax(board):  # right on every twin of `twin`, wrong on it alone
        return divmod(losing, 3) if ref.to_text(board) == twin else fast_minimax(board)

    message = failure(checks.check_minimax, minimax)
    assert "is not an optimal move" in message and repr(ref.from_text(twin)) in message


CS50_FILE_WRONG_ON_ONE_TWIN = """
import functools
from naive_tictactoe import X, O, EMPTY, initial_state, player, actions, result, winner, terminal, utility


@functools.lru_cache(maxsize=None)
def _value(text):
    board = [[None if c == "." else c for c in text[r:r + 3]] for r in (0, 3, 6)]
    if terminal(board):
        return utility(board)
    values = [_value(_text(result(board, a))) for a in actions(board)]
    return max(values) if player(board) == X else min(values)


def _text(board):
    return "".join(c or "." for row in board for c in row)


def minimax(board):
    if terminal(board):
        return None
    if _text(board) == TWIN:
        return LOSING
    pick = max if player(board) == X else min
    return pick(sorted(actions(board)), key=lambda a: _value(_text(result(board, a))))
"""


def test_a_cs50_file_wrong_on_one_position_of_a_symmetric_family_fails_minimax(tmp_path):
    from grader.cs50file import check_file

    twin = twin_checked_last()
    losing = min(set(classic.moves(twin)) - set(classic.optimal_moves(twin)))
    (tmp_path / "naive_tictactoe.py").write_text((Path(__file__).parent / "data" / "naive_tictactoe.py").read_text())
    path = tmp_path / "tictactoe.py"
    path.write_text(CS50_FILE_WRONG_ON_ONE_TWIN + f"\nTWIN = {twin!r}\nLOSING = {divmod(losing, 3)!r}\n")
    [found] = check_file(path, functions=("minimax",), jobs=1)
    assert not found.passed and "is not an optimal move" in found.message, found.message


def test_a_minimax_wrong_only_on_the_empty_board_or_one_move_in_fails():
    def empty_board_none(board):
        return None if board == ref.initial_state() else fast_minimax(board)

    message = failure(checks.check_minimax, empty_board_none)
    assert message.startswith("minimax(board): should return an action (i, j) on an empty square")
    assert "(X to move)" in message and "as a list: [[None, None, None], [None, None, None], [None, None, None]]" in message

    def first_square_one_move_in(board):
        if sum(square is not None for row in board for square in row) == 1:
            return sorted(naive.actions(board))[0]
        return fast_minimax(board)

    message = failure(checks.check_minimax, first_square_one_move_in)
    assert "is not an optimal move for O" in message and "(O to move)" in message


def test_a_minimax_that_plays_on_a_finished_board_is_told_to_return_none():
    def minimax(board):  # never asks whether the game is over; the given result refuses the move
        moves = sorted(naive.actions(board))
        return ref.result(board, moves[0]) and moves[0] if moves else None

    message = failure(checks.check_minimax, minimax)
    assert "the game is over, so minimax should return None; it raised ValueError: the game is over: " in message
    assert "InvalidActionError" not in message and not re.search(r"[XO.]{3}/[XO.]{3}/[XO.]{3}", message)


def test_counts_behind_the_documented_bounds():
    assert classic.tree_size(classic.EMPTY_BOARD) == 549_946
    assert checks.minimax_calls() == 92_076
    assert checks.minimax_positions() == 92_088 and len(checks.pruning_positions()) == 12
    assert int(checks.ALPHABETA_CALLS_FRACTION * checks.minimax_positions()) == 36_835


# --- planted bugs: the first failing case, drawn -------------------------------------------------


def test_player_bug_shows_the_board_expected_and_returned():
    def player(board):
        xs = sum(row.count("X") for row in board)
        return "O" if xs > 1 else "X"  # wrong once X has two marks

    message = failure(checks.check_player, player)
    assert message.startswith("player(board): wrong player")
    assert "expected: 'O'" in message and "returned: 'X'\n" in message and "(str)" not in message
    assert "This board has 1 X and 0 O" in message
    assert "as a list: [[" in message and " | " in message and "O to move" in message
    assert "first failing case" in message and "Traceback" not in message


def test_actions_returning_a_list_is_told_to_return_a_set():
    message = failure(checks.check_actions, lambda board: [(i, j) for i in range(3) for j in range(3) if board[i][j] is None])
    assert "should return a set, not a list of 9 items" in message
    assert "wrap it as set(...)" in message


def test_actions_with_a_missing_square():
    message = failure(checks.check_actions, lambda board: {(i, j) for i in range(3) for j in range(3) if board[i][j] is None and (i, j) != (2, 2)})
    assert "wrong set of actions" in message and "missing: (2, 2)" in message


def test_result_that_changes_its_input():
    def result(board, action):
        i, j = action
        if board[i][j] is not None:
            raise ValueError("taken")
        board[i][j] = naive.player(board)
        return board

    message = failure(checks.check_result, result)
    assert "result changed the board it was given" in message


def careless_result(*, range_check: bool, error: type):
    """Return a result that copies the board but checks only what it is told, raising `error`."""

    def result(board, action):
        i, j = action
        if (range_check and not (0 <= i <= 2 and 0 <= j <= 2)) or board[i][j] is not None:
            raise error("taken")
        new = copy.deepcopy(board)
        new[i][j] = naive.player(board)
        return new

    return result


def test_result_without_a_range_check_is_caught_on_negative_indexes():
    message = failure(checks.check_result, careless_result(range_check=False, error=ValueError))
    assert message.startswith("result: 2 kinds of failure, one board each")
    assert "result(board, (-1, 0)): returned a board instead of raising an exception: it plays off the board" in message
    assert "board[-1] is the last row" in message
    assert "result(board, (3, 0)): raised IndexError (list index out of range); an invalid action should raise ValueError" in message


def test_a_cs50_file_may_raise_any_exception_for_an_invalid_action(capsys):
    with checks.cs50_specification():
        for error in (Exception, IndexError, KeyError):
            assert checks.check_result(careless_result(range_check=True, error=error)).endswith("invalid ones raise an exception.")
    assert "an invalid action should raise ValueError" in failure(checks.check_result, careless_result(range_check=True, error=Exception))


def test_result_s_taken_squares_are_tried_for_each_mark_on_every_square_many_times():
    from collections import Counter

    from grader.checks.rules import _invalid_cases

    boards = [b for b in classic.reachable_positions() if classic.moves(b)]
    tried = Counter((case[0], text[case[0][0] * 3 + case[0][1]]) for turn, text in enumerate(boards)
                    for case in _invalid_cases(text, turn, boards) if case[2] == "a taken square")
    assert sorted(tried) == sorted(((i, j), mark) for i in range(3) for j in range(3) for mark in "XO")
    assert min(tried.values()) >= 200
    positions = {text for turn, text in enumerate(boards)
                 if any(case[2] == "a taken square" for case in _invalid_cases(text, turn, boards))}
    assert positions == {b for b in boards if b != classic.EMPTY_BOARD}  # every position with a taken square


@pytest.mark.parametrize("square, mark", [((2, 2), "O"), ((0, 1), "X"), ((1, 1), "O")])
def test_result_that_overwrites_one_mark_on_one_square_is_caught(square, mark):
    def result(board, action):
        i, j = action
        if board[i][j] is not None and not ((i, j) == square and board[i][j] == mark):
            raise ValueError("taken")
        new = copy.deepcopy(board)
        new[i][j] = naive.player(board)
        return new

    assert f"result(board, {square}): returned a board instead of raising an exception: it overwrites a taken square" \
        in failure(checks.check_result, result)


def test_the_reference_table_of_result_is_play_s():
    from grader.checks.student import _reference_table

    table = _reference_table("result")
    for text in classic.reachable_positions():
        for square in range(9):
            try:
                expected = classic.play(text, square)
            except ValueError:
                expected = None
            assert table[text, square] == expected, (text, square)


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit, type("GameOver", (BaseException,), {})])
def test_a_base_exception_that_is_not_an_exception_gets_a_sentence(error):
    with checks.cs50_specification():
        message = failure(checks.check_result, careless_result(range_check=True, error=error))
    assert message.startswith(f"result(board, (-1, 0)): raised {error.__name__}: taken. {error.__name__} is not an Exception: ")
    assert "Raise an Exception instead" in message and "as a list: [[" in message


def test_each_kind_of_failure_is_listed_with_one_board():
    def result(board, action):  # never checks the square, plays on the board it is given
        i, j = action
        board[i][j] = naive.player(board)
        return board

    message = failure(checks.check_result, result)
    assert message.startswith("result: 4 kinds of failure, one board each (")
    for kind in ("1. result(board, (0, 0)): result changed the board it was given.",
                 "2. result(board, (-1, 0)): returned a board instead of raising an exception: it plays off the board",
                 "3. result(board, (3, 0)): raised IndexError (list index out of range); an invalid action should raise ValueError",
                 "4. result(board, (0, 0)): returned a board instead of raising an exception: it overwrites a taken square"):
        assert kind in message, message
    assert message.count("as a list: [[") == 4


def test_result_raising_the_wrong_exception():
    message = failure(checks.check_result, careless_result(range_check=True, error=Exception))
    assert "raised Exception (taken); an invalid action should raise ValueError" in message


def test_student_exception_shows_type_message_and_line():
    def winner(board):
        return board[3][0]  # IndexError

    message = failure(checks.check_winner, winner)
    assert message.startswith("winner(board): raised IndexError: list index out of range")
    assert "in winner, line" in message and "return board[3][0]" in message


def test_terminal_must_return_a_bool():
    message = failure(checks.check_terminal, lambda board: None if naive.winner(board) is None and any(None in r for r in board) else True)
    assert "should return True or False (Python's bool), not None\n" in message


def test_numpy_bools_are_named_as_numpy_s_and_pass_for_a_cs50_file(capsys):
    import numpy as np

    def terminal(board):
        return np.bool_(naive.terminal(board))

    message = failure(checks.check_terminal, terminal)
    assert "should return True or False (Python's bool), not numpy.bool" in message
    assert "returned: np.False_ (numpy.bool)" in message and "(bool)" not in message
    with checks.cs50_specification():
        assert checks.check_terminal(terminal) == "terminal: correct on all 5,478 positions."


def test_initial_state_is_graded(capsys):
    with checks.reference_allowed():
        assert checks.check_initial_state(ref.initial_state) == "initial_state: correct on the empty board."
    assert "one and the same list" in failure(checks.check_initial_state, lambda: [[None] * 3] * 3)
    message = failure(checks.check_initial_state, lambda: [[" "] * 3 for _ in range(3)])
    assert message.startswith("initial_state(): should return the empty board") and "returned: [[' ', ' ', ' ']" in message
    shared = ref.initial_state()
    assert "returned the same list twice" in failure(checks.check_initial_state, lambda: shared)


def test_utility_with_cs50_typo():
    message = failure(checks.check_utility, lambda board: 0 if naive.winner(board) is None else 1)
    assert "utility(board): wrong utility" in message and "expected: -1" in message and "a typo" in message


def test_rk_board_and_poss_win_bugs():
    assert "wrong Rich & Knight board" in failure(checks.check_rk_board, lambda board: [0] + [2] * 9)
    ns = lesson(L2, edit=lambda src: src.replace("target = 18 if p == X else 50", "target = 18"))
    message = failure(checks.check_poss_win, ns["poss_win"])
    assert message.startswith("poss_win(B, 'O') with B = [0, ") and "O cannot win with one move here" in message


def test_win_block_that_never_blocks():
    ns = lesson(L3, edit=lambda src: src.replace("for mark in (me, them):", "for mark in (me,):"))
    message = failure(checks.check_win_block, ns["win_block"])
    assert "must block the opponent's line" in message


def test_minimax_with_csc242_max_of_max_bug():
    ns = lesson(L4, edit=lambda src: src.replace("key=lambda action: min_value(", "key=lambda action: max_value("))
    message = failure(checks.check_minimax, ns["minimax"])
    assert "is not an optimal move for X" in message
    assert "with best play" in message


def test_minimax_must_return_none_when_the_game_is_over():
    message = failure(checks.check_minimax, lambda board: (0, 0) if naive.terminal(board) else fast_minimax(board))
    assert "the game is over, so there is no move to make" in message and "expected: None" in message


def test_alphabeta_cutting_off_only_on_strict_inequality_fails_the_node_bound(capsys):
    ns = lesson(L5, edit=lambda src: src.replace("if v >= beta:", "if v > beta:").replace("if v <= alpha:", "if v < alpha:"))
    message = failure(checks.check_alphabeta_calls, ns["alphabeta"])
    assert "prunes too little" in message and "at most 36,835 nodes in all" in message


def test_alphabeta_calls_of_the_solution_are_reported(capsys):
    checks.check_alphabeta_calls(solutions(L5)["alphabeta"])
    out = capsys.readouterr().out
    assert "alphabeta: 13,643 nodes visited over 12 positions, 14.8%" in out


def test_alphabeta_that_examines_no_position_through_the_given_functions_is_refused():
    namespace = {"result": ref.result, "fast_minimax": fast_minimax}
    exec("def alphabeta(board):\n    return fast_minimax(board)", namespace)
    message = failure(checks.check_alphabeta_calls, namespace["alphabeta"])
    assert "your alphabeta examined 0 positions, fewer than any search that proves the value can" in message
    assert "there is none of player, actions, result" in failure(checks.check_alphabeta_calls, fast_minimax)


def test_lesson_6_bugs():
    ns = lesson(L6, edit=lambda src: src.replace("score += 10", "score += 15"))
    assert "wrong score for X" in failure(checks.check_line_score, ns["line_score"])
    checks.check_evaluate(ns["evaluate"])  # the check puts the reference line_score in place
    ns = lesson(L6, edit=lambda src: src.replace('return sum(line_score(state.small(b), "X") - line_score(state.small(b), "O") for b in range(9))', 'return sum(line_score(state.small(b), "X") for b in range(9))'))
    assert "evaluate(state): wrong estimate" in failure(checks.check_evaluate, ns["evaluate"])
    ns = lesson(L6, edit=lambda src: src.replace("if depth == 0:\n        return evaluate(state)", "if depth == 0:\n        return 0"))
    message = failure(checks.check_depth_limited, ns["depth_limited_move"])
    assert "is not the best move looking" in message and "as a state: BigState(" in message


# --- the reference solution is off limits -------------------------------------------------------


def test_the_reference_itself_is_refused():
    assert "is ttt.tictactoe.minimax, the reference solution" in failure(checks.check_minimax, ref.minimax)


def test_calling_the_reference_through_the_module_is_caught():
    import ttt.tictactoe

    def minimax(board):
        return ttt.tictactoe.minimax(board)

    assert "uses ttt.tictactoe.minimax" in failure(checks.check_minimax, minimax)


def test_importing_the_reference_inside_the_function_is_caught():
    def minimax(board):
        from ttt.games.classic import solve

        text = "".join("." if s is None else s for row in board for s in row)
        move = solve(text)[1]
        return None if move is None else divmod(move, 3)

    assert "uses ttt.games.classic.solve" in failure(checks.check_minimax, minimax)


def test_a_registered_player_and_a_default_argument_alias_are_caught():
    from ttt import agents

    def via_agents(board):
        return agents.cs50("minimax")(board) if not naive.terminal(board) else None

    assert "uses ttt.agents" in failure(checks.check_minimax, via_agents)

    def via_default(board, _m=ref.minimax):
        return _m(board)

    assert "uses ttt.tictactoe.minimax" in failure(checks.check_minimax, via_default)


def test_a_student_except_clause_cannot_hide_the_reference():
    import ttt.tictactoe

    def player(board):
        try:
            return ttt.tictactoe.player(board)
        except Exception:
            return "X"

    assert "uses ttt.tictactoe.player" in failure(checks.check_player, player)


def test_reference_functions_work_again_after_a_check():
    import ttt.tictactoe

    def minimax(board):
        return ttt.tictactoe.minimax(board)

    failure(checks.check_minimax, minimax)
    assert ref.minimax(ref.initial_state()) == (1, 1)
    assert classic.solve(classic.EMPTY_BOARD) == (0, 4)


def test_given_helpers_are_allowed_in_minimax(capsys):
    """Lessons 4 and 5 hand students the reference player/actions/result: using them is fine."""

    def minimax(board):
        if ref.terminal(board):
            return None
        return fast_minimax(board)

    checks.check_minimax(minimax)
    assert "minimax: correct on" in capsys.readouterr().out


# --- stubs and non-functions ----------------------------------------------------------------------


def test_a_stub_raises_not_implemented_error_saying_what_to_do():
    def player(board):
        raise NotImplementedError()

    with pytest.raises(NotImplementedError, match="player is not written yet"):
        checks.check_player(player)


def test_something_that_is_not_a_function():
    assert "should be a function, but it is NoneType" in failure(checks.check_player, None)


def test_draw_shows_rows_and_status():
    picture = checks.draw(ref.from_text("XO./.X./..O"))
    assert picture.splitlines()[0] == "    X | O |  "
    assert "(X to move)" in picture
    assert "(X has won)" in checks.draw("XXXOO....")


def test_each_function_is_graded_on_its_own(capsys):
    """A bug in the student's winner does not fail their terminal or utility; nor player their result."""
    ns = lesson(L2, edit=lambda src: src.replace("[[(0, 0), (1, 1), (2, 2)], [(0, 2), (1, 1), (2, 0)]]", "[[(0, 0), (1, 1), (2, 2)]]"))
    assert "winner(board): wrong winner" in failure(checks.check_winner, ns["winner"])
    terminal = checks.check_terminal(ns["terminal"])
    assert terminal.broken_by == ("winner",) and "As written it fails, because it calls your own winner (your winner returned None" in terminal
    checks.check_utility(ns["utility"])
    assert ns["winner"].__module__ == ns["__name__"]  # put back afterwards
    ns = lesson(L1, edit=lambda src: src.replace("return X if xs == os else O", "return X"))
    checks.check_result(ns["result"])
    assert ns["player"](ref.from_text("X........")) == "X"  # the student's own again
    assert capsys.readouterr().out.count("correct on") == 3


LEANING_ON_ITS_OWN = """
def winner(board):
    for a, b, c in [((0, 0), (0, 1), (0, 2)), ((1, 0), (1, 1), (1, 2)), ((2, 0), (2, 1), (2, 2)), ((0, 0), (1, 0), (2, 0)),
                    ((0, 1), (1, 1), (2, 1)), ((0, 2), (1, 2), (2, 2)), ((0, 0), (1, 1), (2, 2)), ((0, 2), (1, 1), (2, 0))]:
        if board[a[0]][a[1]] is not None and board[a[0]][a[1]] == board[b[0]][b[1]] == board[c[0]][c[1]]:
            return board[a[0]][a[1]]
    return False

def actions(board):
    return [(i, j) for i in range(3) for j in range(3) if board[i][j] is None]

def terminal(board):
    return winner(board) is not False or actions(board) == []

def utility(board):
    return {"X": 1, "O": -1}.get(winner(board), 0) if terminal(board) else 0
"""


def test_a_function_passes_as_written_or_with_the_reference_helpers(capsys):
    """terminal leans on this student's own winner (False for no winner) and actions (a list): right as written."""
    namespace: dict = {}
    exec(LEANING_ON_ITS_OWN, namespace)
    assert checks.check_terminal(namespace["terminal"]).broken_by == ()  # as written: correct
    assert checks.check_utility(namespace["utility"]).broken_by == ()
    assert "wrong winner" in failure(checks.check_winner, namespace["winner"])
    assert "should return a set, not a list of" in failure(checks.check_actions, namespace["actions"])
    wrong = namespace["terminal"]
    exec("def terminal(board):\n    return winner(board) is not False", namespace)  # wrong both ways: fails, as written
    assert "terminal(board): wrong answer" in failure(checks.check_terminal, namespace["terminal"])
    assert namespace["winner"] is not wrong and callable(namespace["actions"])  # the student's own, put back


def test_a_failing_check_is_shown_as_its_message_alone_in_a_kernel():
    from IPython.core.interactiveshell import InteractiveShell

    shown = []
    shell = InteractiveShell.instance()
    shell._showtraceback = lambda etype, value, stb: shown.append(stb)
    try:
        shell.run_cell("from grader.checks import check_player\ncheck_player(lambda board: 'X')")
        shell.run_cell("raise NotImplementedError('a stub of the student')")
    finally:
        shell.set_custom_exc((), None)
        InteractiveShell.clear_instance()
    check, stub = shown
    assert len(check) == 1 and check[0].startswith("\x1b[0;31mCheckFailed\x1b[0m: player(board): wrong player")
    assert "check_player" not in check[0]
    assert len(stub) > 1 and "a stub of the student" in stub[-1]  # anything else: the usual traceback


# --- the visible tests' helpers ----------------------------------------------------------------


def test_expect_checks_the_type_first_and_shows_expected_and_returned():
    board = ref.from_text("XX./OO./...")
    checks.expect((0, 2), call="minimax(board)", kind="action", accept=[(0, 2)], board=board)
    with pytest.raises(CheckFailed) as failed:
        checks.expect(1, call="minimax(board)", kind="action", accept=[(0, 2)], board=board, why="X wins at once")
    message = str(failed.value)
    assert message.startswith("minimax(board): should return an action: a tuple (i, j), or None if the game is over, not the number 1\n")
    assert "X | X |" in message and "expected: (0, 2)" in message and "returned: 1" in message
    assert "X wins at once" not in message  # the type comes first: the value's story would mislead
    with pytest.raises(CheckFailed, match=r"not a list of 9 items"):
        checks.expect([2] * 9, [0] + [2] * 9, call="rk_board(board)", kind="ten ints")
    with pytest.raises(CheckFailed, match=r"(?s)terminal\(board\): should return True or False \(a bool\), not the text 'X'.*returned: 'X'"):
        checks.expect("X", True, call="terminal(board)", kind="bool", board=ref.from_text("XXX/OO./..."), why="X has won")
    with pytest.raises(CheckFailed) as failed:
        checks.expect({(0, 1)}, {(2, 2), (0, 0)}, call="actions(board)", kind="set", why="two squares free")
    assert "actions(board): two squares free" in str(failed.value) and "expected: {(0, 0), (2, 2)}" in str(failed.value)
    with pytest.raises(CheckFailed, match=r"expected: \(0, 0\) or \(0, 1\) or .* or \.\.\. \(81 in all\)\nreturned: \(9, 9\)"):
        checks.expect((9, 9), call="depth_limited_move(state, 1)", kind="move", accept=[(b, c) for b in range(9) for c in range(9)])


def test_expect_raises_names_the_exception_that_came_instead():
    board = ref.from_text(".../.X./...")
    checks.expect_raises(ref.result, board, (1, 1), error=ValueError, call="result(board, (1, 1))")

    def plain(board, action):
        raise Exception("taken")

    with pytest.raises(CheckFailed, match=r"result\(board, \(1, 1\)\): the square is taken, so it must raise ValueError; "
                                          r"instead it raised Exception: taken\n"):  # the test's reason first, then what came
        checks.expect_raises(plain, board, (1, 1), call="result(board, (1, 1))", board=board, why="the square is taken")
    with pytest.raises(CheckFailed, match=r"result\(board, \(1, 1\)\): expected ValueError, got Exception\n"):
        checks.expect_raises(plain, board, (1, 1), call="result(board, (1, 1))", board=board)
    with pytest.raises(CheckFailed, match=r"returned instead of raising ValueError"):
        checks.expect_raises(lambda b, a: b, board, (1, 1), call="result(board, (1, 1))")


def test_returned_turns_an_error_in_the_student_code_into_a_message_with_the_board():
    def minimax(board):
        return max(a for a in ())

    board = ref.from_text("XOX/XOO/OXX")
    with pytest.raises(CheckFailed) as failed:
        checks.returned(minimax, board)
    message = str(failed.value)
    assert message.startswith("minimax(board): raised ValueError:") and "a tie: the board is full" in message
    assert "in minimax, line" in message
    with pytest.raises(NotImplementedError):
        checks.returned(lambda board: (_ for _ in ()).throw(NotImplementedError()), board)
    with checks.reference_allowed():  # a visible test refuses the reference itself, as the hidden check does
        assert checks.returned(ref.player, ref.initial_state()) == "X"
    assert "player is ttt.tictactoe.player, the reference solution" in str(
        pytest.raises(CheckFailed, checks.returned, ref.player, ref.initial_state()).value)


def test_optimal_actions_are_the_reference_s():
    assert checks.optimal_actions(ref.from_text("O.X/O../..X")) == {(1, 2), (2, 0)}
    assert checks.optimal_actions(ref.from_text("XOX/XOO/OXX")) == set()


# --- the lessons' visible tests, run on planted bugs -----------------------------------------------


def visible_tests(name: str, grade_id: str) -> str:
    """Return the visible part of the grade cell `grade_id` of lesson `name` (what comes before the hidden tests)."""
    from lesson_code import notebook

    (cell,) = [c for c in notebook(name).cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id]
    return cell.source.split("### BEGIN HIDDEN TESTS")[0]


def visible_failure(name: str, grade_id: str, edit) -> str:
    """Return the CheckFailed message of the visible tests of `grade_id`, run after `name`'s solution with `edit`."""
    namespace = lesson(name, edit=edit)
    with pytest.raises(CheckFailed) as raised:
        exec(visible_tests(name, grade_id), namespace)
    return str(raised.value)


def _root_maximises(src: str) -> str:
    return src.replace('maximizing = game.to_move(state) == "X"', "maximizing = True")


@pytest.mark.parametrize("edit, shows", [
    (lambda src: _root_maximises(src).replace('if game.to_move(state) == "X":', "if True:"), "returned: (4, 1)"),  # always maximising
    (_root_maximises, "returned: (4, 1)"),  # O takes the largest value at the root
    (lambda src: src.replace("if depth == 0:", "if depth <= 1:"), "O sees that the centre of board 1 lets X win"),  # stops one move early
])
def test_lesson_6_visible_tests_catch_common_search_bugs(edit, shows):
    message = visible_failure(L6, "depth-limited-tests", edit)
    assert shows in message and "as a state: BigState(" in message, message
    if "O takes the SMALLEST" in message:
        assert message.startswith("depth_limited_move(centre, 1): O is to move") and "(O to move, on board 4)" in message
    else:
        assert message.startswith("depth_limited_move(sent, 2): looking 2 moves ahead") and "expected: (1, 0)" in message


def test_lesson_6_visible_tests_pass_the_solution(capsys):
    for grade_id in ("line-score-tests", "evaluate-tests", "depth-limited-tests"):
        exec(visible_tests(L6, grade_id), lesson(L6))
    assert capsys.readouterr().out.count("passes the visible tests") == 3


def test_a_search_that_ignores_the_depth_is_stopped_with_a_hint():
    ns = lesson(L6, edit=lambda src: src.replace("if depth == 0:", "if False:"))
    game = ns["game"]
    with pytest.raises(CheckFailed) as failed:
        checks.returned(ns["depth_limited_move"], game.initial(), 2, call="depth_limited_move(game.initial(), 2)",
                        seconds=0.5, slow="does `value` stop when depth reaches 0?")
    message = str(failed.value)
    assert message.startswith("depth_limited_move(game.initial(), 2): still running after 0.5 s of CPU time: does `value` stop")
    assert "(X to move, on any open board)" in message
    assert checks.returned(lambda state, depth: depth, game.initial(), 3, seconds=5) == 3


def test_lesson_6_evaluate_failure_draws_the_state():
    message = visible_failure(L6, "evaluate-tests", lambda src: src.replace('- line_score(state.small(b), "O")', ""))
    assert message.startswith("evaluate(state): then O in corner (4, 0)") and "as a state: BigState(" in message


def test_lesson_3_a_win_block_that_changes_the_board_is_shown_the_board_before():
    def trying(src: str) -> str:  # tries its marks on the board itself and never takes them back
        return src.replace("trial = copy.deepcopy(board)", "trial = board")

    message = visible_failure(L3, "win-block-tests", trying)
    assert "win_block changed the board it was given (drawn here as it was before the call)" in message, message
    before, after = message.split("returned: the board changed to")
    assert "(X to move)" in before and "has won" not in before and "X | X | X" in after


def test_lesson_3_tournament_stops_on_a_move_that_is_not_a_free_square():
    from ttt import agents
    from ttt.cli import match
    from ttt.games.classic import TicTacToe

    def win_block(board):
        return None if sum(row.count(None) for row in board) < 7 else ref.minimax(board)

    with checks.reference_allowed(), pytest.raises(CheckFailed) as failed:
        match(TicTacToe(), agents.from_cs50(checks.legal_only(win_block)), agents.make("random", seed=1), games=2, names=("a", "b"))
    message = str(failed.value)
    assert message.startswith("win_block(board): your win_block returned None on this board: a player must return a free square")
    assert "to move)" in message and "expected: (" in message and message.endswith("returned: None")
    with checks.reference_allowed():
        assert checks.legal_only(ref.minimax)(ref.from_text("XX./OO./...")) == (0, 2)


# --- one bug, one function -----------------------------------------------------------------------


def test_numpy_integers_are_actions_and_bools_are_not(capsys):
    np = pytest.importorskip("numpy")
    from grader.checks.student import _square_or_none

    assert _square_or_none((np.int64(1), np.int32(2))) == 5 and _square_or_none([np.int8(0), 0]) == 0
    assert _square_or_none((True, 0)) is None and _square_or_none((np.bool_(True), 0)) is None
    assert _square_or_none((1.0, 2)) is None and _square_or_none((3, 0)) is None
    checks.check_minimax(lambda board: None if naive.terminal(board) else tuple(np.int64(x) for x in fast_minimax(board)))
    assert "minimax: correct on all 5,478 positions" in capsys.readouterr().out


def test_a_result_returning_tuples_is_told_it_returned_a_tuple_board():
    def result(board, action):
        new = naive.result(board, action)
        return tuple(tuple(row) for row in new)

    message = failure(checks.check_result, result)
    assert message.startswith("result(board, (0, 0)): returned a tuple of tuples, not a list of lists"), message
    assert "wrong board" not in message


HELPERS_WITH_A_WRONG_TERMINAL = """
import copy
X, O, EMPTY = "X", "O", None


def player(board):
    xs = sum(row.count(X) for row in board)
    return X if xs == sum(row.count(O) for row in board) else O


def actions(board):
    return {(i, j) for i in range(3) for j in range(3) if board[i][j] is EMPTY}


def result(board, action):  # right by its own check: it need not refuse a move on a finished board
    i, j = action
    if not (0 <= i <= 2 and 0 <= j <= 2) or board[i][j] is not EMPTY:
        raise ValueError(f"invalid action {action}")
    new = copy.deepcopy(board)
    new[i][j] = player(board)
    return new


def winner(board):
    lines = [[(r, c) for c in range(3)] for r in range(3)] + [[(r, c) for r in range(3)] for c in range(3)]
    lines += [[(0, 0), (1, 1), (2, 2)], [(0, 2), (1, 1), (2, 0)]]
    for line in lines:
        marks = {board[r][c] for r, c in line}
        if len(marks) == 1 and None not in marks:
            return marks.pop()
    return None


def terminal(board):  # wrong: it misses the diagonals
    for line in ([board[r] for r in range(3)] + [[board[r][c] for r in range(3)] for c in range(3)]):
        if line[0] is not None and line.count(line[0]) == 3:
            return True
    return all(square is not EMPTY for row in board for square in row)


def utility(board):
    return {X: 1, O: -1}.get(winner(board), 0)


def value(board):
    if terminal(board):
        return utility(board)
    values = [value(result(board, a)) for a in actions(board)]
    return max(values) if player(board) == X else min(values)


def minimax(board):
    if terminal(board):
        return None
    pick = max if player(board) == X else min
    return pick(sorted(actions(board)), key=lambda a: value(result(board, a)))
"""


def test_broken_by_names_only_a_function_that_fails_its_own_check(capsys):
    namespace = {"__name__": "student"}
    exec(compile(HELPERS_WITH_A_WRONG_TERMINAL, "<student>", "exec"), namespace)
    checks.check_result(namespace["result"])  # right by its own check
    summary = checks.check_minimax(namespace["minimax"])
    assert summary.broken_by == ("terminal",), summary
    assert "your own terminal (your terminal returned False" in summary and "your result" not in summary
