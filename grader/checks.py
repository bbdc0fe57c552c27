"""The checks the lessons' hidden tests call: a student's function against the reference.

Each ``check_*`` function runs the student's function on every relevant position (the 3x3
space is small: all 5,478 reachable positions, ``ttt.games.classic.reachable_positions()``),
compares each answer with the reference (``ttt.tictactoe``, ``ttt.games.classic``,
``ttt.agents``, ``ttt.games.nineboard``), and prints a one-line summary, which it also returns
(hidden tests assign it, ``_ = check_player(player)``: nbgrader reads a value a grade cell leaves
as its output as the cell's score). On the first wrong answer it raises
`CheckFailed` (an AssertionError) whose message draws the board, shows the input, what was
expected and what came back: only that first case, and no grader code.

While the student's function runs, the reference functions that compute the same thing are
switched off (calling them raises inside the student's code), and the student's code is
searched for them beforehand, so a function that hands the work to the reference fails with a
message saying so. A function that is still the lesson's stub raises NotImplementedError as is.
Each function is graded on its own: where it uses another of the student's functions (``result``
calls ``player``, ``terminal`` calls ``winner``), the check puts the reference one in its place
while it runs. In a kernel, a failing check shows its message alone, without a traceback, so no
line of the hidden test is shown.

Time budgets. The checks bound their work, not their time: each checks a fixed set of cases
(all 39,366 line_score cases, 3,539 nine-board positions for evaluate, 119 depth-limited moves,
the 4,520 positions of the pruning count), so the same submission is checked on the same cases
on any machine; `returned`'s deadline for a visible test counts CPU time, not wall time. The
course's cell limit (``grader.course.CELL_TIMEOUT``, 120 s of wall time) sits far above what
the slowest honest solution needs (see the README's instructor section for the measured CPU
times). `check_minimax` and `check_alphabeta` check the positions `search_plan` gives: first a
fixed set that is always checked (every position with at most six empty squares, and every
earlier position up to symmetry), then the rest, from late to early and the empty board last,
each only if the time measured so far says it will end within `SEARCH_BUDGET` (20 s).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import linecache
import signal
import sys
import threading
import time
import traceback
import types
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

import ttt.tictactoe as ref
from ttt import agents, search
from ttt.agents import classic as ref_players
from ttt.games import bigboard, classic, nineboard

SEARCH_BUDGET = 20.0  # seconds a minimax or alpha-beta check may spend past its fixed set
ALPHABETA_CALLS_FRACTION = 0.4  # alpha-beta may call result at most this share of minimax's calls

Board = list  # a CS50 board: 3 lists of 3 squares, each "X", "O" or None
Text = str  # the same board as nine characters 'X', 'O', '.' row by row


class CheckFailed(AssertionError):
    """A student's function gave a wrong answer; the message shows the first failing case."""


class ReferenceCalled(BaseException):
    """Raised inside a student's function when it calls a switched-off reference function.

    A BaseException, so a student's ``except Exception`` cannot swallow it.
    """


# --- pictures and messages ---------------------------------------------------------------------


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
        status = f"{w} has won" if w else "a draw: the board is full"
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


def _fail(call: str, board: Any, problem: str, *, expected: Any = None, got: Any = None, note: str = "", checked: str = "") -> CheckFailed:
    """Return the CheckFailed for one case on a 3x3 board: the call, the board drawn, expected and got."""
    picture = []
    if isinstance(board, bigboard.BigState):
        picture = _big_picture(board)
    elif board is not None:
        picture = ["board:", draw(board)] + ([] if isinstance(board, str) else [f"   as a list: {board!r}"])
    return _failure(call, problem, picture, expected=expected, got=got, note=note, checked=checked)


def _failure(call: str, problem: str, picture: list[str], *, expected: Any, got: Any, note: str, checked: str) -> CheckFailed:
    """Return a CheckFailed whose message is the call and problem, a picture, expected, returned, a note."""
    lines = [f"{call}: {problem}", ""]
    if picture:
        lines += picture + [""]
    if expected is not None:
        lines.append(f"expected: {expected}")
    if got is not None:
        lines.append(f"returned: {got}")
    if note:
        lines += ["", note]
    if checked:
        lines += ["", f"(the first failing case; {checked})"]
    return CheckFailed("\n".join(lines).rstrip())


def _student_line(error: BaseException) -> str:
    """Return 'line N of f: <code>' for the innermost frame of the error in the student's code."""
    here = str(Path(__file__).resolve().parent)
    package = str(Path(ref.__file__).resolve().parent)
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        name = str(Path(frame.filename).resolve()) if frame.filename and not frame.filename.startswith("<") else frame.filename
        if name.startswith(here) or name.startswith(package) or "site-packages" in name or "/lib/python" in name:
            continue
        code = frame.line or linecache.getline(frame.filename, frame.lineno).strip()
        return f"in {frame.name}, line {frame.lineno}: {code}"
    return ""


# --- the reference is off limits while the student's code runs ------------------------------


def _trap(*args: Any, **kwargs: Any) -> Any:
    checks = __import__("grader.checks", fromlist=["ReferenceCalled"])
    raise checks.ReferenceCalled(__import__("sys")._getframe().f_code.co_name)


def _label(function: Callable) -> str:
    return f"{function.__module__}.{function.__qualname__}"


def _plain(function: Any) -> Any:
    """Return the Python function under an lru_cache or staticmethod wrapper."""
    while hasattr(function, "__wrapped__"):
        function = function.__wrapped__
    return getattr(function, "__func__", function)


# What each check forbids: the reference function and whatever in the package computes the same.
_SEARCHES = (search.minimax, search.alphabeta, search.depth_limited, search.iterative_deepening)
_PLAYERS = (agents.make, agents.cs50, agents.as_player, agents.from_cs50)
FORBIDDEN: dict[str, tuple[Callable, ...]] = {
    "player": (ref.player, classic.to_move),
    "actions": (ref.actions, classic.moves),
    "result": (ref.result, classic.play),
    "winner": (ref.winner, classic.winner, classic.has_line),
    "terminal": (ref.terminal, classic.is_terminal),
    "utility": (ref.utility, classic.utility),
    "minimax": (ref.minimax, classic.solve, classic.value, classic.optimal_moves, classic._negamax)
    + _SEARCHES
    + _PLAYERS,
    "rk_board": (),
    "poss_win": (ref_players.poss_win,),
    "win_block": (ref_players.win_block_move, classic.winning_squares) + _PLAYERS,
}
FORBIDDEN["alphabeta"] = FORBIDDEN["minimax"]
FORBIDDEN["line_score"] = (bigboard.line_count_small, bigboard.line_count_evaluate, nineboard.small_lines)
FORBIDDEN["evaluate"] = FORBIDDEN["line_score"] + (nineboard.evaluate,)
FORBIDDEN["depth_limited"] = _SEARCHES + _PLAYERS + (search.mcts,)


