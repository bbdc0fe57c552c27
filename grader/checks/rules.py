"""The checks of lessons 1 and 2: `initial_state`, `player`, `actions`, `result`; `winner`,
`terminal`, `utility`, and Rich & Knight's board and `PossWin`.
"""

from __future__ import annotations

import itertools
import numbers
from typing import Any, Callable

import ttt.tictactoe as ref
from ttt.agents import classic as ref_players
from ttt.games import classic

from grader.checks.failures import (
    Board, CheckFailed, Text, _fail, _what_it_is, _invalid_action_error, _is_bool, _passed, _show, _text_or_none, _type_name, draw,
)
from grader.checks.student import (
    _Failures, _Student, _action, _answer, _answers, _board, _focus, _not_an_exception, _not_over, _on_its_own, _positions,
    _student_raised, _unchanged,
)
from grader.checks.display import _guarded
from grader.checks.visible import _is_board


@_guarded
@_on_its_own("initial_state")
def check_initial_state(student: _Student) -> str:
    """Print and return a one-line summary if `initial_state()` returns the empty board: 3 new lists of 3 EMPTY (None)."""
    failures = _Failures("initial_state", "initial_state() is called twice")
    empty = _board(classic.EMPTY_BOARD)
    call = "initial_state()"
    with failures.case():
        first = student(call=call)
        second = student(call=call)
        if not _is_board(first) or first != empty:
            note = "The empty board is [[EMPTY, EMPTY, EMPTY], [EMPTY, EMPTY, EMPTY], [EMPTY, EMPTY, EMPTY]], with EMPTY = None."
            raise _fail(call, None, "should return the empty board: a list of 3 lists, each of 3 EMPTY (None)",
                        expected=repr(empty), got=_show(first), note=note)
        if len({id(row) for row in first}) < 3:
            raise _fail(call, None, "returned three rows that are one and the same list",
                        expected="3 separate lists", got=repr(first),
                        note="[[EMPTY] * 3] * 3 repeats one row: a move in row 0 would appear in every row "
                             "(copy.deepcopy keeps them joined). Write [[EMPTY] * 3 for _ in range(3)].")
        if first is second or any(a is b for a, b in zip(first, second)):
            raise _fail(call, None, "returned the same list twice",
                        expected="a new board on each call", got="the same board object both times",
                        note="A new game needs a new board: a board changed during one game would start the next.")
    failures.raise_any()
    return _passed("initial_state", "the empty board")


@_guarded
@_on_its_own("player")
def check_player(student: _Student) -> str:
    """Print and return a one-line summary if `player(board)` is X or O as the reference says on every position not over.

    The CS50 project: any answer is accepted on a board where the game is over.
    """
    boards = _positions(over=False)
    checked = f"{_not_over(boards)} are checked"
    failures = _Failures("player", checked)
    call = f"{student.name}(board)"

    def one(text: Text) -> None:
        got = _answer(student, text, checked)
        expected = ref.player(_board(text))
        if not (isinstance(got, str) and got == expected):
            note = ""
            if got in ("X", "O"):
                note = f"X moves first; then the turns alternate. This board has {text.count('X')} X and {text.count('O')} O."
            elif got is None:
                note = "player must return X or O (X = 'X', O = 'O'); None means it returned nothing."
            raise _fail(call, _board(text), "wrong player", expected=repr(expected), got=_show(got), note=note, checked=checked)

    failures.each(boards, one, asking=student)
    return _passed("player", f"all {_not_over(boards)}")


