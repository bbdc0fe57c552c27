"""A check's failure and how it is told: `CheckFailed`, the boards drawn, the line of the
student's code that raised, the one-line summary a passing check prints, and the switch to the
CS50 project's own words (`cs50_specification`).
"""

from __future__ import annotations

import contextlib
import functools
import linecache
import sys
import traceback
from pathlib import Path
from typing import Any, Iterator, Optional

import ttt.tictactoe as ref
from ttt.games import bigboard, classic, nineboard
from ttt.errors import library_file
from ttt.limits import OutOfCpuTime, cpu_limit


Board = list  # a CS50 board: 3 lists of 3 squares, each "X", "O" or None


Text = str  # the same board as nine characters 'X', 'O', '.' row by row


class CheckFailed(AssertionError):
    """A student's function gave a wrong answer; the message shows one failing case per kind of failure.

    ``kind`` names what went wrong ("wrong player", "raised IndexError", ...), ``texts`` the
    boards (nine characters) it went wrong on, ``fatal`` is True when checking further is pointless
    (the function uses the reference solution), ``suspicious`` a note for the instructor.
    """

    kind: str = ""
    texts: tuple = ()
    fatal: bool = False
    suspicious: str = ""  # what the instructor is told when the failure suggests cheating, not a slip


class ReferenceCalled(BaseException):
    """Raised inside a student's function when it calls a switched-off reference function.

    A BaseException, so a student's ``except Exception`` cannot swallow it.
    """


def draw(board: Any) -> str:
    """Return a CS50 board (or a nine-character text board) drawn in three lines, with X to move / game over."""
    text = _text_or_none(board)
    if text is None:
        return f"    {board!r}"
    cells = [" " if c == "." else c for c in text]
    rows = [" " + " | ".join(cells[r : r + 3]) for r in (0, 3, 6)]
    picture = "\n   ---+---+---\n".join("   " + row for row in rows)
    if classic.is_terminal(text):
        w = classic.winner(text)
        status = f"{w} has won" if w else "a tie: the board is full"
    else:
        status = f"{classic.to_move(text)} to move"
    return f"{picture}\n   ({status})"


def _text_or_none(board: Any) -> Optional[str]:
    if isinstance(board, str) and len(board) == 9:
        return board
    try:
        return ref.to_text(board)
    except ValueError:
        return None


def _fail(call: str, board: Any, problem: str, *, expected: Any = None, got: Any = None, note: str = "", checked: str = "",
          kind: str = "") -> CheckFailed:
    """Return the CheckFailed for one case on a 3x3 board: the call, the board drawn, expected and got.

    `kind` names the kind of failure (default: the problem), so that a check can show one board of each.
    """
    failed = _failure(call, problem, _picture(board), expected=expected, got=got, note=note, checked=checked)
    failed.kind = kind or problem
    failed.texts = (_text_or_none(board),) if not isinstance(board, bigboard.BigState) and _text_or_none(board) else ()
    return failed


def _picture(board: Any) -> list[str]:
    """Return the lines that show a board (a 3x3 board or a nine-board state) in a message; none for None."""
    if isinstance(board, bigboard.BigState):
        return _big_picture(board)
    if board is None:
        return []
    text = _text_or_none(board)
    as_list = ref.from_text(text) if isinstance(board, str) and text is not None else board
    return ["board:", draw(board), f"   as a list: {as_list!r}"]


def _type_name(value: Any) -> str:
    """Return the name of `value`'s type (or of `value`, a type) as a CS50 student knows it.

    Python's own types by their name (``bool``), a library's with its module (``numpy.bool``, so
    that it is not mistaken for Python's), this package's exceptions by the Python exception they
    are (``ValueError``), the student's own by their name.
    """
    told = getattr(value, "remote_type", None)  # raised by a submission's function in its sandbox: its own name
    if isinstance(told, str) and told:
        return told
    kind = value if isinstance(value, type) else type(value)
    module = kind.__module__ or ""
    if module in ("builtins", "__main__"):
        return kind.__qualname__
    if module.split(".")[0] in ("ttt", "grader"):
        return next(base.__qualname__ for base in kind.__mro__ if base.__module__ == "builtins")
    where = getattr(sys.modules.get(module.split(".")[0]), "__file__", "") or ""
    if "-packages" in where or "/lib/python" in where:
        return f"{module.split('.')[0]}.{kind.__qualname__}"
    return kind.__qualname__