def _forbidden_objects(kind: str) -> list[Callable]:
    return [_plain(f) for f in FORBIDDEN.get(kind, ())]


@contextlib.contextmanager
def _reference_off(functions: Sequence[Callable]) -> Iterator[None]:
    """Make each of `functions` raise ReferenceCalled, wherever it is called from, inside the block.

    The function objects themselves get a trap as their code, so aliases, default arguments
    and ``from ... import`` copies are all caught; the code is put back afterwards.
    """
    swapped = []
    patched = []
    try:
        for f in functions:
            if isinstance(f, types.FunctionType) and not f.__code__.co_freevars:
                trap = _trap.__code__.replace(co_name=_label(f))
                swapped.append((f, f.__code__))
                f.__code__ = trap
        wrappers = {id(w): w for fs in FORBIDDEN.values() for w in fs if not isinstance(w, types.FunctionType) and _plain(w) in functions}
        if wrappers:  # a cache in front of a trapped function could answer without calling it
            for module in [m for name, m in list(sys.modules.items()) if name == "ttt" or name.startswith("ttt.")]:
                for attr, value in list(vars(module).items()):
                    if id(value) in wrappers:
                        patched.append((module, attr, value))
                        setattr(module, attr, _trap_for(value))
        yield
    finally:
        for f, code in swapped:
            f.__code__ = code
        for module, attr, value in patched:
            setattr(module, attr, value)


def _trap_for(wrapper: Any) -> Callable:
    label = _label(_plain(wrapper))

    def trap(*args: Any, **kwargs: Any) -> Any:
        raise ReferenceCalled(label)

    return trap


def _referenced_objects(function: Callable) -> Iterator[Any]:
    """Yield every global, default and closure value the student's function (and its helpers) use."""
    seen: set[int] = set()
    stack = [function]
    while stack:
        f = _plain(stack.pop())
        if not isinstance(f, types.FunctionType) or id(f) in seen:
            continue
        seen.add(id(f))
        names: set[str] = set()
        codes = [f.__code__]
        while codes:
            code = codes.pop()
            names.update(code.co_names)
            codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        values = [f.__globals__[n] for n in names if n in f.__globals__]
        values += list(f.__defaults__ or ()) + list((f.__kwdefaults__ or {}).values())
        values += [cell.cell_contents for cell in (f.__closure__ or ()) if _has_contents(cell)]
        for value in values:
            yield value
            if isinstance(value, types.FunctionType) and value.__globals__ is f.__globals__:
                stack.append(value)  # the student's own helper, defined in the same notebook


def _has_contents(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _refuse_reference(function: Callable, name: str, kind: str) -> None:
    """Raise CheckFailed if `function` is, or uses, a reference function this check forbids."""
    forbidden = {id(f): f for f in _forbidden_objects(kind)}
    if id(_plain(function)) in forbidden:
        raise CheckFailed(
            f"{name} is {_label(_plain(function))}, the reference solution, not your own function: "
            f"write {name} yourself in the solution cell."
        )
    for value in _referenced_objects(function):
        f = forbidden.get(id(_plain(value)))
        if f is not None:
            raise _used_reference(name, _label(f))


def _used_reference(name: str, label: str) -> CheckFailed:
    return CheckFailed(
        f"{name} uses {label}, which is part of the reference solution this lesson asks you to "
        f"write yourself. Remove it and compute the answer in your own code."
    )


_ALLOWED = [False]  # set by reference_allowed()


@contextlib.contextmanager
def reference_allowed() -> Iterator[None]:
    """Inside the block, the checks accept the reference functions themselves (to test the checks)."""
    _ALLOWED.append(True)
    try:
        yield
    finally:
        _ALLOWED.pop()


class _Student:
    """Calls to one student function, guarded: the reference off, exceptions told plainly."""

    def __init__(self, function: Callable, name: str, kind: Optional[str] = None) -> None:
        if not callable(function):
            raise CheckFailed(f"{name} should be a function, but it is {type(function).__name__} {function!r}.")
        self.function = function
        self.name = name
        self.kind = kind or name
        self.forbidden = [] if _ALLOWED[-1] else _forbidden_objects(self.kind)
        if not _ALLOWED[-1]:
            _refuse_reference(function, name, self.kind)

    def __call__(self, *args: Any, call: str, board: Any = None, checked: str = "") -> Any:
        try:
            with _reference_off(self.forbidden):
                return self.function(*args)
        except ReferenceCalled as called:
            raise _used_reference(self.name, str(called)) from None
        except NotImplementedError:
            raise NotImplementedError(
                f"{self.name} is not written yet: replace `raise NotImplementedError()` with your code."
            ) from None
        except RecursionError:
            raise _fail(call, board, "went into endless recursion (RecursionError): check the case that stops it.", checked=checked) from None
        except Exception as error:  # the student's bug, shown as what it is
            where = _student_line(error)
            raise _fail(
                call, board, f"raised {type(error).__name__}: {error}", note=where, checked=checked
            ) from None


@contextlib.contextmanager
def _helpers_replaced(function: Callable, **references: Callable) -> Iterator[None]:
    """Inside the block, the helpers `function` finds in its namespace are the references given.

    So a function is graded on its own: a mistake in the student's ``winner`` does not also
    fail their ``terminal``. Only names the namespace already holds as functions are replaced.
    """
    namespace = getattr(_plain(function), "__globals__", None)
    if namespace is None:
        yield
        return
    found = {name: f for name, f in references.items() if callable(namespace.get(name)) and namespace[name] is not function}
    saved = {name: namespace[name] for name in found}
    namespace.update(found)
    try:
        yield
    finally:
        namespace.update(saved)


def _board(text: Text) -> Board:
    """Return a fresh CS50 board for a text board."""
    return ref.from_text(text)


def _unchanged(text: Text, board: Board, call: str, name: str, checked: str) -> None:
    """Raise CheckFailed if the student's function changed the board it was given."""
    after = _text_or_none(board)
    if after != text:
        raise _fail(
            call,
            _board(text),
            f"{name} changed the board it was given.",
            expected="the board left as it was",
            got=f"the board changed to {board!r}",
            note=f"{name} must only look at the board: other code (minimax above all) still needs it as it was.",
            checked=checked,
        )


def _answers(student: _Student, boards: Iterable[Text], checked: str) -> Iterator[tuple[Text, Any]]:
    """Yield (board, answer) for each board: the student's function called on a fresh CS50 board,
    which must come back unchanged."""
    call = f"{student.name}(board)"
    for text in boards:
        board = _board(text)
        got = student(board, call=call, board=_board(text), checked=checked)
        _unchanged(text, board, call, student.name, checked)
        yield text, got


def _show(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})" if value is not None else "None"