@_guarded
@_on_its_own("actions")
def check_actions(student: _Student) -> str:
    """Print and return a one-line summary if `actions(board)` is the set of empty squares (i, j) on every position not over."""
    boards = _positions(over=False)
    checked = f"{_not_over(boards)} are checked"
    failures = _Failures("actions", checked)
    call = f"{student.name}(board)"

    def one(text: Text) -> None:
        got = _answer(student, text, checked)
        expected = ref.actions(_board(text))
        shown = "{" + ", ".join(map(str, sorted(expected))) + "}"
        if not isinstance(got, (set, frozenset)):
            note = "actions must return a set, e.g. {(0, 1), (2, 2)}: build it with set() and .add((i, j))."
            if isinstance(got, (list, tuple)):
                note = f"actions returned a {type(got).__name__}; the CS50 specification asks for a set: wrap it as set(...) or build a set with .add((i, j))."
            raise _fail(call, _board(text), f"should return a set, not {_what_it_is(got)}", expected=shown, got=_show(got), note=note, checked=checked,
                        kind="not a set")
        bad = [a for a in got if not (isinstance(a, tuple) and len(a) == 2)]
        if bad:
            raise _fail(call, _board(text), f"each action should be a tuple (i, j), but the set holds {bad[0]!r}", expected=shown, got=repr(got), checked=checked, kind="an action that is not a tuple (i, j)")
        if got != expected:
            missing, extra = sorted(expected - got), sorted(got - expected, key=repr)
            note = "; ".join(
                part
                for part in (
                    f"missing: {', '.join(map(str, missing))}" if missing else "",
                    f"not empty squares (or not on the board): {', '.join(map(str, extra))}" if extra else "",
                )
                if part
            )
            raise _fail(call, _board(text), "wrong set of actions", expected=shown, got=repr(got), note=note, checked=checked)

    failures.each(boards, one, asking=student)
    return _passed("actions", f"all {_not_over(boards)}")


INVALID_ACTIONS: tuple[tuple[Any, str], ...] = (
    ((-1, 0), "row -1 is off the board; in Python board[-1] is the last row, so without a check it silently plays there"),
    ((0, -1), "column -1 is off the board; in Python row[-1] is the last square, so without a check it silently plays there"),
    ((3, 0), "row 3 is off the board (rows are 0, 1, 2)"),
    ((1, 3), "column 3 is off the board (columns are 0, 1, 2)"),
)


@_guarded
@_on_its_own("result")
def check_result(student: _Student) -> str:
    """Print and return a one-line summary if `result` is right on every legal action of every position not over.

    It must return a new board with the mover's mark added, leave its input unchanged, and
    raise an exception for a taken square or a square off the board: ValueError in the lessons
    (``ttt.InvalidActionError`` is one), any Exception for a CS50 file (`cs50_specification`).
    Every kind of failure is reported, one board each.
    """
    boards = _positions(over=False)
    count = sum(len(classic.moves(b)) for b in boards)
    checked = f"{count:,} moves in {len(boards):,} positions are checked, and squares taken by each player"
    failures = _Failures("result", checked)
    focus = set(_focus(boards))
    invalid_cases = {text: _invalid_cases(text, turn, boards) for turn, text in enumerate(boards) if text in focus}
    student.expect(itertools.chain(((_board(text), _action(square)) for text in invalid_cases for square in classic.moves(text)),
                                   ((_board(text), action) for text, cases in invalid_cases.items() for action, _, _ in cases)))
    for text in _focus(boards):
        for square in classic.moves(text):
            with failures.case():
                action = _action(square)
                board = _board(text)
                call = f"result(board, {action})"
                got = student(board, action, call=call, board=_board(text), checked=checked)
                _unchanged(text, board, call, "result", checked)
                expected = _board(classic.play(text, square))
                if got is board:
                    raise _fail(call, _board(text), "returned the very board it was given", note="Make a new board (copy.deepcopy(board)) and change the copy.", checked=checked)
                if got != expected and _text_or_none(got) == classic.play(text, square):
                    raise _fail(call, _board(text), f"returned {_board_shape(got)}, not a list of lists", expected=repr(expected),
                                got=_show(got), checked=checked, kind="not a list of lists",
                                note="The marks are right, but a CS50 board is a list of three lists: other code changes its "
                                     "squares (board[i][j] = ...), which a tuple does not allow. Copy it with copy.deepcopy(board).")
                if got != expected:
                    raise _fail(call, _board(text), f"wrong board after {ref.player(_board(text))} plays {action}", expected=repr(expected), got=_show(got),
                                note=f"expected, drawn:\n{draw(expected)}" if _text_or_none(got) else "", checked=checked, kind="wrong board")
    invalid = 0
    for text, cases in invalid_cases.items():
        for action, why, where in cases:
            invalid += 1
            with failures.case():
                _expect_invalid(student, text, action, why, where, checked)
    failures.raise_any()
    error = _type_name(_invalid_action_error())
    raised = "raise an exception" if error == "Exception" else f"raise {error}"
    return _passed("result", f"all {count:,} legal moves, and {invalid:,} invalid ones {raised}")


