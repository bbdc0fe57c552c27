"""The checks the lessons' hidden tests call: a student's function against the reference.

Each ``check_*`` function runs the student's function on every relevant position (the 3x3
space is small: all 5,478 reachable positions, ``ttt.games.classic.reachable_positions()``),
compares each answer with the reference (``ttt.tictactoe``, ``ttt.games.classic``,
``ttt.agents``, ``ttt.games.nineboard``), and prints a one-line summary, which it also returns
(hidden tests assign it, ``_ = check_player(player)``: nbgrader reads a value a grade cell leaves
as its output as the cell's score). On wrong answers it raises `CheckFailed` (an
AssertionError) whose message lists each kind of mistake once, with its board drawn, the input,
what was expected and what came back, and no grader code.

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
times). `check_minimax` and `check_alphabeta` check the 4,616 positions `search_plan` gives:
every position with at most two marks (the empty board and the early game), one of each
symmetric family with three or four, and every position with five or more; no clock decides
which.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import linecache
import numbers
import re
import signal
import sys
import threading
import time
import traceback
import types
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

import ttt.tictactoe as ref
from ttt import search
from ttt.agents import classic as ref_players
from ttt.games import bigboard, classic, nineboard
from ttt.games.base import Game

ALPHABETA_CALLS_FRACTION = 0.4  # alpha-beta may call result at most this share of minimax's calls

Board = list  # a CS50 board: 3 lists of 3 squares, each "X", "O" or None
Text = str  # the same board as nine characters 'X', 'O', '.' row by row


class CheckFailed(AssertionError):
    """A student's function gave a wrong answer; the message shows one failing case per kind of failure.

    ``kind`` names what went wrong ("wrong player", "raised IndexError", ...), ``texts`` the
    boards (nine characters) it went wrong on, ``fatal`` is True when checking further is pointless
    (the function uses the reference solution).
    """

    kind: str = ""
    texts: tuple = ()
    fatal: bool = False


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


def _fail(call: str, board: Any, problem: str, *, expected: Any = None, got: Any = None, note: str = "", checked: str = "",
          kind: str = "") -> CheckFailed:
    """Return the CheckFailed for one case on a 3x3 board: the call, the board drawn, expected and got.

    `kind` names the kind of failure (default: the problem), so that a check can show one board of each.
    """
    picture = []
    if isinstance(board, bigboard.BigState):
        picture = _big_picture(board)
    elif board is not None:
        text = _text_or_none(board)
        as_list = ref.from_text(text) if isinstance(board, str) and text is not None else board
        picture = ["board:", draw(board), f"   as a list: {as_list!r}"]
    failed = _failure(call, problem, picture, expected=expected, got=got, note=note, checked=checked)
    failed.kind = kind or problem
    failed.texts = (_text_or_none(board),) if not isinstance(board, bigboard.BigState) and _text_or_none(board) else ()
    return failed


def _type_name(value: Any) -> str:
    """Return the name of `value`'s type (or of `value`, a type) as a CS50 student knows it.

    Python's own types by their name (``bool``), a library's with its module (``numpy.bool``, so
    that it is not mistaken for Python's), this package's exceptions by the Python exception they
    are (``ValueError``), the student's own by their name.
    """
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
        lines.append(f"expected: {expected}")
    if got is not None:
        lines.append(f"returned: {got}")
    if note:
        lines += ([] if lines[-1] == "" else [""]) + [note]
    if checked:
        lines += ["", f"(the first failing case; {checked})"]
    return CheckFailed("\n".join(lines).rstrip())


@functools.lru_cache(maxsize=4096)
def _not_the_student_s(filename: str) -> bool:
    """True if `filename` is this package's, ``ttt``'s, or an installed library's (not the student's)."""
    if not filename or filename.startswith("<"):
        return False
    name = str(Path(filename).resolve())
    ours = (str(Path(__file__).resolve().parent), str(Path(ref.__file__).resolve().parent))
    return name.startswith(ours) or "site-packages" in name or "/lib/python" in name


def _student_line(error: BaseException) -> str:
    """Return 'line N of f: <code>' for the innermost frame of the error in the student's code."""
    for frame, line in reversed(list(traceback.walk_tb(error.__traceback__))):
        code = frame.f_code
        if _not_the_student_s(code.co_filename):
            continue
        text = linecache.getline(code.co_filename, line, frame.f_globals).strip()
        return f"in {code.co_name}, line {line}: {text}"
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


# What each check grades: the one function (or module) of the package that computes it. The
# denylist is derived from these: every function and class of ``ttt`` and ``grader`` whose code
# reaches one of them (`forbidden`) is refused, under any name or alias, so nothing is listed
# by hand as the package grows. A student's function that uses one fails with the same message
# in the visible tests (`expect`, `returned`) as in the hidden check.
REFERENCE: dict[str, tuple[Any, ...]] = {
    "player": (classic.to_move,),
    "actions": (classic.free_squares,),
    "result": (classic.play,),
    "winner": (classic.completed_lines,),
    "terminal": (classic.is_terminal,),
    "utility": (classic.utility,),
    "minimax": (classic.solve, search),
    "alphabeta": (classic.solve, search),
    "rk_board": (ref_players.program2_board,),
    "poss_win": (classic.line_threats,),
    "win_block": (classic.line_threats,),
    "line_score": (bigboard.line_score,),
    "evaluate": (bigboard.line_count_evaluate, bigboard.line_count_small),
    "depth_limited": (search,),
}
_KIND_OF_NAME = {"depth_limited_move": "depth_limited"}  # a function's name -> the check that grades it
_PACKAGES = ("ttt", "grader")


def _ours(value: Any) -> bool:
    """True for a function, class or module of ``ttt`` or ``grader``."""
    name = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
    return isinstance(name, str) and name.split(".")[0] in _PACKAGES