def _positions(*, over: Optional[bool] = None) -> list[Text]:
    """Return every reachable position in BFS order (fewest marks first); filter by game over."""
    boards = classic.reachable_positions()
    if over is None:
        return list(boards)
    return [b for b in boards if classic.is_terminal(b) == over]


def _action(square: int) -> tuple[int, int]:
    return divmod(square, 3)


def _passed(name: str, what: str, seconds: Optional[float] = None) -> str:
    """Print and return the summary of a check that passed."""
    tail = f" ({seconds:.1f} s)" if seconds is not None else ""
    return _summary(f"{name}: correct on {what}{tail}.")


def _summary(text: str) -> str:
    print(text)
    return text


def _show_plainly(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Optional[int] = None) -> list[str]:
    """IPython's display of an error: a check's failure as its message alone, anything else as usual.

    A failing check shows no traceback, so no line of the hidden test that called it.
    """
    if getattr(value, "_from_check", False):
        stb = [f"\x1b[0;31m{etype.__name__}\x1b[0m: {value}"]
    else:
        stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
    shell._showtraceback(etype, value, stb)  # IPython leaves showing a custom exception to its handler
    return stb


def _install_display() -> None:
    """Register `_show_plainly` with the running IPython kernel, if there is one."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    if shell is not None and not getattr(shell, "_ttt_checks_display", False):
        shell.set_custom_exc((CheckFailed, NotImplementedError), _show_plainly)
        shell._ttt_checks_display = True


def _guarded(check: Callable) -> Callable[..., str]:
    """Return `check` so that a failure shows only its message, without the grader's frames.

    Checks print their one-line summary and also return it. A hidden test assigns it
    (``_ = check_player(player)``): nbgrader would read a value left as a grade cell's output
    as the cell's score.
    """

    @functools.wraps(check)
    def run(*args: Any, **kwargs: Any) -> str:
        __tracebackhide__ = True  # noqa: F841  (IPython and pytest hide this frame)
        _install_display()
        try:
            return check(*args, **kwargs)
        except (CheckFailed, NotImplementedError) as error:
            error.__traceback__ = None
            error.__context__ = None
            error._from_check = True  # type: ignore[attr-defined]
            raise error from None

    return run


# --- visible tests --------------------------------------------------------------------------------
#
# The lessons' visible test cells call these, so that a wrong answer reads like a hidden check's
# message: the call, the board drawn, what was expected and what came back, the type first.


def _is_action(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in value)


def _is_board(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 3 and all(isinstance(row, list) and len(row) == 3 for row in value)


KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "mark": (lambda v: v in (ref.X, ref.O), "X or O"),
    "winner": (lambda v: v is None or v in (ref.X, ref.O), "X, O or None"),
    "set": (lambda v: isinstance(v, set), "a set"),
    "bool": (lambda v: isinstance(v, bool), "True or False (a bool)"),
    "int": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an int"),
    "board": (_is_board, "a board: a list of three rows, each a list of three squares"),
    "ten ints": (lambda v: isinstance(v, list) and len(v) == 10 and all(isinstance(x, int) for x in v), "a list of ten ints, B[0] to B[9]"),
    "action": (lambda v: v is None or _is_action(v), "an action: a tuple (i, j), or None if the game is over"),
    "move": (_is_action, "a move: a tuple (board, cell)"),
}


def _visible(error: CheckFailed) -> CheckFailed:
    """Return `error` marked to show as its message alone in a kernel (no traceback)."""
    _install_display()
    error._from_check = True  # type: ignore[attr-defined]
    return error


def _shown(value: Any) -> str:
    """Return repr(value), a set's items sorted so that it reads in a fixed order."""
    if isinstance(value, (set, frozenset)) and value:
        try:
            return "{" + ", ".join(map(repr, sorted(value))) + "}"
        except TypeError:
            pass
    return repr(value)


def _kind_of(value: Any) -> str:
    """Return the type of `value`, with its length for a container: 'list of 9 items'."""
    name = type(value).__name__
    if isinstance(value, (list, tuple, set, dict)):
        return f"a {name} of {_plural_items(len(value))}"
    return name


def _plural_items(n: int) -> str:
    return "1 item" if n == 1 else f"{n} items"


class _OutOfTime(BaseException):
    """Raised in the main thread when a call's time limit is up (a BaseException: ``except Exception`` misses it)."""


@contextlib.contextmanager
def _deadline(seconds: Optional[float]) -> Iterator[None]:
    """Inside the block, raise `_OutOfTime` once the process has used `seconds` of CPU time.

    CPU time (``ITIMER_PROF``, SIGPROF; the main thread on Unix only), not wall time, so the
    same code gets the same verdict on a busy machine as on a quiet one. Elsewhere, or with
    `seconds` None, the block runs without a limit. A profiling timer set before the block is
    replaced while it runs.
    """
    if seconds is None or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(signum: int, frame: Any) -> None:
        raise _OutOfTime()

    previous = signal.signal(signal.SIGPROF, ring)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def returned(function: Callable, board: Any, *args: Any, call: Optional[str] = None, seconds: Optional[float] = None,
             slow: str = "") -> Any:
    """Return ``function(board, *args)``, or raise CheckFailed saying what went wrong.

    It fails if the function raises (other than NotImplementedError: the stub), changes the board
    it was given, or, with `seconds`, is still running after using that many seconds of CPU
    time (then `slow`, a hint, follows the message). The message names the call (`call`, or one
    made from the function's name), draws the board as it was before the call, and points at the
    line of the student's code that raised.
    """
    __tracebackhide__ = True  # noqa: F841
    call = call or f"{function.__name__}({', '.join(['board', *map(repr, args)])})"
    before = copy.deepcopy(board)
    try:
        with _deadline(seconds):
            got = function(board, *args)
    except NotImplementedError:
        raise
    except _OutOfTime:
        raise _visible(_fail(call, before, f"still searching after {seconds:g} s of CPU time" + (f": {slow}" if slow else ""))) from None
    except Exception as error:  # noqa: BLE001  (what the student's function raised is the answer)
        where = _student_line(error).removesuffix(": ")
        raise _visible(_fail(call, before, f"raised {type(error).__name__}: {error}", note=f"(raised {where})" if where else "")) from None
    if board != before:
        name = getattr(function, "__name__", "the function")
        changed = draw(board) if _text_or_none(board) is not None else f"    {board!r}"
        raise _visible(_fail(call, before, f"{name} changed the board it was given (drawn here as it was before the call).",
                             expected="the board left as it was", got=f"the board changed to\n{changed}",
                             note=f"{name} must only look at the board: copy it (copy.deepcopy) before trying a move on it."))
    return got


