"""Calling a student's function under a check: each call guarded (`_Student`), every kind of
failure kept with one board each (`_Failures`), a check narrowed to some boards (`_focused`),
and each function graded on its own, with the reference in place of the other functions it
calls (`_on_its_own`, `substituted`, `counting_calls`).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import io
import operator
import traceback
import types
from contextvars import ContextVar
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

import ttt.tictactoe as ref
from ttt.errors import not_written
from ttt.games import classic

from grader.checks.failures import (
    Board, CheckFailed, Passed, ReferenceCalled, Text, OutOfCpuTime, _fail, _is_bool, _not_the_student_s, _raised_on, _show, _student_line, _summary,
    _text_or_none, _type_name,
)
from grader.checks.reference import (
    _ALLOWED, _code_names, _forbidden_objects, _plain, _reference_off, _refuse_reference, _remote_of, _used_reference,
)


# Set by the grader's own tools for the checks they run (a ContextVar each: set with a token, put
# back with it): a callable told (call, board) before each call of a student's function, and one
# that returns a student's function by name from a new copy of the student's file.
WATCH_CALLS: ContextVar[Callable[[str, Any], None] | None] = ContextVar("watch_calls", default=None)
FRESH_COPY: ContextVar[Callable[[str], Callable] | None] = ContextVar("fresh_copy", default=None)


# What a check says of a call that recursed until Python stopped it: most often the call recurses on the
# same board (no move made), not a missing base case
ENDLESS_RECURSION = ("went into endless recursion (RecursionError): check the case that stops it, and that each "
                     "call is on a new board one move further on, not on the same one")


def _student_raised(error: BaseException) -> bool:
    """Return True if the student's code raised `error` itself (not a Ctrl-C or a time limit from outside)."""
    if isinstance(error, (ReferenceCalled, OutOfCpuTime)):
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


class _ProcessEnded(BaseException):
    """Stands for ``grader.remote.RemoteDied`` until the sandbox's module is imported (never raised)."""


def _process_ended() -> tuple:
    """Return the exceptions a function in a sandbox raises when its process ended under it, or
    answered with something that is no answer (the process is then ended)."""
    import sys

    remote = sys.modules.get("grader.remote")
    return (remote.RemoteDied, remote.RemoteProtocolError) if remote is not None else (_ProcessEnded,)


