"""The words of the visible tests' messages, on the mistakes the lessons plant (``lesson_code.BUGS``)
and on a few made here: what a wrong value is, said without Python's type names; boards drawn, never
printed as lists alone; "tie", never "draw"; a message about a board drawn beside that board; no
message cut off."""

from __future__ import annotations

import math
import re

import pytest

import ttt.tictactoe as ref
from grader import checks
from grader.checks import CheckFailed
from lesson_code import BUGS, solution_namespace
from test_lessons import visible_failures

QUICK = [bug for bug in BUGS if not bug.endless]
TYPE_NAMES = re.compile(r"\bNoneType\b|\((?:str|int|bool|float|tuple|list|set|dict)\)|not (?:str|int|bool|float|NoneType)\b")
STATUS = re.compile(r"((?:   [ XO ]?.*\n){5})   \((X has won|O has won|a tie: the board is full|X to move|O to move)\)")


def drawn(message: str) -> list[tuple[str, str]]:
    """Return (board as nine characters, its status line) for each 3x3 board drawn in `message`."""
    found = []
    for match in re.finditer(r"((?:^ {3}.*\n)+?)   \(([^)\n]*)\)", message, flags=re.M):
        rows = [line for line in match.group(1).splitlines() if "|" in line and "+" not in line]
        if len(rows) == 3 and all(len(row.split("|")) == 3 for row in rows):
            text = "".join((cell.strip() or ".") for row in rows for cell in row.split("|"))
            if len(text) == 9:
                found.append((text, match.group(2)))
    return found


def first_failure(bug) -> str:
    failures = visible_failures(bug.lesson, bug.plant)
    return str(next(iter(failures.values())))


@pytest.mark.parametrize("bug", QUICK, ids=repr)
def test_each_mistake_is_told_without_type_names_with_its_boards_drawn_and_tie_for_a_tie(bug, capsys):
    message = first_failure(bug)
    assert not TYPE_NAMES.search(message), message
    assert not re.search(r"\bdraws?\b", message), message  # "tie", as the lessons say
    assert not re.search(r"^(expected|returned): \[\[", message, flags=re.M), message  # boards drawn, not printed as lists
    for text, status in drawn(message):
        w = ref.winner(ref.from_text(text))
        assert (status == f"{w} has won") if w else "has won" not in status, (text, status, message)
    said = re.findall(r"\b([XO]) has won\b", message.splitlines()[0])
    for mark in said:  # a message that says someone has won draws a board where they have
        assert any(status == f"{mark} has won" for _, status in drawn(message)), message
    assert not message.rstrip().endswith(":"), message


def test_a_wrong_mark_is_said_as_the_text_it_is():
    board = ref.from_text("X../.../...")
    with pytest.raises(CheckFailed) as failed:
        checks.expect(checks.returned(lambda b: "o", board, call="player(board)"), ref.O, call="player(board)", kind="mark", board=board)
    message = str(failed.value)
    assert message.startswith("player(board): should return X or O, not the text 'o'\n"), message
    with pytest.raises(CheckFailed) as failed:
        checks.expect(checks.returned(lambda b: None, board, call="player(board)"), ref.O, call="player(board)", kind="mark", board=board)
    assert str(failed.value).startswith("player(board): should return X or O, not None\n")
    assert "NoneType" not in str(failed.value) and "str" not in str(failed.value)


def test_a_wrong_board_is_drawn_under_expected_and_returned(capsys):
    bug = next(b for b in BUGS if b.name == "result-transposed")
    message = first_failure(bug)
    expected, returned = message.split("\nexpected:")[1].split("\nreturned:")
    assert [text for text, _ in drawn("expected:" + expected)] == ["..X......"], message
    assert [text for text, _ in drawn("returned:" + returned)] == ["......X.."], message


def test_a_search_that_changes_its_board_is_named_with_the_board_before_and_after(capsys):
    bug = next(b for b in BUGS if b.name == "minimax-plays-on-the-board-it-was-given")
    message = first_failure(bug)
    first = message.split("\n")[0]  # the test's reason, then what went wrong
    assert first.startswith("minimax(board): X wins at once at (0, 2); instead your max_value (called by minimax) changed the board "
                            "it was given"), message
    before, after = drawn(message)[:2]
    assert before[0] != after[0] and sum(a != b for a, b in zip(before[0], after[0])) >= 1, message
    assert "the board changed to" in message and "result(board, action)" in message


def test_an_error_raised_on_another_board_draws_that_board_too():
    namespace = {"math": math, **{name: getattr(ref, name) for name in ("actions", "result", "from_text")}}
    exec("def max_value(board):\n    v = -math.inf\n    for action in actions(board):\n        v = max(v, min_value(result(board, action)))\n"
         "    return v\n\n"
         "def min_value(board):\n    v = math.inf\n    for action in actions(board):\n        v = min(v, max_value(result(board, action)))\n"
         "    return v\n\n"
         "def minimax(board):\n    return min(actions(board), key=lambda action: max_value(result(board, action)))\n", namespace)
    board = ref.from_text("XOX/.O./X..")  # O to move, nobody has won: the search (no test for the end) plays on past O's win
    with pytest.raises(CheckFailed) as failed:
        checks.returned(namespace["minimax"], board)
    message = str(failed.value)
    assert message.startswith("minimax(board): raised ValueError: the game is over: ")
    said = re.search(r"the game is over: ([XO]) has won", message).group(1)
    boards = drawn(message)
    assert boards[0] == ("XOX.O.X..", "O to move")  # the board the test gave
    assert any(status == f"{said} has won" for _, status in boards[1:]), message  # and the board result was given
    assert re.search(r"result\(board, \(\d, \d\)\) raised it, on this board \(given it by your (max|min)_value\)", message)


def test_the_line_that_raised_is_never_cut_off():
    from grader.checks.failures import _student_line

    error = ValueError("square taken")
    error.remote_line = "in result, line 5:"  # told by a sandbox that could not read the line's code
    assert _student_line(error) == "in result, line 5"
    namespace: dict = {}
    exec(compile("def result(board, action):\n    raise ValueError('no')\n", "<not in the line cache>", "exec"), namespace)
    try:
        namespace["result"](None, None)
    except ValueError as raised:
        assert _student_line(raised) == "in result, line 2"


def test_a_full_board_with_no_line_is_a_tie():
    assert checks.draw("XOX/XOO/OXX".replace("/", "")).endswith("(a tie: the board is full)")


def test_the_hidden_check_names_a_search_that_changes_its_board_too(capsys):
    bug = next(b for b in BUGS if b.name == "minimax-plays-on-the-board-it-was-given")
    namespace = solution_namespace(bug.lesson, edit=bug.plant)
    with pytest.raises(CheckFailed) as failed:
        checks.check_minimax(namespace["minimax"])
    message = str(failed.value)
    assert "minimax(board): your max_value (called by minimax) changed the board it was given" in message, message
    before, after = drawn(message)[:2]
    assert before[0] != after[0] and "the board changed to" in message