def legal_only(function: Callable) -> Callable[[Board], tuple[int, int]]:
    """Return a CS50 player that calls `function` on the board and returns its move if it is a free square.

    Otherwise (an error, a changed board, None or an occupied square) it raises CheckFailed
    with the board drawn, so a game between players stops with what went wrong and where.
    """

    @functools.wraps(function)
    def play(board: Board) -> tuple[int, int]:
        __tracebackhide__ = True  # noqa: F841
        name = getattr(function, "__name__", "the function")
        move = returned(function, board)
        expect(move, call=f"{name}(board)", kind="action", board=board, accept=sorted(ref.actions(board)),
               why=f"your {name} returned {move!r} on this board: a player must return a free square (i, j)")
        return move

    return play


def expect_at_most(got: int, limit: int, *, what: str, hint: str = "") -> None:
    """Return None if `got` <= `limit`, else raise CheckFailed: 'what: got, at most limit', and the hint."""
    __tracebackhide__ = True  # noqa: F841
    if got > limit:
        raise _visible(_failure(what, f"{got:,} is more than the limit", [], expected=f"at most {limit:,}", got=f"{got:,}", note=hint, checked=""))


def expect(got: Any, expected: Any = None, *, call: str, kind: Optional[str] = None, board: Any = None,
           accept: Optional[Iterable[Any]] = None, why: str = "") -> None:
    """Return None if `got` (what ``call`` returned) is right, else raise CheckFailed.

    First the type: `got` must be of `kind` (a key of `KINDS`: 'set', 'bool', 'action', ...).
    Then the value: equal to `expected`, or, with `accept`, one of those. The message names the
    call and `why`, draws `board`, and says what was expected and what was returned, as the hidden
    checks' messages do.
    """
    __tracebackhide__ = True  # noqa: F841
    if accept is not None:
        accept = list(accept)
        wanted = " or ".join(map(_shown, accept[:6])) + (f" or ... ({len(accept)} in all)" if len(accept) > 6 else "")
    else:
        wanted = _shown(expected)
    if kind is not None:
        fits, name = KINDS[kind]
        if not fits(got):
            raise _visible(_fail(call, board, f"should return {name}, not {_kind_of(got)}", expected=wanted, got=_shown(got)))
    right = got in accept if accept is not None else got == expected
    if not right:
        raise _visible(_fail(call, board, why or "wrong answer", expected=wanted, got=_shown(got)))


def expect_raises(function: Callable, *args: Any, error: type = ValueError, call: str, board: Any = None, why: str = "") -> None:
    """Return None if ``function(*args)`` raises `error` (or a subclass), else raise CheckFailed saying what it did."""
    __tracebackhide__ = True  # noqa: F841
    try:
        got = function(*args)
    except error:
        return
    except Exception as other:  # noqa: BLE001  (what the student's function raised is the answer)
        problem = f"expected {error.__name__}, got {type(other).__name__}" + (f" ({why})" if why else "")
        raise _visible(_fail(call, board, problem, expected=f"{error.__name__} raised",
                             got=f"{type(other).__name__} raised: {other}")) from None
    raise _visible(_fail(call, board, f"returned instead of raising {error.__name__} ({why})" if why else f"returned instead of raising {error.__name__}",
                         expected=f"{error.__name__} raised", got=_show(got)))


def optimal_actions(board: Board) -> set[tuple[int, int]]:
    """Return the set of optimal actions (i, j) for the player to move on a CS50 board (empty if the game is over)."""
    return {_action(square) for square in classic.optimal_moves(ref.to_text(board))}


# --- lesson 1: player, actions, result ------------------------------------------------------------


@_guarded
def check_player(player: Callable) -> str:
    """Print and return a one-line summary if `player(board)` is X or O as the reference says on every position not over.

    The CS50 project: any answer is accepted on a board where the game is over.
    """
    student = _Student(player, "player")
    boards = _positions(over=False)
    checked = f"{len(boards):,} positions where the game is not over are checked"
    call = f"{student.name}(board)"
    for text, got in _answers(student, boards, checked):
        expected = ref.player(_board(text))
        if not (isinstance(got, str) and got == expected):
            note = ""
            if got in ("X", "O"):
                note = f"X moves first; then the turns alternate. This board has {text.count('X')} X and {text.count('O')} O."
            elif got is None:
                note = "player must return X or O (the CS50 project: X = 'X', O = 'O'); None means it returned nothing."
            raise _fail(call, _board(text), "wrong player", expected=repr(expected), got=_show(got), note=note, checked=checked)
    return _passed("player", f"all {len(boards):,} positions where the game is not over")


@_guarded
def check_actions(actions: Callable) -> str:
    """Print and return a one-line summary if `actions(board)` is the set of empty squares (i, j) on every position not over."""
    student = _Student(actions, "actions")
    boards = _positions(over=False)
    checked = f"{len(boards):,} positions where the game is not over are checked"
    call = f"{student.name}(board)"
    for text, got in _answers(student, boards, checked):
        expected = ref.actions(_board(text))
        shown = "{" + ", ".join(map(str, sorted(expected))) + "}"
        if not isinstance(got, (set, frozenset)):
            note = "actions must return a set, e.g. {(0, 1), (2, 2)}: build it with set() and .add((i, j))."
            if isinstance(got, (list, tuple)):
                note = f"actions returned a {type(got).__name__}; the CS50 project asks for a set: wrap it as set(...) or build a set with .add((i, j))."
            raise _fail(call, _board(text), f"should return a set, not {type(got).__name__}", expected=shown, got=_show(got), note=note, checked=checked)
        bad = [a for a in got if not (isinstance(a, tuple) and len(a) == 2)]
        if bad:
            raise _fail(call, _board(text), f"each action should be a tuple (i, j), but the set holds {bad[0]!r}", expected=shown, got=repr(got), checked=checked)
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
    return _passed("actions", f"all {len(boards):,} positions where the game is not over")


INVALID_ACTIONS: tuple[tuple[Any, str], ...] = (
    ((-1, 0), "row -1 is off the board; in Python board[-1] is the last row, so without a check it silently plays there"),
    ((0, -1), "column -1 is off the board; in Python row[-1] is the last square, so without a check it silently plays there"),
    ((3, 0), "row 3 is off the board (rows are 0, 1, 2)"),
    ((1, 3), "column 3 is off the board (columns are 0, 1, 2)"),
)


@_guarded
def check_result(result: Callable) -> str:
    """Print and return a one-line summary if `result` is right on every legal action of every position not over.

    It must return a new board with the mover's mark added, leave its input unchanged, and
    raise ValueError (``ttt.InvalidActionError`` is one) for a taken square or a square off
    the board. While it runs, the student's own ``player`` (if any) is the reference one.
    """
    student = _Student(result, "result")
    with _helpers_replaced(result, player=ref.player):
        return _check_result(student)