def _is_board_list(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 3 and all(isinstance(row, list) and len(row) == 3 for row in value)


class _BoardChanged(BaseException):
    """Raised when one of the student's own functions returns having changed the board it was given
    (a BaseException: ``except Exception`` in the student's code misses it)."""

    def __init__(self, name: str, before: Any, after: Any) -> None:
        super().__init__(name)
        self.name, self.before, self.after = name, before, after


def _guarding(function: Any, name: str, wrapped: Callable) -> Callable:
    """Return `wrapped` made to raise `_BoardChanged` if it returns with its first argument, a board, changed."""

    @functools.wraps(wrapped)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if not (args and _is_board_list(args[0])):
            return wrapped(*args, **kwargs)
        before = [list(row) for row in args[0]]  # a board's squares are X, O or None: a copy of the rows is a copy
        got = wrapped(*args, **kwargs)
        if args[0] != before:
            raise _BoardChanged(name, before, copy.deepcopy(args[0]))
        return got

    return guarded


SEARCH_HELPERS = ("max_value", "min_value", "value")  # the lessons' names for a search's own functions


def _guarded_searches(function: Any) -> dict:
    """Return {name: guarded function} for the search functions the student wrote beside `function`
    (max_value and min_value beside minimax), each made to say so if it changes the board it is given."""
    namespace = getattr(function, "__globals__", None)
    if not isinstance(namespace, dict) or _remote_of(function) is not None:
        return {}
    helpers = {name: namespace.get(name) for name in SEARCH_HELPERS}
    return {name: _guarding(function, name, helper) for name, helper in helpers.items()
            if inspect.isfunction(helper) and helper is not function and helper.__code__.co_argcount >= 1
            and helper.__globals__ is namespace and not _not_the_student_s(helper.__code__.co_filename)}


INSTEAD = " instead of returning an answer"  # after what a function did that ended its call


class _Student:
    """Calls to one student function, guarded: the reference off, exceptions told plainly."""

    def __init__(self, function: Callable, name: str, kind: Optional[str] = None) -> None:
        if not callable(function):
            raise CheckFailed(f"{name} should be a function, but it is {type(function).__name__} {function!r}.")
        self.function = function
        self.name = name
        self.kind = kind or name
        self.remote = _remote_of(function)  # a function in a sandbox: the reference is switched off there
        self.looked_for_a_changed_board = False
        self.forbidden = [] if _ALLOWED[-1] or self.remote is not None else _forbidden_objects(self.kind)
        if not _ALLOWED[-1]:
            _refuse_reference(function, name, self.kind)

    def expect(self, calls: Iterable[tuple]) -> None:
        """Says which calls the check makes next, in order (each a tuple of arguments): a function in
        a sandbox then takes them in a few crossings, each call still judged on its own. Only for
        checks that make their calls in a fixed order and count nothing (what a search examines is
        counted call by call); nothing for a function of this process."""
        if self.remote is not None:
            self.remote.expect(self.function, calls, traps=None if _ALLOWED[-1] else self.kind)

    def expect_boards(self, boards: Iterable[Text]) -> None:
        """`expect` a call on a fresh CS50 board for each text board, as `_answer` makes them."""
        self.expect((_board(text),) for text in boards)

    def raw(self, *args: Any) -> Any:
        """Return what the function returns with the reference off. A call of the reference and
        an unwritten stub are told as such (CheckFailed, NotImplementedError); whatever else the
        function raises is raised as it is, for the caller to judge."""
        try:
            with self.remote.traps(None if _ALLOWED[-1] else self.kind) if self.remote else _reference_off(self.forbidden):
                return self.function(*args)
        except ReferenceCalled as called:
            raise _used_reference(self.name, str(called)) from None
        except NotImplementedError:
            raise NotImplementedError(not_written(self.name)) from None

    def __call__(self, *args: Any, call: str, board: Any = None, checked: str = "") -> Any:
        """Return the function's answer; anything it raises fails the check, saying what and where."""
        watch = WATCH_CALLS.get()
        if watch is not None:
            watch(call, board)
        try:
            return self.raw(*args)
        except (CheckFailed, NotImplementedError):
            raise
        except _process_ended() as ended:  # the function ended the sandbox's process it ran in (os._exit, a crash)
            if type(ended).__name__ == "RemoteProtocolError":  # its process answered with what the grader refuses
                said = f"answered with something the grader refuses to take ({ended}), and its process was ended"
            else:
                said = f"ended the process it ran in ({ended}){INSTEAD}"
            failed = _fail(call, board, said, checked=checked, kind="ended the process")
            failed.fatal = True  # it would end it again on the next board: one is enough
            if type(ended).__name__ == "RemoteProtocolError":
                failed.suspicious = f"{call} answered the grader with a message it refuses ({str(ended)[:150]})"
            raise failed from None
        except SystemExit as exiting:
            raise _fail(call, board, f"exited (SystemExit: {exiting}){INSTEAD}", checked=checked) from None
        except RecursionError:
            raise _fail(call, board, f"{ENDLESS_RECURSION}.", checked=checked) from None
        except Exception as error:  # the student's bug, shown as what it is
            self.explain_a_changed_board(copy.deepcopy(board), *args[1:], call=call, checked=checked)  # `board`: as it was before
            where = "\n\n".join(part for part in (_student_line(error), _raised_on(error, board)) if part)
            raise _fail(
                call, board, f"raised {_type_name(error)}: {error}", note=where, checked=checked, kind=f"raised {_type_name(error)}"
            ) from None
        except BaseException as error:  # SystemExit, KeyboardInterrupt, a class of the student's own
            if not _student_raised(error):
                raise
            raise _fail(call, board, _not_an_exception(error), note=_student_line(error), checked=checked,
                        kind=f"raised {_type_name(error)}") from None


    def explain_a_changed_board(self, board: Any, *args: Any, call: str, checked: str) -> None:
        """After a search went wrong on `board` (a fresh copy of the board it was given): call it again with
        its own max_value, min_value or value made to tell on themselves, and raise CheckFailed saying
        which one changed the board it was given, drawn before and after, if one did. Only then, so
        a right search pays nothing for the look."""
        helpers = _guarded_searches(self.function) if self.kind in ("minimax", "alphabeta") and _is_board_list(board) else {}
        if not helpers or self.looked_for_a_changed_board:
            return
        self.looked_for_a_changed_board = True  # once: a search that changes no board on its first wrong answer is wrong otherwise
        try:
            with substituted(self.function.__globals__, **helpers):
                self.raw(board, *args)
        except _BoardChanged as changed:
            from grader.checks.failures import draw, leave_it_as_it_was

            raise _fail(call, changed.before, f"your {changed.name} (called by {self.name}) changed the board it was given "
                        "(drawn here as it was before the call)", expected="the board left as it was",
                        got=f"the board changed to\n{draw(changed.after)}", checked=checked, kind="changed the board",
                        note=leave_it_as_it_was(changed.name)) from None
        except BaseException:  # noqa: BLE001  (anything else: the first answer's failure is the one told)
            return


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

    def each(self, boards: Iterable[Text], test: Callable[[Text], None], *, asking: Optional["_Student"] = None) -> None:
        """Run `test` on each board (as `_focus` narrows them), each a case of its own; then raise what failed.
        `asking`: the student's function each test calls once, on a fresh board of its board (`_answer`):
        those calls are announced (`_Student.expect_boards`)."""
        boards = _focus(boards)
        if asking is not None:
            asking.expect_boards(boards)
        for text in boards:
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


CS50_FUNCTIONS = ("initial_state", "player", "actions", "result", "winner", "terminal", "utility", "minimax")


@functools.lru_cache(maxsize=None)
def _reference_table(name: str) -> dict:
    """Return the reference's answers of CS50 function `name` on every reachable position (``result``'s by
    position and square, None for a move not allowed), computed once a process.

    The stand-in helpers and the spies answer from these tables, each asked for before any student code
    runs, so they never call a function a check has switched off (the reference ``utility`` calls the
    ``winner`` that ``check_winner`` forbids). A table is made only when a stand-in or a spy needs it
    (``result``'s, 49,302 moves, is most of the cost, and lessons 1 and 2 rarely need it).
    """
    positions = classic.reachable_positions()
    if name == "result":
        table: dict = {}
        for text in positions:
            legal = classic.moves(text)  # the squares `play` takes (it raises, with a message, for the others)
            for square in range(9):
                table[text, square] = classic.play(text, square) if square in legal else None
        return table
    answer = (lambda board: frozenset(ref.actions(board))) if name == "actions" else getattr(ref, name)
    return {text: answer(ref.from_text(text)) for text in positions}


def _reference_answers(*names: str) -> dict:
    """Return {name: `_reference_table` (name)} for the CS50 functions `names`."""
    return {name: _reference_table(name) for name in names}


def _stand_in(name: str) -> Callable:
    """Return the reference `name` (a CS50 function) answering from `_reference_table`."""
    answers = {} if name == "initial_state" else _reference_answers(name)

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
    cs50_function._sandbox_local = (__name__, "_stand_in", (name,))  # in a sandbox, built there: no call comes back here
    return cs50_function


def _own_helpers(function: Callable, name: str, among: Sequence[str] = CS50_FUNCTIONS) -> list[str]:
    """Return the functions of `among` (the CS50 functions unless told) other than `name` that the student
    wrote themselves, where `function` finds them."""
    namespace = getattr(_plain(function), "__globals__", None) or {}
    own = []
    for other in among:
        helper = namespace.get(other)
        if other == name or not callable(helper) or helper is function or _plain(helper) is _plain(getattr(ref, other, None)):
            continue
        if isinstance(_plain(helper), types.FunctionType) and (_plain(helper).__module__ or "").split(".")[0] in ("ttt", "grader"):
            continue  # the package's own, handed to the student
        own.append(other)
    return own


# Every function a lesson grades that another graded function may call, and whose words name the
# correct version that stands in for the student's (`stand_ins`): the CS50 project's functions
# (lessons 1, 2 and 4), and the CSC 242 write-up's heuristic (lesson 6).
GRADED_HELPERS: dict[str, str] = {**{name: "the CS50" for name in CS50_FUNCTIONS}, "line_score": "the write-up's",
                                  "evaluate": "the write-up's"}


def _reference_helper(name: str) -> Callable:
    """Return the correct version of the graded function `name` of `GRADED_HELPERS`, as a stand-in."""
    if name in CS50_FUNCTIONS:
        return _stand_in(name)
    from ttt.games import bigboard

    return {"line_score": bigboard.line_score, "evaluate": bigboard.line_count_evaluate}[name]


def stand_ins(function: Callable, name: str) -> dict[str, Callable]:
    """Return {name: correct version} for the other graded functions of the lesson that `function` (the
    student's `name`) calls, directly or through the student's own code, where the student wrote them (all
    that its namespace holds, for a function in a sandbox, whose code is not read here): a test of `name`
    runs with these in place of the student's, so that one slip fails only the tests of the function it is in.

    What a function's own tests test: its own code, and the code of the student's that only it
    uses, but no other function that has tests of its own. So `terminal`'s and `utility`'s tests
    (lesson 2) run with the CS50 `winner` (and `utility`'s with the CS50 `terminal`); `result`'s
    (lesson 1) with the CS50 `player` and `actions`; `evaluate`'s (lesson 6) with the write-up's
    `line_score`, and `depth_limited_move`'s with the write-up's `evaluate` and `line_score`. The parts
    of one graded function stay the student's: `max_value` and `min_value` are minimax's (lesson 4)
    and alphabeta's (lesson 5), `value` is `depth_limited_move`'s, a helper the student wrote for
    `winner` is winner's, and none of them has tests of its own. The functions a lesson hands the
    student ready-made are the package's and stay as they are. The names are those of
    `GRADED_HELPERS`; each stand-in works in a sandbox too (built there, or the package's own copy).
    """
    named = _names_reached(function)
    return {other: _reference_helper(other) for other in _own_helpers(function, name, among=tuple(GRADED_HELPERS))
            if named is None or other in named}


def _names_reached(function: Callable) -> Optional[set]:
    """Return the global names the code of `function` looks up, and the code of the student's functions of the
    same namespace it names, and so on; None where the code cannot be read here (a function in a sandbox)."""
    start = _plain(function)
    if not isinstance(start, types.FunctionType):
        return None
    names: set = set()
    seen: set = set()
    stack = [start]
    while stack:
        f = stack.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        found = _code_names(f)
        names |= found
        stack += [value for value in (_plain(f.__globals__.get(n)) for n in found)
                  if isinstance(value, types.FunctionType) and value.__globals__ is start.__globals__]
    return names


def in_place_of_yours(names: Sequence[str]) -> str:
    """Return the words for the stand-ins `names`: 'with the CS50 winner and terminal in place of yours' ('' for none)."""
    if not names:
        return ""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(GRADED_HELPERS.get(name, "the correct"), []).append(name)
    return "with " + " and ".join(f"{whose} {_and(group)}" for whose, group in groups.items()) + " in place of yours"


def _stood_in_note(name: str, helpers: Iterable[str]) -> str:
    """Return the note that says which of the student's other functions a correct version stood in for ('' for none)."""
    helpers = tuple(helpers)
    if not helpers:
        return ""
    return f"(this test runs your {name} {in_place_of_yours(helpers)}: each function is tested on its own)"


class _Spy:
    """Wraps a student's helper during a check and notes where its answers differ from the CS50 answer."""

    def __init__(self, name: str, own: Callable, seen: dict) -> None:
        self.name, self.own, self.seen = name, own, seen
        # the tables `_wrong` reads, made here, before the student's code runs
        self.answers = {} if name == "initial_state" else _reference_answers("player", "terminal", "result", name)

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
        answers = self.answers
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
            suspects = [h for h in own if seen.get(h)] or [h for h in own if h in seen] or own
            blamed = [h for h in suspects if _fails_its_own_check(namespace[h], h)]
            how = "; ".join(seen[h] for h in blamed if seen.get(h))
            called = [h for h in own if h in seen] or own
            if blamed:
                text = (f"{summary.rstrip('.')}, {in_place_of_yours(called)}. As written it fails, because it "
                        f"calls your own {_and(blamed)}" + (f" ({how})" if how else "") + ": that is marked there, not here.")
            else:  # each helper passes its own check: the mistake is in neither, so none is named
                text = (f"{summary.rstrip('.')}, {in_place_of_yours(called)}. As written it fails with your "
                        f"own {_and(called)}, though each of them passes its own check, so none of them is blamed for it.")
            passed = Passed(_summary(text))
            passed.broken_by = tuple(blamed)
            return passed

        return check

    return decorate


def _fails_its_own_check(function: Callable, name: str) -> bool:
    """Return True if the student's CS50 function `name` fails the check that grades it (run quietly)."""
    from grader import checks

    check = getattr(checks, f"check_{name}", None)
    if check is None:
        return True
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            check(function)
    except (CheckFailed, NotImplementedError):
        return True
    return False


def _and(names: Sequence[str]) -> str:
    """Return 'a', 'a and b', 'a, b and c'."""
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def _fresh(function: Callable, name: str) -> Callable:
    """Return `function` with its memo emptied: from a new copy of its file where one can be loaded, else with
    every ``functools.lru_cache`` in its namespace cleared (a notebook's own dict memo is left as it is)."""
    fresh = FRESH_COPY.get()
    if fresh is not None:
        return fresh(name)
    remote = _remote_of(function)
    if remote is not None:
        remote.clear_caches()
        return function
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
    boards = list(boards)
    student.expect_boards(boards)
    for text in boards:
        yield text, _answer(student, text, checked)


def _positions(*, over: Optional[bool] = None) -> list[Text]:
    """Return every reachable position in BFS order (fewest marks first); filter by game over."""
    boards = classic.reachable_positions()
    if over is None:
        return list(boards)
    return [b for b in boards if classic.is_terminal(b) == over]


def _not_over(boards: list[Text]) -> str:
    """How a check names `boards`, the positions not over it asks about: "4,520 positions where the game is not over"."""
    return f"{len(boards):,} positions where the game is not over"


def _action(square: int) -> tuple[int, int]:
    return divmod(square, 3)


def _index_or_none(value: Any) -> Optional[int]:
    """Return `value` as a Python int if it is an integer (an int, NumPy's ``numpy.int64``, ...), None if not.

    ``operator.index`` is what Python itself asks of a list index; a bool (Python's or NumPy's)
    is refused, though Python would take it: True is no row.
    """
    if isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")):
        return None
    try:
        return operator.index(value)
    except Exception:  # noqa: BLE001  (not an integer)
        return None


def _square_or_none(action: Any) -> Optional[int]:
    """Return the square 0-8 of an action (i, j), or None if it is not one.

    Only a tuple or list is unpacked: unpacking any other object would run its own code
    (``__iter__``, ``__getitem__``) here, outside the guard around the student's function. Its
    two items may be any integers (`_index_or_none`: NumPy's too), not bools.
    """
    if not isinstance(action, (tuple, list)) or len(action) != 2:
        return None
    i, j = (_index_or_none(x) for x in action)
    if i is None or j is None or not (0 <= i <= 2 and 0 <= j <= 2):
        return None
    return 3 * i + j


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


SEARCH_FUNCTIONS = ("player", "actions", "result", "winner", "terminal", "utility")  # what a lesson hands a search


def _now(board: Any) -> Optional[Text]:
    """Return a CS50 board's squares as they are now, as nine characters ('.' empty); None if it is no board."""
    try:
        text = "".join(["." if square is None else square for row in board for square in row])
    except TypeError:
        return None
    return text if len(text) == 9 else None


def _leads_to(earlier: Text, later: Text) -> bool:
    """Return True if `later` is `earlier` or a position after it (every mark of `earlier` still in place)."""
    return all(a == "." or a == b for a, b in zip(earlier, later))


class Examined:
    """The positions a search examines, counted through the functions it is handed.

    ``count`` is the nodes it visits: a position counts each time the search moves to it (passes
    it to one of the functions, read as it is at that call, so a board changed in place and
    changed back counts as the positions it passes through), not each time it looks at it again
    on the way back up. ``positions`` is the set of distinct positions it passed; ``distinct``
    the distinct positions of each search (`new_search`), summed.
    """

    def __init__(self) -> None:
        self.count = 0
        self.distinct = 0
        self.positions: set = set()
        self._path: list = []
        self._searched: set = set()

    def see(self, board: Any) -> None:
        """Count `board` if the search moves to it (it is not a position on the current path)."""
        self.see_text(_now(board))

    def see_text(self, text: Any) -> None:
        """`see` a board as `_now` reads it: nine characters (anything else is no board)."""
        if type(text) is not str or len(text) != 9:
            return
        path = self._path
        while path and not _leads_to(path[-1], text):
            path.pop()
        if path and path[-1] == text:
            return
        path.append(text)
        self.positions.add(text)
        self.count += 1
        if text not in self._searched:
            self._searched.add(text)
            self.distinct += 1

    def new_search(self) -> None:
        """Forget the path: the next position passed is the root of a new search."""
        self._path.clear()
        self._searched = set()


@contextlib.contextmanager
def counting_positions(namespace: dict, names: Sequence[str] = SEARCH_FUNCTIONS) -> Iterator[Examined]:
    """Count the positions a search examines inside the block, through the functions `names` in `namespace`.

    Yields an `Examined`: ``count`` is the nodes visited, the root included. Each function found
    in the namespace is wrapped, so a search that changes one board in place and undoes the move
    is counted as one that makes new boards with ``result``.

    In a student server (a ``grader.remote.LinkedNamespace``), a function of the package is that
    server's own copy, which notes each board it is passed (`_recording`), and the boards come with
    the answer of the call that passed them: no crossing for each. A note is the student process's
    word, as a board it passed to a callback was: it can claim no more than a search that calls
    the functions on the boards of its choice, and a check judges the positions themselves
    (`grader.checks.minimax.proves_move`). Any other function is called back here for each call.
    """
    found = {name: namespace[name] for name in names if callable(namespace.get(name))}
    if not found:
        raise CheckFailed(f"there is none of {', '.join(names)} where your search looks for them, so its nodes cannot be counted.")
    examined = Examined()
    remote = getattr(namespace, "remote", None) if type(namespace).__name__ == "LinkedNamespace" else None

    def watched(function: Callable) -> Callable:
        def examining(*args: Any, **kwargs: Any) -> Any:
            if args:
                examined.see(args[0])
            return function(*args, **kwargs)

        examining.__name__ = examining.__qualname__ = getattr(function, "__name__", "function")
        where = _package_function(function) if remote is not None else None
        if where is not None:
            examining._sandbox_local = (__name__, "_recording", where)  # type: ignore[attr-defined]
        return examining

    namespace.update({name: watched(function) for name, function in found.items()})
    try:
        with remote.listening(lambda notes: [examined.see_text(note) for note in notes]) if remote else contextlib.nullcontext():
            yield examined
    finally:
        namespace.update(found)


def _package_function(function: Any) -> Optional[tuple[str, str]]:
    """Return (module, name) of a function of ttt found under its own name in its module, else None."""
    module, name = getattr(function, "__module__", None), getattr(function, "__name__", None)
    if not (isinstance(module, str) and isinstance(name, str) and module.split(".")[0] == "ttt"):
        return None
    import importlib

    try:
        return (module, name) if getattr(importlib.import_module(module), name, None) is function else None
    except ImportError:
        return None


def _recording(module: str, name: str) -> Callable:
    """Return, in a student server, the function `name` of `module` made to note each board it is
    passed (`_now`) in ``grader.remote.NOTES``, which the call's answer takes to the grader."""
    import importlib
    import sys

    function = getattr(importlib.import_module(module), name)
    notes = sys.modules["grader.remote"].NOTES

    def recorded(*args: Any, **kwargs: Any) -> Any:
        if args:
            notes.append(_now(args[0]))
        return function(*args, **kwargs)

    recorded.__name__ = recorded.__qualname__ = name
    return recorded


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
