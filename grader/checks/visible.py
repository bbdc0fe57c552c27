"""What the lessons' visible tests call: `expect`, `returned`, `expect_raises`,
`expect_endings`, `expect_pruning`, `legal_only`, `prunes`, `shown`, `optimal_actions`. A function that hands its
work to the reference fails here with the hidden check's message.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import re
import sys
import traceback
from typing import Any, Callable, Iterable, Iterator, Optional

import ttt.tictactoe as ref
from ttt.errors import not_written
from ttt.games import classic
from ttt.limits import still_running
from ttt.games.base import Game

from grader.checks.failures import (
    Board, CheckFailed, ReferenceCalled, OutOfCpuTime, cpu_limit, leave_it_as_it_was, _fail, _failure, _kind_of, _show, _shown,
    _not_the_student_s, _raised_on, _student_line, _text_or_none, _type_name, _what_it_is, draw,
)
from grader.checks.reference import (
    REFERENCE, _ALLOWED, _KIND_OF_NAME, _forbidden_objects, _plain, _reference_off, _refuse_reference,
    _remote_of, _used_reference,
)
from grader.checks.student import (
    ENDLESS_RECURSION, _BoardChanged, _action, _board, _guarded_searches, _index_or_none, _stood_in_note, stand_ins, substituted,
)
from grader.checks.display import _install_display


def _is_action(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and all(_index_or_none(x) is not None for x in value)


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


def _not_written(name: str, raised: Optional[BaseException] = None) -> NotImplementedError:
    """Return the NotImplementedError a visible test shows for a stub: its message alone, no traceback.

    With the error `raised`, the stub named is the function that raised it (a `result` that
    calls an unwritten `player` names `player`).
    """
    if raised is not None:
        frames = traceback.extract_tb(raised.__traceback__)
        if frames and frames[-1].name.isidentifier() and frames[-1].name != "<module>":
            name = frames[-1].name
    error = NotImplementedError(not_written(name))
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
    return [] if _remote_of(function) is not None else _forbidden_objects(kind)


@contextlib.contextmanager
def _limits(function: Any, seconds: Optional[float], kind: Optional[str]) -> Iterator[None]:
    """Inside the block, a call of `function` may use `seconds` of CPU time, with the reference of
    the check `kind` switched off where the function runs (in its sandbox, or here)."""
    remote = _remote_of(function)
    if remote is None:
        with cpu_limit(seconds), _reference_off([] if kind is None or _ALLOWED[-1] else _forbidden_objects(kind)):
            yield
        return
    with remote.cpu_limit(seconds), remote.traps(None if _ALLOWED[-1] else kind):
        yield


SECONDS = 10  # the CPU time a visible test gives one call of a student's function, unless it says otherwise
ENDS = "does every loop, and every recursion, come to an end?"  # the hint for a call still running, unless told another


def _first_line(why: str, problem: str, instead: str) -> str:
    """Return a failure's words after the call: the test's reason `why` first, then what the function did
    (`instead`: 'it raised ...'); or the `problem` alone where the test gives no reason."""
    return f"{why.rstrip('. ')}; instead {instead}" if why else problem


def _notes(*parts: str) -> str:
    return "\n\n".join(part for part in parts if part)


def _changed_board(call: str, name: str, what: str, before: Any, after: Any, picture: Any, *, why: str = "",
                   stood_in: str = "") -> CheckFailed:
    """Return the CheckFailed for a function that changed the board it was given: the board before and after."""
    own = name == _graded_as(call)[0]
    whose = f"{name}" if own else f"your {name} (called by {_graded_as(call)[0]})"
    text_after = _text_or_none(after)
    changed = draw(after) if text_after is not None else f"    {after!r}"
    was = "" if _text_or_none(before) is not None else f", {before!r}"
    problem = f"{whose} changed the {what} it was given (drawn here as it was before the call)"
    return _fail(call, picture if own else before, _first_line(why, problem, problem),
                 expected=f"the {what} left as it was{was}", got=f"the {what} changed to\n{changed}",
                 note=_notes(leave_it_as_it_was(name, what), stood_in))


def returned(function: Callable, board: Any, *args: Any, call: Optional[str] = None, seconds: Optional[float] = SECONDS,
             slow: str = "", drawn: Any = None, what: str = "board", why: str = "") -> Any:
    """Return ``function(board, *args)``, or raise CheckFailed saying what went wrong.

    The function runs on its own: the lesson's other graded functions the student wrote (the
    functions of `stand_ins`: `winner` while `terminal` runs, `evaluate` while `depth_limited_move`
    runs) are replaced by correct versions while it runs, in its namespace here or in its sandbox,
    so a slip in one function fails only that function's tests; a message says which stood in.

    It fails if the function raises (NotImplementedError, the stub, is raised again saying so),
    changes the `board` it was given (or one of the student's own functions it calls changes the
    board it is given: max_value, say), or is still running after using `seconds` of CPU time
    (10 unless told; None: no limit; then `slow`, a hint, follows the message, or `ENDS`). The message names the call (`call`, or
    one made from the function's name), gives the test's reason `why` (if told) before what went
    wrong, draws the board as it was before the call (or `drawn`,
    the position `board` stands for, when it is not a board itself: `what` names it, say
    "list B"), and points at the line of the student's code that raised.
    """
    __tracebackhide__ = True  # noqa: F841
    call = call or f"{getattr(function, '__name__', 'the function')}({', '.join(['board', *map(repr, args)])})"
    name, graded = _graded_as(call)
    _refuse_visibly(function, name, graded)
    before = copy.deepcopy(board)
    picture = before if drawn is None else drawn
    helpers = stand_ins(function, getattr(_plain(function), "__name__", name))
    stood_in = _stood_in_note(name, helpers)
    namespace = getattr(function, "__globals__", None)
    home = getattr(_plain(function), "__globals__", None)
    swaps = [(namespace, _guarded_searches(function)), (home, helpers)]
    try:
        with _limits(function, seconds, graded), contextlib.ExitStack() as stack:
            for where, functions in swaps:
                if where is not None and functions:
                    stack.enter_context(substituted(where, **functions))
            got = function(board, *args)
    except NotImplementedError as stub:
        raise _not_written(name, stub) from None
    except ReferenceCalled as called:
        raise _visible(_used_reference(name, str(called))) from None
    except OutOfCpuTime:
        running = f"{still_running(seconds)}: {slow or ENDS}"
        raise _visible(_fail(call, picture, _first_line(why, running, f"it is {running}"), note=stood_in)) from None
    except _BoardChanged as changed:
        raise _visible(_changed_board(call, changed.name, "board", changed.before, changed.after, picture, why=why,
                                      stood_in=stood_in)) from None
    except RecursionError:
        endless = ENDLESS_RECURSION
        raise _visible(_fail(call, picture, _first_line(why, endless, f"it {endless}"), note=stood_in)) from None
    except Exception as error:  # noqa: BLE001  (what the student's function raised is the answer)
        where, on = _student_line(error), _raised_on(error, picture)
        raised = f"raised {_type_name(error)}: {error}"
        raise _visible(_fail(call, picture, _first_line(why, raised, f"it {raised}"),
                             note=_notes(f"(raised {where})" if where else "", on, stood_in))) from None
    if board != before:
        raise _visible(_changed_board(call, name, what, before, copy.deepcopy(board), picture, why=why, stood_in=stood_in))
    return got


def legal_only(function: Callable, *, game: Any = None, args: tuple = (), seconds: Optional[float] = SECONDS,
               slow: str = "") -> Callable[[Any], Any]:
    """Return a player that calls `function` and returns its move if it is legal.

    Without `game`, a CS50 player: `function(board)` must return a free square (i, j). With a
    game (nine-board, say), `function(state, *args)` must return one of ``game.moves(state)``. On
    anything else (an error, the stub, a changed board, an illegal move, or a call still
    running after `seconds` of CPU time, 10 unless told) it raises CheckFailed with the board drawn, so a game between
    players stops with what went wrong and where, and never in the package's code.
    """

    @functools.wraps(function)
    def play(board: Any) -> Any:
        __tracebackhide__ = True  # noqa: F841
        name = getattr(function, "__name__", "the function")
        if game is not None:
            call = f"{name}({', '.join(['state', *map(repr, args)])})"
            move = returned(function, board, *args, call=call, seconds=seconds, slow=slow,
                            why="a player must return a legal move (board, cell) from this position")
            expect(move, call=call, kind="move", board=board, accept=game.moves(board),
                   why=f"your {name} returned {move!r} on this position: a player must return a legal move (board, cell)")
            return move
        move = returned(function, board, seconds=seconds, slow=slow, why="a player must return a free square (i, j) on this board")
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
        with substituted(namespace, game=counting), _limits(function, seconds, None):
            function(state, depth)
    except (Exception, OutOfCpuTime):  # noqa: BLE001  (the visible tests say what is wrong; here: unknown)
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


def expect_pruning(alphabeta: Callable, *, seconds: float = 10) -> None:
    """Return None if `alphabeta` passes lesson 5's pruning rule, the one its hidden test grades, else raise CheckFailed.

    The rule is `grader.checks.minimax.count_pruning`'s, on the same 12 positions (printed, with the nodes
    the search visited from each): at most 40% of the nodes plain minimax visits there in all, at most
    95% of the positions below them examined, at least
    the fewest any search that proves the value could examine on each, and an optimal move on each.
    The whole count may use `seconds` of CPU time.
    """
    __tracebackhide__ = True  # noqa: F841
    from grader.checks.minimax import count_pruning, pruning_positions, pruning_summary
    from grader.checks.student import _Student

    _refuse_visibly(alphabeta, "alphabeta", "alphabeta")
    at: list = []
    try:
        with _limits(alphabeta, seconds, None):
            counts = count_pruning(_Student(alphabeta, "alphabeta", kind="alphabeta"), at=at)
    except NotImplementedError as stub:
        raise _not_written("alphabeta", stub) from None
    except OutOfCpuTime:
        k = pruning_positions().index(at[0]) + 1 if at else 1
        running = f"{still_running(seconds)}: {ENDS}"
        raise _visible(_fail("alphabeta(board)", at[0] if at else None,
                             _first_line(f"the count of the nodes it visits, at position {k} of {len(pruning_positions())}",
                                         running, f"it is {running}"))) from None
    except CheckFailed as failed:
        raise _visible(failed) from None
    for text, seen, distinct in counts:
        print(f"  {text[:3]}/{text[3:6]}/{text[6:]}: {seen:6,} nodes (plain minimax: {classic.tree_size(text):,}), {distinct:,} positions")
    print(pruning_summary(counts))


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
    function = sys._getframe(1).f_globals.get(name)  # the caller's function of that name: the one `returned` ran
    _refuse_visibly(function, name, graded)
    if accept is not None:
        accept = list(accept)
        wanted = " or ".join(map(_shown, accept[:6])) + (f" or ... ({len(accept)} in all)" if len(accept) > 6 else "")
    else:
        wanted = _as_board(expected) if kind == "board" else _shown(expected)
    told = _as_board(got) if kind == "board" else _shown(got)
    stood_in = _stood_in_note(name, stand_ins(function, name) if callable(function) else {})
    if kind is not None:
        fits, should = KINDS[kind]
        if not fits(got):
            raise _visible(_fail(call, board, f"should return {should}, not {_what_it_is(got)}", expected=wanted, got=told,
                                 note=stood_in))  # the type first: the test's reason, about the value, would mislead
    right = got in accept if accept is not None else got == expected
    if not right:
        raise _visible(_fail(call, board, why or "wrong answer", expected=wanted, got=told, note=stood_in))


def _as_board(value: Any) -> str:
    """Return a board drawn on the lines under 'expected:' or 'returned:' (anything else as it is written)."""
    if _text_or_none(value) is None or isinstance(value, str):
        return _shown(value)
    return "\n" + draw(value)


def expect_raises(function: Callable, *args: Any, error: type = ValueError, call: str, board: Any = None, why: str = "",
                  message: bool = False, seconds: Optional[float] = SECONDS) -> None:
    """Return None if ``function(*args)`` raises `error` (or a subclass), else raise CheckFailed saying what it did.

    With `message`, the error must also say why (a message that is not empty). The call may use
    `seconds` of CPU time (None: no limit). The function runs on its own, as in `returned`; a
    failure gives the test's reason `why` before what the function did instead.
    """
    __tracebackhide__ = True  # noqa: F841
    name = _graded_as(call)[0]
    helpers = stand_ins(function, getattr(_plain(function), "__name__", name))
    stood_in = _stood_in_note(name, helpers)
    home = getattr(_plain(function), "__globals__", None)
    must = f"it must raise {error.__name__}"
    try:
        with _limits(function, seconds, None), substituted(home, **helpers) if home is not None else contextlib.nullcontext():
            got = function(*args)
    except OutOfCpuTime:
        running = f"{still_running(seconds)}: {ENDS}"
        raise _visible(_fail(call, board, _first_line(f"{why}, so {must}" if why else "", running, f"it is {running}"),
                             note=stood_in)) from None
    except error as raised:
        if message and not str(raised).strip():
            raise _visible(_fail(call, board, f"raised {error.__name__} without a message" + (f" ({why})" if why else ""),
                                 expected=f'{error.__name__} with a message saying why, e.g. raise {error.__name__}("...")',
                                 got=f"{type(raised).__name__}()", note=stood_in)) from None
        return
    except NotImplementedError as stub:
        raise _not_written(getattr(function, "__name__", "the function"), stub) from None
    except Exception as other:  # noqa: BLE001  (what the student's function raised is the answer)
        problem = _first_line(f"{why}, so {must}" if why else "", f"expected {error.__name__}, got {_type_name(other)}",
                              f"it raised {_type_name(other)}: {other}")
        raise _visible(_fail(call, board, problem, expected=f"{error.__name__} raised",
                             got=f"{_type_name(other)} raised: {other}", note=stood_in)) from None
    problem = _first_line(f"{why}, so {must}" if why else "", f"returned instead of raising {error.__name__}", "it returned")
    raise _visible(_fail(call, board, problem, expected=f"{error.__name__} raised", got=_as_board(got), note=stood_in))


def expect_endings(winner: Callable, terminal: Callable, utility: Callable) -> None:
    """Return None if `winner`, `terminal` and `utility` are right on every reachable position, else raise CheckFailed.

    For lesson 2's count of endings: on each position, winner first, then terminal, then utility
    where the game is over; each runs on its own, as in `returned` (terminal and utility with the
    CS50 winner), so the message names the function that is wrong, draws the board, and says what
    was expected and what it returned.
    """
    __tracebackhide__ = True  # noqa: F841
    for text in classic.reachable_positions():
        board = _board(text)
        tests = [(winner, "winner(board)", ref.winner(board), "winner", "wrong winner on a position the count includes"),
                 (terminal, "terminal(board)", ref.terminal(board), "bool",
                  "the game is over when someone has three in a row or every square is filled")]
        if ref.terminal(board):
            tests.append((utility, "utility(board)", ref.utility(board), "int", "X wins: 1; O wins: -1; a tie: 0"))
        for function, call, expected, kind, why in tests:
            expect(returned(function, board, call=call, why=why), expected, call=call, kind=kind, board=board, why=why)


def optimal_actions(board: Board) -> set[tuple[int, int]]:
    """Return the set of optimal actions (i, j) for the player to move on a CS50 board (empty if the game is over)."""
    return {_action(square) for square in classic.optimal_moves(ref.to_text(board))}


def best_moves(state: Any, depth: int) -> list:
    """Return the moves (board, cell) of a nine-board `state` with the best value looking `depth` moves ahead.

    The value of a move is its child's, searched `depth` - 1 further moves deep by alpha-beta with
    the CSC 242 write-up's heuristic at the limit and true utilities where the game ends (X takes
    the largest, O the smallest), as in lesson 6's hidden tests.
    """
    from ttt.games import nineboard

    from grader.checks.nineboard import _limited_value

    game = nineboard.NineBoard()
    target = _limited_value(state, depth)
    return [move for move in game.moves(state) if _limited_value(game.play(state, move), depth - 1) == target]