def _check_result(student: _Student) -> str:
    boards = _positions(over=False)
    count = sum(len(classic.moves(b)) for b in boards)
    checked = f"{count:,} moves in {len(boards):,} positions are checked"
    for text in boards:
        for square in classic.moves(text):
            action = _action(square)
            board = _board(text)
            call = f"result(board, {action})"
            got = student(board, action, call=call, board=_board(text), checked=checked)
            _unchanged(text, board, call, "result", checked)
            expected = _board(classic.play(text, square))
            if got is board:
                raise _fail(call, _board(text), "returned the very board it was given", note="Make a new board (copy.deepcopy(board)) and change the copy.", checked=checked)
            if got != expected:
                raise _fail(call, _board(text), f"wrong board after {ref.player(_board(text))} plays {action}", expected=repr(expected), got=_show(got), note=f"expected, drawn:\n{draw(expected)}" if _text_or_none(got) else "", checked=checked)
    invalid = 0
    for text in boards:
        taken = [s for s, c in enumerate(text) if c != "."]
        cases = [(_action(s), f"square {_action(s)} is taken by {text[s]}") for s in taken]
        if text in (boards[0], boards[5], boards[40]):
            cases += list(INVALID_ACTIONS)
        for action, why in cases:
            invalid += 1
            _expect_invalid(student, text, action, why, checked)
    return _passed("result", f"all {count:,} legal moves, and {invalid:,} invalid ones raise ValueError")


def _expect_invalid(student: _Student, text: Text, action: Any, why: str, checked: str) -> None:
    board = _board(text)
    call = f"result(board, {action!r})"
    try:
        with _reference_off(student.forbidden):
            got = student.function(board, action)
    except ReferenceCalled as called:
        raise _used_reference(student.name, str(called)) from None
    except NotImplementedError:
        raise NotImplementedError("result is not written yet: replace `raise NotImplementedError()` with your code.") from None
    except ValueError:
        _unchanged(text, board, call, "result", checked)
        return
    except Exception as error:
        raise _fail(
            call,
            _board(text),
            f"raised {type(error).__name__} ({error}); an invalid action should raise ValueError",
            note=f"{why}. Check the action first and `raise ValueError(\"...\")` saying why it is invalid.",
            checked=checked,
        ) from None
    raise _fail(call, _board(text), "returned a board instead of raising ValueError", got=_show(got), note=f"{why}. The CS50 project: an invalid action must raise an exception.", checked=checked)


# --- lesson 2: winner, terminal, utility, Rich & Knight's board ------------------------------


@_guarded
def check_winner(winner: Callable) -> str:
    """Print and return a one-line summary if `winner(board)` is X, O or None as the reference says, on all 5,478 positions."""
    student = _Student(winner, "winner")
    boards = _positions()
    checked = f"all {len(boards):,} positions are checked"
    for text, got in _answers(student, boards, checked):
        expected = ref.winner(_board(text))
        if got != expected or not (got is None or isinstance(got, str)):
            note = "If no one has three in a row, winner returns None (not 'None', not EMPTY's string)." if expected is None else ""
            raise _fail("winner(board)", _board(text), "wrong winner", expected=repr(expected), got=_show(got), note=note, checked=checked)
    return _passed("winner", f"all {len(boards):,} positions")


@_guarded
def check_terminal(terminal: Callable) -> str:
    """Print and return a one-line summary if `terminal(board)` is True exactly on won or full boards, on all 5,478 positions.

    While it runs, the student's own ``winner`` (if any) is the reference one.
    """
    student = _Student(terminal, "terminal")
    with _helpers_replaced(terminal, winner=ref.winner):
        return _check_terminal(student)


def _check_terminal(student: _Student) -> str:
    boards = _positions()
    checked = f"all {len(boards):,} positions are checked"
    for text, got in _answers(student, boards, checked):
        expected = ref.terminal(_board(text))
        if not isinstance(got, bool):
            raise _fail("terminal(board)", _board(text), f"should return True or False, not {type(got).__name__}", expected=repr(expected), got=_show(got), checked=checked)
        if got != expected:
            note = "The game is over when someone has three in a row, or when every square is filled."
            raise _fail("terminal(board)", _board(text), "wrong answer", expected=repr(expected), got=repr(got), note=note, checked=checked)
    return _passed("terminal", f"all {len(boards):,} positions")


@_guarded
def check_utility(utility: Callable) -> str:
    """Print and return a one-line summary if `utility(board)` is 1, -1 or 0 on every position where the game is over.

    The CS50 project's text gives an O win utility 1: a typo, it is -1. While it runs, the student's
    own ``winner`` and ``terminal`` (if any) are the reference ones.
    """
    student = _Student(utility, "utility")
    with _helpers_replaced(utility, winner=ref.winner, terminal=ref.terminal):
        return _check_utility(student)


def _check_utility(student: _Student) -> str:
    boards = _positions(over=True)
    checked = f"{len(boards):,} positions where the game is over are checked"
    for text, got in _answers(student, boards, checked):
        expected = ref.utility(_board(text))
        if isinstance(got, bool) or not isinstance(got, (int, float)) or got != expected:
            note = "X wins: 1; O wins: -1 (the CS50 project's text says 1 for O too: a typo); a draw: 0."
            raise _fail("utility(board)", _board(text), "wrong utility", expected=repr(expected), got=_show(got), note=note, checked=checked)
    return _passed("utility", f"all {len(boards):,} positions where the game is over")


_RK_CODE = {".": 2, "X": 3, "O": 5}


def rk_board(board: Board) -> list[int]:
    """Return Rich & Knight's board for a CS50 board: [0] unused (0), then B[1..9] row by row, 2 blank, 3 X, 5 O (Rich & Knight's Program 2)."""
    return [0] + [_RK_CODE[c] for c in ref.to_text(board)]


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
    for text in boards:
        for p in ("X", "O"):
            b = rk_board(_board(text))
            call = f"poss_win(B, {p!r}) with B = {b}"
            got = student(b, p, call=call, board=text, checked=checked)
            if b != rk_board(_board(text)):
                raise _fail(call, text, "poss_win changed the board B it was given", got=repr(b), checked=checked)
            wins = [s + 1 for s in classic.winning_squares(text, p)]
            if isinstance(got, bool) or not isinstance(got, int):
                raise _fail(call, text, f"should return a square number 1-9 or 0, not {type(got).__name__}", expected=" or ".join(map(str, wins)) or "0", got=_show(got), checked=checked)
            if not wins and got != 0:
                raise _fail(call, text, f"{p} cannot win with one move here", expected="0", got=repr(got), note=f"A line where {p} can win has product {18 if p == 'X' else 50}: two of {p}'s marks and a blank.", checked=checked)
            if wins and got not in wins:
                raise _fail(call, text, f"{p} can win next move", expected=" or ".join(map(str, wins)), got=repr(got), note="Return the number (1-9) of the blank square on a line whose product is " + ("18 (3 * 3 * 2)." if p == "X" else "50 (5 * 5 * 2)."), checked=checked)
    return _passed("poss_win", f"{2 * len(boards):,} cases")