def _code_names(function: types.FunctionType) -> set[str]:
    """Return every name a function's code (and the code nested in it) looks up."""
    names: set[str] = set()
    codes = [function.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return names


def _named(value: Any, names: set[str], depth: int = 0) -> Iterator[Any]:
    """Yield `value` and what code that looks up `names` reaches through it: a module's
    attributes (``ttt.games.bigboard.small_winner``), a class's or an instance's methods
    (``game.play``), the callables in a dict, list or tuple (a registry of players)."""
    yield value
    if depth > 4 or value is REFERENCE:  # the table of references names them all; it computes nothing
        return
    if isinstance(value, types.ModuleType):
        if _ours(value):
            for name in names:
                if name in vars(value):
                    yield from _named(vars(value)[name], names, depth + 1)
    elif isinstance(value, dict):
        for item in list(value.values())[:1000]:
            yield from _named(item, names, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value[:1000]:
            yield from _named(item, names, depth + 1)
    elif not isinstance(value, types.FunctionType):
        cls = value if isinstance(value, type) else type(value)
        for name in names | {"__init__", "__call__"}:
            for base in cls.__mro__:
                if name in vars(base):
                    if _ours(base):
                        yield _plain(vars(base)[name])
                    break


def _uses(function: Any) -> Iterator[Any]:
    """Yield what a function names: its globals (and what they reach), defaults and closure values."""
    f = _plain(function)
    if isinstance(f, type):
        yield from _named(f, set())
        return
    if not isinstance(f, types.FunctionType):
        return
    names = _code_names(f)
    values = [f.__globals__[n] for n in names if n in f.__globals__]
    values += list(f.__defaults__ or ()) + list((f.__kwdefaults__ or {}).values())
    values += [cell.cell_contents for cell in (f.__closure__ or ()) if _has_contents(cell)]
    for value in values:
        yield from _named(value, names)


def _package_modules() -> list[types.ModuleType]:
    return [m for name, m in list(sys.modules.items()) if name.split(".")[0] in _PACKAGES and isinstance(m, types.ModuleType)]


_MODULES_SEEN: list = [-1, frozenset()]


def _modules_key() -> frozenset:
    """Return the names of the package modules imported now (recomputed when sys.modules grows)."""
    if _MODULES_SEEN[0] != len(sys.modules):
        _MODULES_SEEN[:] = [len(sys.modules), frozenset(m.__name__ for m in _package_modules())]
    return _MODULES_SEEN[1]


def public_callables() -> list[Any]:
    """Return every public function and class of ``ttt`` and ``grader`` (imported now), and the
    public methods of those classes, once each, in a fixed order."""
    found: dict[int, Any] = {}
    for module in sorted(_package_modules(), key=lambda m: m.__name__):
        for name, value in sorted(vars(module).items()):
            if name.startswith("_") or not callable(value) or not _ours(value) or isinstance(value, types.ModuleType):
                continue
            found.setdefault(id(value), value)
            if isinstance(value, type):
                for attr, member in sorted(vars(value).items()):
                    if not attr.startswith("_") and isinstance(_plain(member), types.FunctionType):
                        found.setdefault(id(_plain(member)), _plain(member))
    return list(found.values())


def _everything() -> list[Any]:
    """Return every function and class defined in ttt and grader, and their classes' methods (plain)."""
    found: dict[int, Any] = {}
    for module in _package_modules():
        for value in list(vars(module).values()):
            f = _plain(value)
            if isinstance(f, (types.FunctionType, type)) and _ours(f):
                found[id(f)] = f
                for member in (vars(f).values() if isinstance(f, type) else ()):
                    if isinstance(_plain(member), types.FunctionType):
                        found[id(_plain(member))] = _plain(member)
    return list(found.values())


@functools.lru_cache(maxsize=64)
def _derived(kind: str, modules: frozenset) -> tuple[dict[int, Any], tuple[Any, ...]]:
    """Return (forbidden {id: function}, the functions to trap) for a check, over the package
    modules imported now (`modules`)."""
    references: dict[int, Any] = {}
    for r in REFERENCE.get(kind, ()):
        members = [v for v in vars(r).values() if isinstance(_plain(v), types.FunctionType) and _plain(v).__module__ == r.__name__] \
            if isinstance(r, types.ModuleType) else [r]
        references.update((id(_plain(m)), _plain(m)) for m in members)
    everything = _everything()
    uses = {id(f): {id(_plain(u)) for u in _uses(f)} for f in everything}
    found = dict(references)
    found.update((id(f), f) for f in everything if f.__module__.split(".")[0] == "grader")  # the grader is no course material
    grown = True
    while grown:  # whatever reaches something forbidden is forbidden
        grown = False
        for f in everything:
            if id(f) not in found and uses[id(f)] & found.keys():
                found[id(f)] = f
                grown = True
    cached = {id(_plain(getattr(w, "__func__", w))) for _, _, w in _cache_sites(modules)}
    return found, tuple(f for i, f in found.items() if i in references or (i in cached and f.__module__.startswith("ttt")))


@functools.lru_cache(maxsize=8)
def _cache_sites(modules: frozenset) -> tuple[tuple[Any, str, Any], ...]:
    """Return (module or class, attribute, cached function) for every cache the package holds."""
    sites = []
    for module in _package_modules():
        holders = [module] + [v for v in vars(module).values() if isinstance(v, type) and v.__module__ == module.__name__]
        for holder in holders:
            for attr, value in list(vars(holder).items()):
                if hasattr(getattr(value, "__func__", value), "cache_info") and _ours(_plain(value)):
                    sites.append((holder, attr, value))
    return tuple(sites)


def forbidden(kind: str) -> dict[int, Any]:
    """Return {id: function} of everything in ``ttt`` and ``grader`` that a function graded by
    the check `kind` may not use: the check's `REFERENCE`, and every function or class whose
    code reaches it (through names, modules, methods, registries, defaults and closures)."""
    return _derived(kind, _modules_key())[0]


def _forbidden_objects(kind: str) -> list[Callable]:
    """Return the functions switched off while a student's function runs: the check's
    references, and the forbidden functions behind a cache (which could answer without them)."""
    return list(_derived(kind, _modules_key())[1])


@contextlib.contextmanager
def _reference_off(functions: Sequence[Callable]) -> Iterator[None]:
    """Make each of `functions` raise ReferenceCalled, wherever it is called from, inside the block.

    The function objects themselves get a trap as their code, so aliases, default arguments
    and ``from ... import`` copies are all caught; a cache in front of one is replaced by a trap
    wherever a module or class of the package holds it. All is put back afterwards.
    """
    swapped = []
    patched = []
    try:
        for f in functions:
            if isinstance(f, types.FunctionType) and not f.__code__.co_freevars:
                trap = _trap.__code__.replace(co_name=_label(f))
                swapped.append((f, f.__code__))
                f.__code__ = trap
        for holder, attr, value, trap in _trapped_sites(frozenset(id(f) for f in functions), _modules_key()):
            patched.append((holder, attr, value))
            setattr(holder, attr, trap)
        yield
    finally:
        for f, code in swapped:
            f.__code__ = code
        for holder, attr, value in patched:
            setattr(holder, attr, value)


@functools.lru_cache(maxsize=64)
def _trapped_sites(trapped: frozenset, modules: frozenset) -> tuple[tuple[Any, str, Any, Any], ...]:
    """Return (holder, attribute, cache, trap) for each cache site in front of a trapped function."""
    sites = []
    for holder, attr, value in _cache_sites(modules) if trapped else ():
        if id(_plain(getattr(value, "__func__", value))) in trapped:
            trap = _trap_for(value)
            sites.append((holder, attr, value, staticmethod(trap) if isinstance(value, staticmethod) else trap))
    return tuple(sites)


def _trap_for(wrapper: Any) -> Callable:
    label = _label(_plain(wrapper))

    def trap(*args: Any, **kwargs: Any) -> Any:
        raise ReferenceCalled(label)

    return trap


def _referenced_objects(function: Callable) -> Iterator[Any]:
    """Yield every object the student's function (and its helpers) name: globals (and what they
    reach: module attributes, methods, registries), defaults and closure values."""
    seen: set[int] = set()
    stack = [function]
    while stack:
        f = _plain(stack.pop())
        if not isinstance(f, types.FunctionType) or id(f) in seen:
            continue
        seen.add(id(f))
        for value in _uses(f):
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
    """Raise CheckFailed if `function` is, or uses, something of the package this check forbids."""
    refused = forbidden(kind)
    if id(_plain(function)) in refused:
        raise CheckFailed(
            f"{name} is {_label(_plain(function))}, the reference solution, not your own function: "
            f"write {name} yourself in the solution cell."
        )
    for value in _referenced_objects(function):
        f = refused.get(id(_plain(value)))
        if f is not None and f is not _plain(function):
            raise _used_reference(name, _label(f))


def _used_reference(name: str, label: str) -> CheckFailed:
    """Return the one message for a function that uses what its check refuses (hidden and visible tests alike)."""
    what = "the grader, not something your code may call" if label.startswith("grader.") else \
        "the reference solution this lesson asks you to write yourself"
    failed = CheckFailed(
        f"{name} uses {label}, which is part of {what}. Remove it and compute the answer in your own code "
        f"(using the package's own version of what a lesson asks you to write scores zero)."
    )
    failed.fatal = True
    return failed


_ALLOWED = [False]  # set by reference_allowed()


@contextlib.contextmanager
def reference_allowed() -> Iterator[None]:
    """Inside the block, the checks accept the reference functions themselves (to test the checks)."""
    _ALLOWED.append(True)
    try:
        yield
    finally:
        _ALLOWED.pop()


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


_NOTE: list = [None]  # a callable told (call, board) before each call of a student's function, or None


def _student_raised(error: BaseException) -> bool:
    """Return True if the student's code raised `error` itself (not a Ctrl-C or a time limit from outside)."""
    if isinstance(error, (ReferenceCalled, _OutOfTime)):
        return False
    if isinstance(error, KeyboardInterrupt):  # the kernel interrupts a cell with SIGINT: that is no answer
        frames = traceback.extract_tb(error.__traceback__)
        return bool(error.args) or bool(frames and (frames[-1].line or "").startswith("raise"))
    return True


def _not_an_exception(error: BaseException) -> str:
    """Return the sentence for a student's function that raised a BaseException that is not an Exception."""
    name = _type_name(error)
    said = f": {str(error).rstrip('.')}" if str(error) else ""
    return (f"raised {name}{said}. {name} is not an Exception: it is meant to stop the whole program "
            f"(Ctrl-C, sys.exit), and `except Exception` does not catch it, so the game would stop here. "
            f"Raise an Exception instead, for example raise ValueError(\"...\").")


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
        if _NOTE[0] is not None:
            _NOTE[0](call, board)
        try:
            with _reference_off(self.forbidden):
                return self.function(*args)
        except ReferenceCalled as called:
            raise _used_reference(self.name, str(called)) from None
        except NotImplementedError:
            raise NotImplementedError(
                f"{self.name} is not written yet: replace `raise NotImplementedError()` with your code."
            ) from None
        except SystemExit as exiting:
            raise _fail(call, board, f"exited (SystemExit: {exiting}) instead of returning an answer", checked=checked) from None
        except RecursionError:
            raise _fail(call, board, "went into endless recursion (RecursionError): check the case that stops it.", checked=checked) from None
        except Exception as error:  # the student's bug, shown as what it is
            where = _student_line(error)
            raise _fail(
                call, board, f"raised {_type_name(error)}: {error}", note=where, checked=checked, kind=f"raised {_type_name(error)}"
            ) from None
        except BaseException as error:  # SystemExit, KeyboardInterrupt, a class of the student's own
            if not _student_raised(error):
                raise
            raise _fail(call, board, _not_an_exception(error), note=_student_line(error), checked=checked,
                        kind=f"raised {_type_name(error)}") from None


class _Failures:
    """The failures of one check, the first of each kind; checking goes on after a failure."""

    def __init__(self, name: str, checked: str) -> None:
        self.name = name
        self.checked = checked
        self.found: dict[str, CheckFailed] = {}

    @contextlib.contextmanager
    def case(self) -> Iterator[None]:
        """Run one case: a CheckFailed inside is kept (the first of its kind) and the check goes on."""
        try:
            yield
        except CheckFailed as failed:
            if failed.fatal or not failed.kind:
                raise
            self.found.setdefault(failed.kind, failed)

    def each(self, boards: Iterable[Text], test: Callable[[Text], None]) -> None:
        """Run `test` on each board (as `_focus` narrows them), each a case of its own; then raise what failed."""
        for text in _focus(boards):
            with self.case():
                test(text)
        self.raise_any()

    def raise_any(self) -> None:
        """Raise one CheckFailed listing every kind of failure found, one board each; return if none."""
        if not self.found:
            return
        failures = list(self.found.values())
        bodies = [str(f).split("\n\n(the first failing case;")[0] for f in failures]
        if len(failures) == 1:
            message = f"{bodies[0]}\n\n(the first failing case; {self.checked})" if self.checked else bodies[0]
        else:
            parts = [f"{self.name}: {len(failures)} kinds of failure, one board each ({self.checked}):"]
            parts += [f"{k}. {body}" for k, body in enumerate(bodies, 1)]
            message = "\n\n".join(parts)
        combined = CheckFailed(message)
        combined.kind = failures[0].kind if len(failures) == 1 else "several"
        combined.texts = tuple(t for f in failures for t in f.texts)
        raise combined


_FOCUS: list = [None]  # None, or the boards (text) a check is narrowed to


def _focus(boards: Iterable[Text]) -> list[Text]:
    """Return `boards`, narrowed to the ones being looked at again (see `_on_its_own`)."""
    only = _FOCUS[-1]
    return list(boards) if only is None else [b for b in boards if b in only]


@contextlib.contextmanager
def _focused(texts: Optional[Iterable[Text]]) -> Iterator[None]:
    _FOCUS.append(None if texts is None else frozenset(texts))
    try:
        yield
    finally:
        _FOCUS.pop()


@contextlib.contextmanager
def _helpers_replaced(function: Callable, **references: Callable) -> Iterator[None]:
    """Inside the block, the helpers `function` finds in its namespace are the references given.

    Only names the namespace already holds as functions are replaced.
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


# --- as written, or with the CS50 functions it calls ---------------------------------------------
#
# A function passes if it is correct as written (calling the student's own helpers), or correct
# when the other graded functions it calls are the reference ones: so a bug costs one function,
# and a function that leans on the student's own unusual helper (terminal testing
# `actions(board) == []` with an actions that returns a list) is not failed for it either.

CS50_FUNCTIONS = ("initial_state", "player", "actions", "result", "winner", "terminal", "utility", "minimax")


@functools.lru_cache(maxsize=None)
def _reference_answers() -> dict:
    """Return the reference's answers on every reachable position, computed once, before any student code runs.

    The stand-in helpers answer from this table, so they never call a function a check has
    switched off (the reference ``utility`` calls the ``winner`` that ``check_winner`` forbids).
    """
    answers: dict = {name: {} for name in CS50_FUNCTIONS}
    for text in classic.reachable_positions():
        board = ref.from_text(text)
        answers["player"][text] = ref.player(board)
        answers["actions"][text] = frozenset(ref.actions(board))
        answers["winner"][text] = ref.winner(board)
        answers["terminal"][text] = ref.terminal(board)
        answers["utility"][text] = ref.utility(board)
        answers["minimax"][text] = ref.minimax(board)
        for square in range(9):
            try:
                answers["result"][text, square] = classic.play(text, square)
            except ValueError:
                answers["result"][text, square] = None
    return answers


def _stand_in(name: str) -> Callable:
    """Return the reference `name` (a CS50 function) answering from `_reference_answers`."""
    answers = _reference_answers()

    def cs50_function(*args: Any) -> Any:
        if name == "initial_state":
            return _board(classic.EMPTY_BOARD)
        text = _text_or_none(args[0]) if args else None
        if name == "result":
            square = _square_or_none(args[1]) if len(args) == 2 else None
            if square is None:
                raise ValueError(f"{args[1:]!r} is not an action (i, j) with i and j each 0, 1 or 2")
            after = answers["result"].get((text, square))
            if after is None:
                raise ValueError(f"the action {args[1]!r} is not allowed on this board: the square is taken or the game is over")
            return _board(after)
        if text not in answers[name]:
            raise ValueError(f"{name} was given {args[0]!r}, not a board that a game can reach")
        answer = answers[name][text]
        return set(answer) if name == "actions" else answer

    cs50_function.__name__ = cs50_function.__qualname__ = name
    return cs50_function


def _own_helpers(function: Callable, name: str) -> list[str]:
    """Return the CS50 functions other than `name` that the student wrote themselves, where `function` finds them."""
    namespace = getattr(_plain(function), "__globals__", None) or {}
    own = []
    for other in CS50_FUNCTIONS:
        helper = namespace.get(other)
        if other == name or not callable(helper) or helper is function or _plain(helper) is _plain(getattr(ref, other)):
            continue
        if isinstance(_plain(helper), types.FunctionType) and (_plain(helper).__module__ or "").split(".")[0] in ("ttt", "grader"):
            continue  # the package's own, handed to the student
        own.append(other)
    return own


class _Spy:
    """Wraps a student's helper during a check and notes where its answers differ from the CS50 answer."""

    def __init__(self, name: str, own: Callable, seen: dict) -> None:
        self.name, self.own, self.seen = name, own, seen

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        text = _text_or_none(args[0]) if args else None
        self.seen.setdefault(self.name, "")
        try:
            got = self.own(*args, **kwargs)
        except BaseException as error:
            self._note(f"raised {_type_name(error)}", text, args)
            raise
        try:
            wrong = self._wrong(got, text, args)
        except Exception:  # noqa: BLE001  (a strange answer: not comparable)
            wrong = f"returned {_show(got)}"
        if text is not None and _text_or_none(args[0]) != text:
            wrong = "changed the board it was given"
        if wrong:
            self._note(wrong, text, args)
        return got

    def _note(self, what: str, text: Optional[Text], args: tuple) -> None:
        if not self.seen.get(self.name):
            shown = repr(_board(text)) if text else repr(args[0] if args else ())
            self.seen[self.name] = f"your {self.name} {what} on the board {shown}"

    def _wrong(self, got: Any, text: Optional[Text], args: tuple) -> str:
        answers = _reference_answers()
        if self.name == "initial_state":
            return "" if got == _board(classic.EMPTY_BOARD) else f"returned {got!r}"
        if text is None or text not in answers["player"]:
            return ""
        over = answers["terminal"][text]
        if self.name == "result":
            square = _square_or_none(args[1]) if len(args) > 1 else None
            after = answers["result"].get((text, square)) if square is not None else None
            if after is None:
                return f"returned a board for the invalid action {args[1]!r}"
            return "" if _text_or_none(got) == after else f"returned {got!r} for the action {args[1]!r}"
        if self.name in ("player", "minimax") and over:
            return "" if self.name == "player" or got is None else f"returned {_show(got)}, not None"
        if self.name == "utility" and not over:
            return ""
        expected = answers[self.name][text]
        if self.name == "actions":
            right = isinstance(got, (set, frozenset)) and got == expected
        elif self.name == "minimax":
            right = _square_or_none(got) in classic.optimal_moves(text)
        elif self.name == "terminal":
            right = _is_bool(got) and got == expected
        else:
            right = got == expected and type(got) is type(expected)
        shown = "{" + ", ".join(map(str, sorted(expected))) + "}" if self.name == "actions" else repr(expected)
        return "" if right else f"returned {_show(got)} where the CS50 answer is {shown}"


def _is_bool(value: Any) -> bool:
    """Return True for True or False (and for NumPy's bool where the CS50 specification's words apply)."""
    return isinstance(value, bool) or (_CS50[-1] and type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_"))


class Passed(str):
    """A check's one-line summary; ``broken_by`` names the student's own functions that made it fail as written."""

    broken_by: tuple = ()


def _on_its_own(name: str, kind: Optional[str] = None) -> Callable:
    """Return a decorator for the check of CS50 function `name`: as written, or with the reference helpers.

    The check's body gets a `_Student` and returns its summary. If it fails as written and the
    function uses CS50 functions the student wrote, it is checked again with the reference ones in
    their place: first on the boards where it failed (if it still fails there, it fails on its
    own: that report is shown), then on everything. If it passes so, it passes, and the summary
    names the student's functions that broke it as written, and how.
    """

    def decorate(body: Callable[..., str]) -> Callable[..., str]:
        @functools.wraps(body)
        def check(function: Callable, **kwargs: Any) -> str:
            student = _Student(function, name, kind)
            own = _own_helpers(function, name)
            try:
                return Passed(_summary(_quietly(body, student, **kwargs)))
            except (CheckFailed, NotImplementedError) as error:
                if not own or getattr(error, "fatal", False):
                    raise
                texts = getattr(error, "texts", ())
                as_written = error
            stand_ins = {h: _stand_in(h) for h in own}
            function = _fresh(function, name)  # a memo filled by the student's own helpers would keep their answers
            student = _Student(function, name, kind)
            with _helpers_replaced(function, **stand_ins):
                if texts:
                    try:
                        with _focused(texts):
                            _quietly(body, student, **kwargs)
                    except (CheckFailed, NotImplementedError):
                        raise as_written from None  # still failing there: its own mistake, shown as written
                summary = _quietly(body, student, **kwargs)
            seen: dict = {}
            function = _fresh(function, name)
            student = _Student(function, name, kind)
            namespace = _plain(function).__globals__
            with _helpers_replaced(function, **{h: _Spy(h, namespace[h], seen) for h in own}), _focused(texts or None):
                with contextlib.suppress(CheckFailed, NotImplementedError):
                    _quietly(body, student, **kwargs)
            blamed = [h for h in own if seen.get(h)] or [h for h in own if h in seen] or own
            how = "; ".join(seen[h] for h in blamed if seen.get(h))
            called = [h for h in own if h in seen] or own
            text = (f"{summary.rstrip('.')}, with the CS50 {_and(called)} in place of yours. As written it fails, because it "
                    f"calls your own {_and(blamed)}" + (f" ({how})" if how else "") + ": that is marked there, not here.")
            passed = Passed(_summary(text))
            passed.broken_by = tuple(blamed)
            return passed

        return check

    return decorate


def _and(names: Sequence[str]) -> str:
    """Return 'a', 'a and b', 'a, b and c'."""
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


_FRESH: list = [None]  # a callable: name -> that function from a new copy of the student's file (ttt-grader check)


def _fresh(function: Callable, name: str) -> Callable:
    """Return `function` with its memo emptied: from a new copy of its file where one can be loaded, else with
    every ``functools.lru_cache`` in its namespace cleared (a notebook's own dict memo is left as it is)."""
    if _FRESH[0] is not None:
        return _FRESH[0](name)
    for value in list((getattr(_plain(function), "__globals__", None) or {}).values()):
        clear = getattr(value, "cache_clear", None)
        if callable(clear) and hasattr(value, "cache_info"):
            clear()
    return function


def _quietly(body: Callable[..., str], student: _Student, **kwargs: Any) -> str:
    """Run a check's body with its printed summary held back; return the summary."""
    with contextlib.redirect_stdout(io.StringIO()):
        return body(student, **kwargs)


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


def _answer(student: _Student, text: Text, checked: str) -> Any:
    """Return the student's function called on a fresh CS50 board for `text`, which must come back unchanged."""
    call = f"{student.name}(board)"
    board = _board(text)
    got = student(board, call=call, board=_board(text), checked=checked)
    _unchanged(text, board, call, student.name, checked)
    return got


def _answers(student: _Student, boards: Iterable[Text], checked: str) -> Iterator[tuple[Text, Any]]:
    """Yield (board, answer) for each board, as `_answer` gives it."""
    for text in boards:
        yield text, _answer(student, text, checked)


def _show(value: Any) -> str:
    return f"{value!r} ({_type_name(value)})" if value is not None else "None"


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
    """Print a hidden check's summary, labelled as the hidden tests' output ("hidden tests: ..."), and return it."""
    print(f"hidden tests: {text}")
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


def _not_written(name: str, raised: Optional[BaseException] = None) -> NotImplementedError:
    """Return the NotImplementedError a visible test shows for a stub: its message alone, no traceback.

    With the error `raised`, the stub named is the function that raised it (a `result` that
    calls an unwritten `player` names `player`).
    """
    if raised is not None:
        frames = traceback.extract_tb(raised.__traceback__)
        if frames and frames[-1].name.isidentifier() and frames[-1].name != "<module>":
            name = frames[-1].name
    error = NotImplementedError(f"{name} is not written yet: replace `raise NotImplementedError()` with your code.")
    _install_display()
    error._from_check = True  # type: ignore[attr-defined]
    return error


def _graded_as(call: str) -> tuple[str, Optional[str]]:
    """Return the function a visible test's `call` names (``winner`` for ``"winner(board)"``), and
    the check that grades it (None if none does)."""
    found = re.match(r"\s*([A-Za-z_]\w*)\s*\(", call or "")
    name = found.group(1) if found else ""
    kind = _KIND_OF_NAME.get(name, name)
    return name, kind if kind in REFERENCE else None


def _refuse_visibly(function: Any, name: str, kind: Optional[str]) -> list[Callable]:
    """Raise the hidden check's CheckFailed, shown as its message alone, if `function` is or
    uses what the check for `kind` refuses; return the functions to switch off while it runs."""
    if kind is None or _ALLOWED[-1] or not callable(function):
        return []
    try:
        _refuse_reference(function, name, kind)
    except CheckFailed as error:
        raise _visible(error) from None
    return _forbidden_objects(kind)


def returned(function: Callable, board: Any, *args: Any, call: Optional[str] = None, seconds: Optional[float] = None,
             slow: str = "", drawn: Any = None, what: str = "board") -> Any:
    """Return ``function(board, *args)``, or raise CheckFailed saying what went wrong.

    It fails if the function raises (NotImplementedError, the stub, is raised again saying so),
    changes the `board` it was given, or, with `seconds`, is still running after using that
    many seconds of CPU time (then `slow`, a hint, follows the message). The message names the call (`call`, or
    one made from the function's name), draws the board as it was before the call (or `drawn`,
    the position `board` stands for, when it is not a board itself: `what` names it, say
    "list B"), and points at the line of the student's code that raised.
    """
    __tracebackhide__ = True  # noqa: F841
    call = call or f"{getattr(function, '__name__', 'the function')}({', '.join(['board', *map(repr, args)])})"
    name, graded = _graded_as(call)
    off = _refuse_visibly(function, name, graded)
    before = copy.deepcopy(board)
    picture = before if drawn is None else drawn
    try:
        with _deadline(seconds), _reference_off(off):
            got = function(board, *args)
    except NotImplementedError as stub:
        raise _not_written(name, stub) from None
    except ReferenceCalled as called:
        raise _visible(_used_reference(name, str(called))) from None
    except _OutOfTime:
        raise _visible(_fail(call, picture, f"still searching after {seconds:g} s of CPU time" + (f": {slow}" if slow else ""))) from None
    except Exception as error:  # noqa: BLE001  (what the student's function raised is the answer)
        where = _student_line(error).removesuffix(": ")
        raise _visible(_fail(call, picture, f"raised {type(error).__name__}: {error}", note=f"(raised {where})" if where else "")) from None
    if board != before:
        changed = draw(board) if _text_or_none(board) is not None else f"    {board!r}"
        was = "" if _text_or_none(before) is not None else f", {before!r}"
        raise _visible(_fail(call, picture, f"{name} changed the {what} it was given (drawn here as it was before the call).",
                             expected=f"the {what} left as it was{was}", got=f"the {what} changed to\n{changed}",
                             note=f"{name} must leave the {what} it is given as it was: copy it (copy.deepcopy) and change the copy."))
    return got


def legal_only(function: Callable, *, game: Any = None, args: tuple = (), seconds: Optional[float] = None,
               slow: str = "") -> Callable[[Any], Any]:
    """Return a player that calls `function` and returns its move if it is legal.

    Without `game`, a CS50 player: `function(board)` must return a free square (i, j). With a
    game (nine-board, say), `function(state, *args)` must return one of ``game.moves(state)``. On
    anything else (an error, the stub, a changed board, an illegal move, or a call still
    running after `seconds`) it raises CheckFailed with the board drawn, so a game between
    players stops with what went wrong and where, and never in the package's code.
    """

    @functools.wraps(function)
    def play(board: Any) -> Any:
        __tracebackhide__ = True  # noqa: F841
        name = getattr(function, "__name__", "the function")
        if game is not None:
            call = f"{name}({', '.join(['state', *map(repr, args)])})"
            move = returned(function, board, *args, call=call, seconds=seconds, slow=slow)
            expect(move, call=call, kind="move", board=board, accept=game.moves(board),
                   why=f"your {name} returned {move!r} on this position: a player must return a legal move (board, cell)")
            return move
        move = returned(function, board, seconds=seconds, slow=slow)
        expect(move, call=f"{name}(board)", kind="action", board=board, accept=sorted(ref.actions(board)),
               why=f"your {name} returned {move!r} on this board: a player must return a free square (i, j)")
        return move

    return play


class _CountingPlays:
    """A game whose ``play`` counts its calls; everything else is the game's own."""

    def __init__(self, game: Any) -> None:
        self._game = game
        self.plays = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._game, name)

    def play(self, state: Any, move: Any) -> Any:
        self.plays += 1
        return self._game.play(state, move)


def prunes(function: Callable, state: Any, depth: int, *, seconds: float = 10) -> Optional[bool]:
    """Return True if ``function(state, depth)`` plays fewer moves than a search without pruning would, False if not.

    The moves are counted through the notebook's ``game.play``; None if they cannot be (no
    `game` in the function's namespace) or the search raises or runs past `seconds`. For
    lesson 6's match, so its hint about pruning goes only to a search that does not prune.
    """
    namespace = getattr(_plain(function), "__globals__", {})
    game = namespace.get("game")
    if not isinstance(game, Game):
        return None
    counting = _CountingPlays(game)
    try:
        with substituted(namespace, game=counting), _deadline(seconds):
            function(state, depth)
    except (Exception, _OutOfTime):  # noqa: BLE001  (the visible tests say what is wrong; here: unknown)
        return None

    def full(s: Any, d: int) -> int:
        if d == 0 or game.is_terminal(s):
            return 0
        return sum(1 + full(game.play(s, m), d - 1) for m in game.moves(s))

    return counting.plays < full(state, depth)


def shown(board: Any, *, made_by: str) -> Any:
    """Return ``ttt.draw.draw_board(board)``, or, for a board no game can reach, raise CheckFailed saying why.

    For a lesson's demonstration cells: a board made by the student's functions (`made_by`,
    say "your player and result") is drawn if it is a real position; otherwise the message
    draws it as text and says what is impossible about it.
    """
    __tracebackhide__ = True  # noqa: F841
    from ttt.draw import draw_board

    text = _text_or_none(board)
    if text is None:
        raise _visible(_fail(f"the board {made_by} made", board, "is not a board: three lists of three squares, each X, O or EMPTY"))
    try:
        classic.check_reachable(text)
    except ValueError as why:
        raise _visible(_fail(f"the board {made_by} made", board, f"cannot happen in a game: {why}")) from None
    return draw_board(text)


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
    name, graded = _graded_as(call)
    _refuse_visibly(sys._getframe(1).f_globals.get(name), name, graded)
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


def expect_raises(function: Callable, *args: Any, error: type = ValueError, call: str, board: Any = None, why: str = "",
                  message: bool = False) -> None:
    """Return None if ``function(*args)`` raises `error` (or a subclass), else raise CheckFailed saying what it did.

    With `message`, the error must also say why (a message that is not empty).
    """
    __tracebackhide__ = True  # noqa: F841
    try:
        got = function(*args)
    except error as raised:
        if message and not str(raised).strip():
            raise _visible(_fail(call, board, f"raised {error.__name__} without a message" + (f" ({why})" if why else ""),
                                 expected=f'{error.__name__} with a message saying why, e.g. raise {error.__name__}("...")',
                                 got=f"{type(raised).__name__}()")) from None
        return
    except NotImplementedError as stub:
        raise _not_written(getattr(function, "__name__", "the function"), stub) from None
    except Exception as other:  # noqa: BLE001  (what the student's function raised is the answer)
        problem = f"expected {error.__name__}, got {type(other).__name__}" + (f" ({why})" if why else "")
        raise _visible(_fail(call, board, problem, expected=f"{error.__name__} raised",
                             got=f"{type(other).__name__} raised: {other}")) from None
    raise _visible(_fail(call, board, f"returned instead of raising {error.__name__} ({why})" if why else f"returned instead of raising {error.__name__}",
                         expected=f"{error.__name__} raised", got=_show(got)))


def expect_endings(winner: Callable, terminal: Callable, utility: Callable) -> None:
    """Return None if `winner`, `terminal` and `utility` are right on every reachable position, else raise CheckFailed.

    For lesson 2's count of endings: the message names the function that is wrong first
    (winner before terminal and utility, which use it), draws the board, and says what was
    expected and what it returned, so a bug in `winner` is not blamed on the others.
    """
    __tracebackhide__ = True  # noqa: F841
    for text in classic.reachable_positions():
        board = _board(text)
        expect(returned(winner, board, call="winner(board)"), ref.winner(board), call="winner(board)", kind="winner", board=board,
               why="wrong winner on a position the count includes (terminal and utility use your winner)")
        expect(returned(terminal, board, call="terminal(board)"), ref.terminal(board), call="terminal(board)", kind="bool",
               board=board, why="the game is over when someone has three in a row or every square is filled")
        if ref.terminal(board):
            expect(returned(utility, board, call="utility(board)"), ref.utility(board), call="utility(board)", kind="int",
                   board=board, why="X wins: 1; O wins: -1; a tie: 0")


def optimal_actions(board: Board) -> set[tuple[int, int]]:
    """Return the set of optimal actions (i, j) for the player to move on a CS50 board (empty if the game is over)."""
    return {_action(square) for square in classic.optimal_moves(ref.to_text(board))}


# --- lesson 1: player, actions, result ------------------------------------------------------------


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
    checked = f"{len(boards):,} positions where the game is not over are checked"
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

    failures.each(boards, one)
    return _passed("player", f"all {len(boards):,} positions where the game is not over")


@_guarded
@_on_its_own("actions")
def check_actions(student: _Student) -> str:
    """Print and return a one-line summary if `actions(board)` is the set of empty squares (i, j) on every position not over."""
    boards = _positions(over=False)
    checked = f"{len(boards):,} positions where the game is not over are checked"
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
            raise _fail(call, _board(text), f"should return a set, not {_type_name(got)}", expected=shown, got=_show(got), note=note, checked=checked)
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

    failures.each(boards, one)
    return _passed("actions", f"all {len(boards):,} positions where the game is not over")


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
    checked = f"{count:,} moves in {len(boards):,} positions are checked, and the taken squares"
    failures = _Failures("result", checked)
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
                if got != expected:
                    raise _fail(call, _board(text), f"wrong board after {ref.player(_board(text))} plays {action}", expected=repr(expected), got=_show(got),
                                note=f"expected, drawn:\n{draw(expected)}" if _text_or_none(got) else "", checked=checked, kind="wrong board")
    invalid = 0
    for text in _focus(boards):
        taken = [s for s, c in enumerate(text) if c != "."]
        cases = [(_action(s), f"square {_action(s)} is taken by {text[s]}", "a taken square") for s in taken]
        if text in (boards[0], boards[5], boards[40]):
            cases += [(action, why, "off the board") for action, why in INVALID_ACTIONS]
        for action, why, where in cases:
            invalid += 1
            with failures.case():
                _expect_invalid(student, text, action, why, where, checked)
    failures.raise_any()
    error = _type_name(_invalid_action_error())
    raised = "raise an exception" if error == "Exception" else f"raise {error}"
    return _passed("result", f"all {count:,} legal moves, and {invalid:,} invalid ones {raised}")


def _expect_invalid(student: _Student, text: Text, action: Any, why: str, where: str, checked: str) -> None:
    """Raise CheckFailed unless `result(board, action)` raises the exception an invalid action must raise."""
    board = _board(text)
    call = f"result(board, {action!r})"
    wanted = _invalid_action_error()
    try:
        with _reference_off(student.forbidden):
            got = student.function(board, action)
    except ReferenceCalled as called:
        raise _used_reference(student.name, str(called)) from None
    except NotImplementedError:
        raise NotImplementedError("result is not written yet: replace `raise NotImplementedError()` with your code.") from None
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


# --- lesson 2: winner, terminal, utility, Rich & Knight's board ------------------------------


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

    failures.each(boards, one)
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
            raise _fail("terminal(board)", _board(text), f"should return True or False (Python's bool), not {_type_name(got)}",
                        expected=repr(expected), got=_show(got), note=note, checked=checked, kind="not a bool")
        if got != expected:
            note = "The game is over when someone has three in a row, or when every square is filled."
            raise _fail("terminal(board)", _board(text), "wrong answer", expected=repr(expected), got=repr(got), note=note, checked=checked)

    failures.each(boards, one)
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
            note = "X wins: 1; O wins: -1 (the CS50 project's text says 1 for O too: a typo); a draw: 0."
            raise _fail("utility(board)", _board(text), "wrong utility", expected=repr(expected), got=_show(got), note=note, checked=checked)

    failures.each(boards, one)
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
    """Return the square 0-8 of an action (i, j), or None if it is not one.

    Only a tuple or list is unpacked: unpacking any other object would run its own code
    (``__iter__``, ``__getitem__``) here, outside the guard around the student's function.
    """
    if not isinstance(action, (tuple, list)) or len(action) != 2:
        return None
    i, j = action
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
def search_plan() -> tuple[Text, ...]:
    """Return the positions the minimax and alpha-beta checks ask about: the same on any machine.

    Every position with at most two marks (the empty board, all 9 one-move and all 72 two-move
    positions: the early game, where a search is slowest and a bug hides longest), one of each
    symmetric family of the positions with three or four marks, and every position with five
    or more marks (the game over or not). Latest first, so that a failure shows a small board;
    the empty board last.
    """
    seen: set = set()
    plan = []
    for b in _positions():
        if 3 <= 9 - b.count(".") <= 4:
            c = canonical(b)
            if c in seen:
                continue
            seen.add(c)
        plan.append(b)
    return tuple(sorted(plan, key=lambda b: b.count(".")))  # stable: BFS order within


def _check_search(student: _Student, name: str) -> str:
    """Return a one-line summary if the search returns an optimal move (None when over) on every position of `search_plan`."""
    plan = search_plan()
    checked = f"{len(plan):,} positions are checked"
    _Failures(name, checked).each(plan, lambda text: _check_move(student, text, checked=checked))
    early = sum(1 for b in plan if b.count(".") >= 7)
    return _passed(name, f"{len(plan):,} positions: all {early} with at most two marks, one of each symmetric family "
                         "with three or four, all with five or more")


def _check_move(student: _Student, text: Text, *, checked: str) -> None:
    """Raise CheckFailed unless the student's search returns an optimal action on `text` (None when over)."""
    name = student.name
    call = f"{name}(board)"
    if classic.is_terminal(text):
        try:
            got = _answer(student, text, checked)
        except CheckFailed as failed:
            if failed.fatal or not failed.kind.startswith("raised"):
                raise
            said = str(failed).split("\n")[0].split(": ", 1)[1]
            raise _fail(call, _board(text), f"the game is over, so {name} should return None; it {said}", expected="None",
                        checked=checked, kind="game over: not None",
                        note="Check terminal(board) first and return None: there is no move to make.") from None
        if got is not None:
            raise _fail(call, _board(text), "the game is over, so there is no move to make", expected="None", got=_show(got), checked=checked,
                        kind="game over: not None")
        return
    got = _answer(student, text, checked)
    square = _square_or_none(got)
    best = classic.optimal_moves(text)
    value = classic.value(text)
    expected = " or ".join(str(_action(s)) for s in best)
    if square is None or text[square] != ".":
        what = "an action (i, j) on an empty square" if square is None else f"an empty square, but {_action(square)} is taken"
        raise _fail(call, _board(text), f"should return {what}", expected=expected, got=_show(got), checked=checked,
                    kind="not an action on an empty square")
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
            kind="not optimal",
        )


@_guarded
@_on_its_own("minimax")
def check_minimax(student: _Student) -> str:
    """Print and return a one-line summary if `minimax(board)` returns an optimal action on the positions `search_plan` gives.

    Any optimal action is accepted: its value (with best play after it) must equal the
    position's value. On a board where the game is over it must return None.
    """
    return _check_search(student, "minimax")


@_guarded
@_on_its_own("alphabeta", kind="alphabeta")
def check_alphabeta(student: _Student) -> str:
    """Print and return a one-line summary if `alphabeta(board)` returns an optimal action, as `check_minimax` checks."""
    return _check_search(student, "alphabeta")


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


line_score = bigboard.line_score  # the CSC 242 write-up's score of one small board for a player (5 and 10 per line)


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
    "CheckFailed",
    "ReferenceCalled",
    "canonical",
    "check_actions",
    "check_initial_state",
    "cs50_specification",
    "CS50_FUNCTIONS",
    "Passed",
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
    "shown",
    "substituted",
    "tree_size",
]