def _invalid_cases(text: Text, turn: int, boards: list[Text]) -> list[tuple[Any, str, str]]:
    """Return the invalid actions `check_result` tries on `text` (``boards[turn]``, `boards` the
    positions not over): (action, why it is invalid, where it points) for one taken square, and
    the squares off the board on three of the positions.

    Which taken square is tried turns with `turn`, so every square is tried taken by each mark on
    200 positions or more: trying every taken square of every position (24,525 calls, half of the
    check's), or one of each mark (9,041), finds no mistake this misses, and each call crosses into
    the sandbox."""
    cases = []
    taken = [s for s, c in enumerate(text) if c in "XO"]
    if taken:
        square = taken[turn % len(taken)]
        cases.append((_action(square), f"square {_action(square)} is taken by {text[square]}", "a taken square"))
    if text in (boards[0], boards[5], boards[40]):
        cases += [(action, why, "off the board") for action, why in INVALID_ACTIONS]
    return cases


def _board_shape(board: Any) -> str:
    """Return what a board that is not a list of lists is made of: 'a tuple of tuples', 'a list of tuples'."""
    rows = {type(row).__name__ for row in board}
    inner = rows.pop() if len(rows) == 1 else "mixed rows"
    return f"a {type(board).__name__} of {inner}{'s' if inner != 'mixed rows' else ''}"


def _expect_invalid(student: _Student, text: Text, action: Any, why: str, where: str, checked: str) -> None:
    """Raise CheckFailed unless `result(board, action)` raises the exception an invalid action must raise."""
    board = _board(text)
    call = f"result(board, {action!r})"
    wanted = _invalid_action_error()
    try:
        got = student.raw(board, action)
    except (CheckFailed, NotImplementedError):
        raise
    except wanted as raised:
        _unchanged(text, board, call, "result", checked)
        if wanted is not Exception and not str(raised).strip():  # the lessons ask for a message; the CS50 project does not
            raise _fail(call, _board(text), "raised ValueError without a message", expected=f'ValueError("...") saying why: {why}',
                        got="ValueError()", note="The specification asks for a message saying why the action is invalid.", checked=checked) from None
        return
    except Exception as error:
        raise _fail(
            call,
            _board(text),
            f"raised {_type_name(error)} ({error}); an invalid action should raise ValueError",
            note=f"{why}. The lessons ask for ValueError: check the action first and `raise ValueError(\"...\")` saying why it is invalid.",
            checked=checked, kind="raises the wrong exception",
        ) from None
    except BaseException as error:
        if not _student_raised(error):
            raise
        raise _fail(call, _board(text), _not_an_exception(error), note=why + ".", checked=checked, kind=f"raised {_type_name(error)}") from None
    what = "overwrites a taken square" if where == "a taken square" else "plays off the board"
    raise _fail(call, _board(text), f"returned a board instead of raising an exception: it {what}", got=_show(got),
                note=f"{why}. The CS50 specification: an invalid action must raise an exception"
                     + ("." if wanted is Exception else " (in these lessons, ValueError)."),
                checked=checked, kind=what)


@_guarded
@_on_its_own("winner")
def check_winner(student: _Student) -> str:
    """Print and return a one-line summary if `winner(board)` is X, O or None as the reference says, on all 5,478 positions."""
    boards = _positions()
    checked = f"all {len(boards):,} positions are checked"
    failures = _Failures("winner", checked)

    def one(text: Text) -> None:
        got = _answer(student, text, checked)
        expected = ref.winner(_board(text))
        if got != expected or not (got is None or isinstance(got, str)):
            note = "If no one has three in a row, winner returns None (not 'None', not EMPTY's string)." if expected is None else ""
            raise _fail("winner(board)", _board(text), "wrong winner", expected=repr(expected), got=_show(got), note=note, checked=checked)

    failures.each(boards, one, asking=student)
    return _passed("winner", f"all {len(boards):,} positions")


@_guarded
@_on_its_own("terminal")
def check_terminal(student: _Student) -> str:
    """Print and return a one-line summary if `terminal(board)` is True exactly on won or full boards, on all 5,478 positions."""
    boards = _positions()
    checked = f"all {len(boards):,} positions are checked"
    failures = _Failures("terminal", checked)

    def one(text: Text) -> None:
        got = _answer(student, text, checked)
        expected = ref.terminal(_board(text))
        if not _is_bool(got):
            note = "Convert it with bool(...)." if type(got).__module__ == "numpy" else ""
            raise _fail("terminal(board)", _board(text), f"should return True or False (Python's bool), not {_what_it_is(got)}",
                        expected=repr(expected), got=_show(got), note=note, checked=checked, kind="not a bool")
        if got != expected:
            note = "The game is over when someone has three in a row, or when every square is filled."
            raise _fail("terminal(board)", _board(text), "wrong answer", expected=repr(expected), got=repr(got), note=note, checked=checked)

    failures.each(boards, one, asking=student)
    return _passed("terminal", f"all {len(boards):,} positions")