# --- lesson 3: the win-block-best-square game's win-block player ------------------------------------------------------


@_guarded
def check_win_block(win_block: Callable) -> str:
    """Print and return a one-line summary if `win_block(board)` plays the win-block-best-square game's cpuMove on every position not over.

    It must win if it can (any winning square), else block (any square where the opponent
    would win), else take the first free square of 4, 0, 2, 6, 8, 1, 3, 5, 7 (the win-block-best-square game's
    BEST_MOVES, squares numbered row by row). The win-block-best-square game tests the block with its own piece, so
    as written it never blocks; the intent, blocking, is what is checked.
    """
    student = _Student(win_block, "win_block")
    boards = _positions(over=False)
    checked = f"{len(boards):,} positions where the game is not over are checked"
    for text, got in _answers(student, boards, checked):
        me = classic.to_move(text)
        wins = classic.winning_squares(text, me)
        blocks = classic.winning_squares(text, "O" if me == "X" else "X")
        if wins:
            allowed, why = wins, f"{me} can win at once"
        elif blocks:
            allowed, why = blocks, f"{me} cannot win at once, but must block the opponent's line"
        else:
            allowed, why = [next(s for s in classic.CENTRE_CORNERS_EDGES if text[s] == ".")], "no win and nothing to block: the first free square of centre, corners, edges (4, 0, 2, 6, 8, 1, 3, 5, 7)"
        square = _square_or_none(got)
        if square is None or square not in allowed:
            raise _fail(
                "win_block(board)",
                _board(text),
                why,
                expected=" or ".join(str(_action(s)) for s in allowed),
                got=_show(got),
                note="" if square is not None else "win_block returns an action (i, j): row i, column j.",
                checked=checked,
            )
    return _passed("win_block", f"all {len(boards):,} positions where the game is not over")


def _square_or_none(action: Any) -> Optional[int]:
    """Return the square 0-8 of an action (i, j), or None if it is not one."""
    try:
        i, j = action
    except (TypeError, ValueError):
        return None
    if isinstance(i, bool) or isinstance(j, bool) or not isinstance(i, int) or not isinstance(j, int):
        return None
    if not (0 <= i <= 2 and 0 <= j <= 2):
        return None
    return 3 * i + j


# --- lessons 4 and 5: minimax and alpha-beta -----------------------------------------------------

_SYMMETRIES = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8), (6, 3, 0, 7, 4, 1, 8, 5, 2), (8, 7, 6, 5, 4, 3, 2, 1, 0), (2, 5, 8, 1, 4, 7, 0, 3, 6),
    (2, 1, 0, 5, 4, 3, 8, 7, 6), (0, 3, 6, 1, 4, 7, 2, 5, 8), (6, 7, 8, 3, 4, 5, 0, 1, 2), (8, 5, 2, 7, 4, 1, 6, 3, 0),
)


def canonical(text: Text) -> Text:
    """Return the smallest of the eight rotations and reflections of a text board."""
    return min("".join(text[i] for i in p) for p in _SYMMETRIES)


@functools.lru_cache(maxsize=None)
def tree_size(text: Text) -> int:
    """Return the number of nodes of the full game tree below `text` (549,946 from the empty board)."""
    if classic.is_terminal(text):
        return 1
    return 1 + sum(tree_size(classic.play(text, s)) for s in classic.moves(text))


@functools.lru_cache(maxsize=None)
def search_plan() -> tuple[tuple[Text, ...], tuple[Text, ...]]:
    """Return (always checked, checked while the budget lasts) for the minimax and alpha-beta checks.

    Always: every position with at most six empty squares (the game over or not), latest
    first so that a failure shows a small board, then one of each symmetric family of the
    earlier ones. Then the rest, fewest empty squares first; the empty board is last.
    """
    boards = _positions()
    fixed = sorted((b for b in boards if b.count(".") <= 6), key=lambda b: b.count("."))  # stable: BFS order within
    seen = set()
    rest = []
    for b in sorted((b for b in boards if b.count(".") > 6), key=lambda b: (b.count("."), b)):
        c = canonical(b)
        if c not in seen and b != classic.EMPTY_BOARD:
            seen.add(c)
            fixed.append(b)
        else:
            rest.append(b)
    rest.sort(key=lambda b: (b == classic.EMPTY_BOARD, b.count(".")))
    return tuple(fixed), tuple(rest)


def _check_search(function: Callable, name: str, *, budget: float) -> str:
    """Print and return a one-line summary if `function(board)` returns an optimal move (None when over) on the planned positions."""
    student = _Student(function, name, kind="minimax")
    fixed, rest = search_plan()
    total = len(fixed) + len(rest)
    start = time.perf_counter()
    nodes_done = 0
    done = 0
    for k, text in enumerate(fixed + rest):
        if k >= len(fixed):  # past the fixed set: only if the measured speed says it fits
            elapsed = time.perf_counter() - start
            rate = elapsed / max(nodes_done, 1)
            if elapsed + 1.2 * rate * tree_size(text) > budget:
                continue
        _check_move(student, text, checked=f"{total:,} positions are checked, as far as the time budget allows")
        nodes_done += tree_size(text)
        done += 1
    seconds = time.perf_counter() - start
    if done == total:
        return _passed(name, f"all {total:,} positions", seconds)
        return
    print(
        f"{name}: correct on {done:,} of {total:,} positions ({seconds:.1f} s); the other {total - done:,} "
        f"(early in the game) were skipped to stay within the {budget:.0f}-second budget."
    )


def _check_move(student: _Student, text: Text, *, checked: str) -> None:
    """Raise CheckFailed unless the student's search returns an optimal action on `text` (None when over)."""
    name = student.name
    call = f"{name}(board)"
    ((_, got),) = _answers(student, [text], checked)
    if classic.is_terminal(text):
        if got is not None:
            raise _fail(call, _board(text), "the game is over, so there is no move to make", expected="None", got=_show(got), checked=checked)
        return
    square = _square_or_none(got)
    best = classic.optimal_moves(text)
    value = classic.value(text)
    expected = " or ".join(str(_action(s)) for s in best)
    if square is None or text[square] != ".":
        what = "an action (i, j) on an empty square" if square is None else f"an empty square, but {_action(square)} is taken"
        raise _fail(call, _board(text), f"should return {what}", expected=expected, got=_show(got), checked=checked)
    if square not in best:
        after = classic.value(classic.play(text, square))
        words = {1: "X wins", 0: "a draw", -1: "O wins"}
        raise _fail(
            call,
            _board(text),
            f"{_action(square)} is not an optimal move for {classic.to_move(text)}",
            expected=f"{expected} (with best play: {words[value]})",
            got=f"{got!r} (with best play after it: {words[after]})",
            checked=checked,
        )