def _failure(call: str, problem: str, picture: list[str], *, expected: Any, got: Any, note: str, checked: str) -> CheckFailed:
    """Return a CheckFailed whose message is the call and problem, a picture, expected, returned, a note."""
    lines = [f"{call}: {problem}", ""]
    if picture:
        lines += picture + [""]
    if expected is not None:
        lines.append(f"expected:{'' if str(expected).startswith(chr(10)) else ' '}{expected}")  # a board drawn starts on the next line
    if got is not None:
        lines.append(f"returned:{'' if str(got).startswith(chr(10)) else ' '}{got}")
    if note:
        lines += ([] if lines[-1] == "" else [""]) + [note]
    if checked:
        lines += ["", f"(the first failing case; {checked})"]
    return CheckFailed("\n".join(lines).rstrip())


@functools.lru_cache(maxsize=4096)
def _not_the_student_s(filename: str) -> bool:
    """True if `filename` is the grader's, ``ttt``'s, or an installed library's (not the student's)."""
    return library_file(filename, also=(str(Path(__file__).resolve().parent.parent),))


def leave_it_as_it_was(name: str, what: str = "board") -> str:
    """Return the advice to a function `name` that changed the `what` it was given, in terms that fit it."""
    if what != "board":
        return f"{name} must leave the {what} it is given as it was: change a copy of it (list(B) makes one), never the {what} itself."
    copy = ("copy.deepcopy(board) makes one; board.copy() copies only the outer list, so the rows are still shared" if name == "result"
            else "result(board, action) makes one, or copy.deepcopy(board); board.copy() shares the rows")
    return f"{name} must leave the board it is given as it was: make the move on a copy ({copy}), never on the board itself."


def _student_line(error: BaseException) -> str:
    """Return 'line N of f: <code>' for the innermost frame of the error in the student's code."""
    told = getattr(error, "remote_line", None)  # raised in the submission's sandbox, which said where
    if isinstance(told, str):
        return told.rstrip().removesuffix(":")  # a line whose code could not be read ends at its number
    for frame, line in reversed(list(traceback.walk_tb(error.__traceback__))):
        code = frame.f_code
        if _not_the_student_s(code.co_filename):
            continue
        text = linecache.getline(code.co_filename, line, frame.f_globals).strip()
        return f"in {code.co_name}, line {line}: {text}" if text else f"in {code.co_name}, line {line}"
    return ""


def _raised_on(error: BaseException, shown: Any = None) -> str:
    """Return the lines that draw the board a function of the package was given when it raised `error`
    (the package's result, given a board where the game is over by the student's search, say), if it
    is not the board `shown` already: a message about that board is then drawn beside that board. '' if none."""
    frames = [frame for frame, _ in traceback.walk_tb(error.__traceback__)]
    ours = [_not_the_student_s(frame.f_code.co_filename) for frame in frames]
    last = max((k for k, mine in enumerate(ours) if not mine), default=None)  # the student's innermost frame
    if last is None:
        return ""
    for inner in frames[last + 1:]:  # the package's frames it called, outermost first
        board = inner.f_locals.get("board")
        text = _text_or_none(board) if isinstance(board, list) else None
        if text is None:
            continue
        if shown is not None and _text_or_none(shown) == text:
            return ""
        action = inner.f_locals.get("action")
        call = f"{inner.f_code.co_name}(board{', ' + repr(action) if action is not None else ''})"
        return f"{call} raised it, on this board (given it by your {frames[last].f_code.co_name}):\n{draw(text)}"
    return ""


_CS50 = [False]  # set by cs50_specification()