@_guarded
@_on_its_own("utility")
def check_utility(student: _Student) -> str:
    """Print and return a one-line summary if `utility(board)` is 1, -1 or 0 on every position where the game is over.

    The CS50 project's text gives an O win utility 1: a typo, it is -1.
    """
    boards = _positions(over=True)
    checked = f"{len(boards):,} positions where the game is over are checked"
    failures = _Failures("utility", checked)

    def one(text: Text) -> None:
        got = _answer(student, text, checked)
        expected = ref.utility(_board(text))
        if isinstance(got, bool) or not isinstance(got, numbers.Real) or got != expected:
            note = "X wins: 1; O wins: -1 (the CS50 project's text says 1 for O too: a typo); a tie: 0."
            raise _fail("utility(board)", _board(text), "wrong utility", expected=repr(expected), got=_show(got), note=note, checked=checked)

    failures.each(boards, one, asking=student)
    return _passed("utility", f"all {len(boards):,} positions where the game is over")


def rk_board(board: Board) -> list[int]:
    """Return Rich & Knight's board for a CS50 board: [0] unused (0), then B[1..9] row by row, 2 blank, 3 X, 5 O."""
    return ref_players.program2_board(ref.to_text(board))


@_guarded
def check_rk_board(student_rk_board: Callable) -> str:
    """Print and return a one-line summary if the student's `rk_board(board)` equals `rk_board` on all 5,478 positions."""
    student = _Student(student_rk_board, "rk_board")
    boards = _positions()
    checked = f"all {len(boards):,} positions are checked"
    for text, got in _answers(student, boards, checked):
        expected = rk_board(_board(text))
        if not isinstance(got, list) or got != expected:
            raise _fail("rk_board(board)", _board(text), "wrong Rich & Knight board", expected=repr(expected), got=_show(got), note="B[0] is unused (0); B[1] to B[9] are the squares row by row: 2 blank, 3 X, 5 O.", checked=checked)
    return _passed("rk_board", f"all {len(boards):,} positions")


@_guarded
def check_poss_win(poss_win: Callable) -> str:
    """Print and return a one-line summary if `poss_win(B, p)` finds a winning square 1-9 for p, or 0 when there is none.

    Checked for X and for O on every position not over. Rich & Knight's Program 2 checks the lines one at a
    time and returns the first it finds; any winning square is accepted.
    """
    student = _Student(poss_win, "poss_win")
    boards = _positions(over=False)
    checked = f"{2 * len(boards):,} cases (X and O on every position not over) are checked"
    student.expect((rk_board(_board(text)), p) for text in boards for p in ("X", "O"))
    for text in boards:
        for p in ("X", "O"):
            b = rk_board(_board(text))
            call = f"poss_win(B, {p!r}) with B = {b}"
            got = student(b, p, call=call, board=text, checked=checked)
            if b != rk_board(_board(text)):
                raise _fail(call, text, "poss_win changed the board B it was given", got=repr(b), checked=checked)
            wins = [s + 1 for s in classic.winning_squares(text, p)]
            if isinstance(got, bool) or not isinstance(got, int):
                raise _fail(call, text, f"should return a square number 1-9 or 0, not {_what_it_is(got)}", expected=" or ".join(map(str, wins)) or "0", got=_show(got), checked=checked,
                            kind="not a square number")
            if not wins and got != 0:
                raise _fail(call, text, f"{p} cannot win with one move here", expected="0", got=repr(got), note=f"A line where {p} can win has product {18 if p == 'X' else 50}: two of {p}'s marks and a blank.", checked=checked)
            if wins and got not in wins:
                raise _fail(call, text, f"{p} can win next move", expected=" or ".join(map(str, wins)), got=repr(got), note="Return the number (1-9) of the blank square on a line whose product is " + ("18 (3 * 3 * 2)." if p == "X" else "50 (5 * 5 * 2)."), checked=checked)
    return _passed("poss_win", f"{2 * len(boards):,} cases")