@_guarded
def check_minimax(minimax: Callable, *, budget: float = SEARCH_BUDGET) -> str:
    """Print and return a one-line summary if `minimax(board)` returns an optimal action on the positions `search_plan` gives.

    Any optimal action is accepted: its value (with best play after it) must equal the
    position's value. On a board where the game is over it must return None.
    """
    return _check_search(minimax, "minimax", budget=budget)


@_guarded
def check_alphabeta(alphabeta: Callable, *, budget: float = SEARCH_BUDGET) -> str:
    """Print and return a one-line summary if `alphabeta(board)` returns an optimal action, as `check_minimax` checks."""
    return _check_search(alphabeta, "alphabeta", budget=budget)


@functools.lru_cache(maxsize=None)
def minimax_calls() -> int:
    """Return the calls to result plain minimax makes from every position not over, summed (2,121,015)."""
    return sum(tree_size(b) - 1 for b in _positions(over=False))


@contextlib.contextmanager
def counting_calls(namespace: dict, name: str = "result") -> Iterator[list[int]]:
    """Count the calls to ``namespace[name]`` inside the block; yields a one-item list holding the count."""
    if not callable(namespace.get(name)):
        raise CheckFailed(f"there is no {name}(board, action) function where your search looks for it, so its nodes cannot be counted.")
    original = namespace[name]
    count = [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return original(*args, **kwargs)

    namespace[name] = counted
    try:
        yield count
    finally:
        namespace[name] = original


@_guarded
def check_alphabeta_calls(alphabeta: Callable, *, fraction: float = ALPHABETA_CALLS_FRACTION) -> str:
    """Print and return a one-line summary if `alphabeta` prunes: at most `fraction` of plain minimax's calls to result.

    The nodes visited are counted through the calls to ``result`` in the student's namespace,
    summed over every position where the game is not over (4,520); plain minimax makes
    2,121,015 such calls, so the bound is 848,406. For scale: alpha-beta as in AIMA (cut off
    when v >= beta, or v <= alpha) makes about 14% of minimax's calls when it tries actions in
    the order a set gives them, 24% when it does not narrow the window at the root, 34% when it
    tries the best moves last; cutting off only when v > beta makes 48%, and fails. Every answer must
    also be optimal, and the count stops as soon as it passes the bound.
    """
    student = _Student(alphabeta, "alphabeta", kind="alphabeta")
    namespace = getattr(_plain(alphabeta), "__globals__", None)
    if namespace is None:
        raise CheckFailed("alphabeta should be a function defined in the notebook, so its calls to result can be counted.")
    boards = _positions(over=False)
    bound = int(fraction * minimax_calls())
    checked = f"{len(boards):,} positions are checked"
    with counting_calls(namespace) as count:
        for text in boards:
            before = count[0]
            _check_move(student, text, checked=checked)
            if count[0] == before and text.count(".") > 1:
                raise _fail("alphabeta(board)", _board(text), "never called result(board, action)", note="The grader counts the nodes your search visits through its calls to result: make every child board with result.", checked=checked)
            if count[0] > bound:
                raise _fail(
                    "alphabeta(board)",
                    None,
                    f"prunes too little: {count[0]:,} calls to result before reaching the end of the positions",
                    expected=f"at most {bound:,} calls to result in all ({fraction:.0%} of the {minimax_calls():,} plain minimax makes)",
                    got=f"more than {bound:,}, stopped at position {boards.index(text) + 1:,} of {len(boards):,}",
                    note="Cut off as soon as v >= beta in max_value (v <= alpha in min_value): with values only -1, 0 and 1, equal values are common and cutting off on them matters.",
                )
    share = count[0] / minimax_calls()
    return _summary(
        f"alphabeta: {count[0]:,} calls to result over {len(boards):,} positions, {share:.1%} of plain minimax's "
        f"{minimax_calls():,} (the bound is {fraction:.0%})."
    )


# --- lesson 6: the CSC 242 write-up's nine-board game --------------------------------------------------------


def line_score(small: str, player: str) -> int:
    """Return the CSC 242 write-up's score of one small board for `player`: over the 8 lines holding no
    opponent mark, 5 for a line with one of `player`'s marks, 10 for a line with two (the CSC 242 write-up's
    boardVal, as its prose says; a full line scores nothing, it has ended the game)."""
    them = "O" if player == "X" else "X"
    score = 0
    for a, b, c in classic.LINES:
        line = small[a] + small[b] + small[c]
        if them not in line:
            score += (0, 5, 10, 0)[line.count(player)]
    return score


@functools.lru_cache(maxsize=None)
def nine_board_positions(games: int = 120, seed: int = 3) -> tuple:
    """Return every position of `games` seeded random nine-board games (the start once), in order met."""
    import random

    game = nineboard.NineBoard()
    rng = random.Random(seed)
    seen: dict = {game.initial(): None}
    for _ in range(games):
        state = game.initial()
        while not game.is_terminal(state):
            state = game.play(state, rng.choice(list(game.moves(state))))
            seen.setdefault(state, None)
    return tuple(seen)


def _smalls() -> Iterator[str]:
    """Yield all 3**9 fillings of a small board with X, O and '.'."""
    import itertools

    for cells in itertools.product("XO.", repeat=9):
        yield "".join(cells)


def _draw_big(state: Any) -> str:
    game = nineboard.NineBoard()
    where = "any open board" if state.board is None else f"board {state.board}"
    if game.is_terminal(state):
        where = "the game is over"
    else:
        where = f"{game.to_move(state)} to move, on {where}"
    text = "\n".join("   " + row for row in game.format(state).splitlines())
    return f"{text}\n   ({where})"


def _big_picture(state: Any) -> list[str]:
    """Return the lines that show a nine-board state in a failure message."""
    return ["state (boards 0-8 row by row, cells 0-8 in each):", _draw_big(state), f"   as a state: {state!r}"]


def _fail_big(call: str, state: Any, problem: str, *, expected: Any = None, got: Any = None, note: str = "", checked: str = "") -> CheckFailed:
    """Return the CheckFailed for one case on a nine-board state, drawn."""
    return _failure(call, problem, _big_picture(state), expected=expected, got=got, note=note, checked=checked)


@contextlib.contextmanager
def substituted(namespace: dict, **functions: Callable) -> Iterator[None]:
    """Inside the block, `namespace[name]` is `function` for each name given; put back afterwards."""
    missing = object()
    saved = {name: namespace.get(name, missing) for name in functions}
    namespace.update(functions)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is missing:
                namespace.pop(name, None)
            else:
                namespace[name] = value


@_guarded
def check_line_score(student_line_score: Callable) -> str:
    """Print and return a one-line summary if `line_score(small, player)` equals `line_score` on all 3**9 small boards, for X and O."""
    student = _Student(student_line_score, "line_score")
    count = 0
    checked = "all 19,683 fillings of a small board, for X and for O, are checked"
    for small in _smalls():
        for p in ("X", "O"):
            count += 1
            call = f"line_score({small!r}, {p!r})"
            got = student(small, p, call=call, board=None, checked=checked)
            expected = line_score(small, p)
            if isinstance(got, bool) or not isinstance(got, (int, float)) or got != expected:
                picture = "\n".join("   " + " ".join(small[r : r + 3]) for r in (0, 3, 6))
                raise _fail(call, None, f"wrong score for {p}", expected=repr(expected), got=_show(got),
                            note=f"the small board:\n{picture}\n\nEach of the 8 lines with no {'O' if p == 'X' else 'X'}: 5 for one {p}, 10 for two {p}, 0 for none or three.", checked=checked)
    return _passed("line_score", f"all {count:,} cases")


@_guarded
def check_evaluate(evaluate: Callable) -> str:
    """Print and return a one-line summary if `evaluate(state)` equals the CSC 242 write-up's heuristic (``line_count_evaluate``).

    Checked on every position of 120 seeded random nine-board games. While it runs, the
    student's own ``line_score`` (if the notebook has one) is replaced by the reference, so a
    mistake there is not counted twice.
    """
    student = _Student(evaluate, "evaluate")
    namespace = getattr(_plain(evaluate), "__globals__", {})
    positions = nine_board_positions()
    checked = f"{len(positions):,} positions from random games are checked"
    swap = {"line_score": line_score} if callable(namespace.get("line_score")) else {}
    with substituted(namespace, **swap):
        for state in positions:
            got = student(state, call="evaluate(state)", board=None, checked=checked)
            expected = bigboard.line_count_evaluate(state)
            if isinstance(got, bool) or not isinstance(got, (int, float)) or got != expected:
                per_board = ", ".join(f"{bigboard.line_count_small(state.small(b)):+d}" for b in range(9))
                raise _fail_big("evaluate(state)", state, "wrong estimate", expected=f"{expected:g}", got=_show(got),
                                note=f"Board by board, X's line score minus O's: {per_board}.", checked=checked)
    return _passed("evaluate", f"{len(positions):,} positions")


def _limited_value(state: Any, depth: int) -> float:
    """Return the depth-limited alpha-beta value of `state` with the CSC 242 write-up's heuristic (0: the estimate itself)."""
    game = nineboard.NineBoard()
    if game.is_terminal(state):
        return game.utility(state)
    if depth == 0:
        return bigboard.line_count_evaluate(state)
    return search.depth_limited(game, state, depth=depth, evaluate=bigboard.line_count_evaluate).value


@functools.lru_cache(maxsize=None)
def depth_limited_cases() -> tuple:
    """Return the (state, depth) pairs `check_depth_limited` asks about: 40 positions, depths 1-3."""
    import random

    game = nineboard.NineBoard()
    rng = random.Random(6)
    live = [s for s in nine_board_positions() if not game.is_terminal(s)]
    picked = [game.initial()] + rng.sample(live, 39)
    cases = []
    for k, state in enumerate(picked):
        depths = (1, 2) if state.board is None else (1, 2, 3)
        cases += [(state, d) for d in depths]
    return tuple(cases)


@_guarded
def check_depth_limited(depth_limited_move: Callable) -> str:
    """Print and return a one-line summary if `depth_limited_move(state, depth)` returns a move with the best depth-limited value.

    For each case of `depth_limited_cases`, the move's child, searched one level less deep
    (with the CSC 242 write-up's heuristic at the limit and true utilities where the game ends), must
    have the value of the position searched `depth` deep: any move that achieves it is
    accepted. While it runs, the student's own ``evaluate`` and ``line_score`` are replaced by
    the reference, so a mistake there is not counted twice.
    """
    student = _Student(depth_limited_move, "depth_limited_move", kind="depth_limited")
    namespace = getattr(_plain(depth_limited_move), "__globals__", {})
    game = nineboard.NineBoard()
    cases = depth_limited_cases()
    where = f"{len(cases)} moves: {len({state for state, _ in cases})} positions from random games, at depths 1 to 3"
    checked = f"{where} are checked"
    swap = {name: f for name, f in (("evaluate", bigboard.line_count_evaluate), ("line_score", line_score)) if callable(namespace.get(name))}
    start = time.perf_counter()
    with substituted(namespace, **swap):
        for state, depth in cases:
            call = f"depth_limited_move(state, {depth})"
            got = student(state, depth, call=call, board=None, checked=checked)
            if got not in game.moves(state):
                raise _fail_big(call, state, "not a legal move", expected=f"a move (board, cell) from {list(game.moves(state))}", got=_show(got), checked=checked)
            target = _limited_value(state, depth)
            value = _limited_value(game.play(state, got), depth - 1)
            if value != target:
                better = [m for m in game.moves(state) if _limited_value(game.play(state, m), depth - 1) == target]
                raise _fail_big(
                    call, state, f"{got} is not the best move looking {depth} move{'s' if depth > 1 else ''} ahead",
                    expected=f"{' or '.join(map(str, better))}, worth {target:g} for X",
                    got=f"{got}, worth {value:g} for X",
                    note="Values are for X: X takes the largest, O the smallest. At the depth limit a position that is not over gets evaluate(state); one that is over keeps game.utility(state).",
                    checked=checked,
                )
    return _passed("depth_limited_move", where, time.perf_counter() - start)


__all__ = [
    "ALPHABETA_CALLS_FRACTION",
    "SEARCH_BUDGET",
    "CheckFailed",
    "ReferenceCalled",
    "canonical",
    "check_actions",
    "check_alphabeta",
    "check_alphabeta_calls",
    "check_depth_limited",
    "check_evaluate",
    "check_line_score",
    "check_minimax",
    "check_player",
    "check_poss_win",
    "check_result",
    "check_rk_board",
    "check_terminal",
    "check_utility",
    "check_win_block",
    "check_winner",
    "counting_calls",
    "depth_limited_cases",
    "draw",
    "line_score",
    "nine_board_positions",
    "minimax_calls",
    "reference_allowed",
    "rk_board",
    "search_plan",
    "substituted",
    "tree_size",
]