@contextlib.contextmanager
def cs50_specification() -> Iterator[None]:
    """Inside the block, the checks follow the CS50 project's own words where the lessons are stricter.

    For a plain CS50 ``tictactoe.py`` (``ttt-grader check``): an invalid action may raise any
    Exception (the CS50 specification says "raise an exception"; the lessons ask for ValueError),
    and ``terminal`` may answer with NumPy's bool (a boolean value) as well as Python's.
    """
    _CS50.append(True)
    try:
        yield
    finally:
        _CS50.pop()


def _invalid_action_error() -> type:
    """Return the exception an invalid action must raise: any Exception by CS50's words, ValueError in the lessons."""
    return Exception if _CS50[-1] else ValueError


def _is_bool(value: Any) -> bool:
    """Return True for True or False (and for NumPy's bool where the CS50 specification's words apply)."""
    return isinstance(value, bool) or (_CS50[-1] and type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_"))


class Passed(str):
    """A check's one-line summary; ``broken_by`` names the student's own functions that made it fail as written."""

    broken_by: tuple = ()


def _show(value: Any) -> str:
    """Return `value` as written in Python; with its type's name only where the writing does not tell it
    (a class of the student's own, a library's value)."""
    if value is None:
        return "None"
    if type(value) in (str, int, float, bool, tuple, list, set, frozenset, dict):
        return _shown(value)
    return f"{value!r} ({_type_name(value)})"


def _passed(name: str, what: str, seconds: Optional[float] = None) -> str:
    """Print and return the summary of a check that passed."""
    tail = f" ({seconds:.1f} s)" if seconds is not None else ""
    return _summary(f"{name}: correct on {what}{tail}.")


def _summary(text: str) -> str:
    """Print a hidden check's summary, labelled as the hidden tests' output ("hidden tests: ..."), and return it."""
    print(f"hidden tests: {text}")
    return text


def _shown(value: Any) -> str:
    """Return repr(value), a set's items sorted so that it reads in a fixed order; for a value holding an
    int too long for repr (more than ``sys.get_int_max_str_digits()`` digits), what it is instead."""
    try:
        if isinstance(value, (set, frozenset)) and value:
            try:
                return "{" + ", ".join(map(repr, sorted(value))) + "}"
            except TypeError:
                pass
        return repr(value)
    except ValueError:
        what = f"an int of {value.bit_length():,} bits" if isinstance(value, int) else f"a {type(value).__name__}"
        return f"<{what}, too long to write out>"


def _kind_of(value: Any) -> str:
    """Return what `value` is in a student's words: 'None', 'the text 'x'', 'the number 3', 'True', 'a list of 9 items'."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, str):
        return f"the text {value!r}"
    if isinstance(value, (int, float)):
        return f"the number {_shown(value)}"
    if isinstance(value, (list, tuple, set, dict)):
        name = {list: "list", tuple: "tuple", set: "set", dict: "dictionary"}.get(type(value), type(value).__name__)
        return f"a {name} of {_plural_items(len(value))}"
    return repr(value)


def _what_it_is(value: Any) -> str:
    """Return what `value` is in a student's words (`_kind_of`); a library's value by its type (``numpy.bool``)."""
    if type(value).__module__ == "builtins" or value is None:
        return _kind_of(value)
    return _type_name(value)


def _plural_items(n: int) -> str:
    return "1 item" if n == 1 else f"{n} items"


def _draw_big(state: Any) -> str:
    game = nineboard.NineBoard()
    where = "any open board" if state.sent_to is None else f"board {state.sent_to}"
    if game.is_terminal(state):
        where = "the game is over"
    else:
        where = f"{game.to_move(state)} to move, on {where}"
    text = "\n".join("   " + row for row in game.format(state).splitlines())
    return f"{text}\n   ({where})"


def _big_picture(state: Any) -> list[str]:
    """Return the lines that show a nine-board state in a failure message."""
    return ["state (boards 0-8 row by row, cells 0-8 in each):", _draw_big(state), f"   as a state: {state!r}"]
