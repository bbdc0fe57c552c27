"""The reference is off limits while a student's function runs.

`REFERENCE` names, for each check, the one function (or module) of the package that computes
what it grades; the denylist is derived from it (`forbidden`): every function of ``ttt`` and
``grader`` whose code reaches one is refused, under any name or alias. While the student's code
runs, the reference and the caches that hold its answers are traps.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import types
from typing import Any, Callable, Iterable, Iterator, Sequence

from ttt import search
from ttt.agents import classic as ref_players
from ttt.games import bigboard, classic

from grader.checks.failures import CheckFailed, ReferenceCalled


def _trap(*args: Any, **kwargs: Any) -> Any:
    checks = __import__("grader.checks", fromlist=["ReferenceCalled"])
    raise checks.ReferenceCalled(__import__("sys")._getframe().f_code.co_name)


def _label(function: Callable) -> str:
    """Return the name a student knows a function by: ``grader.checks.rk_board``, not the module inside the package."""
    module = function.__module__
    return f"{'grader.checks' if module.startswith('grader.checks.') else module}.{function.__qualname__}"


def _remote_of(function: Any) -> Any:
    """Return the sandbox a submission's function runs in (``grader.remote``), or None for a function of this process."""
    remote = getattr(function, "remote", None) if type(function).__name__ == "RemoteFunction" else None
    return remote if remote is not None and hasattr(remote, "traps") else None


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
    """The modules of ttt and grader imported now, every game's and player's among them: the
    registries import theirs when first read, and a player reached only by name (``agents.make``)
    must be in the graph of what reaches a reference whichever modules were imported before."""
    from ttt.agents import PLAYERS
    from ttt.games import GAMES

    PLAYERS.classes()
    GAMES.classes()
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
def _derived(kind: str, modules: frozenset) -> tuple[dict[int, Any], tuple[Any, ...], tuple[Any, ...]]:
    """Return (forbidden {id: function}, the functions to trap, the references themselves) for a
    check, over the package modules imported now (`modules`)."""
    references: dict[int, Any] = {}
    for r in REFERENCE.get(kind, ()):
        members = [v for v in vars(r).values() if isinstance(_plain(v), types.FunctionType) and _plain(v).__module__ == r.__name__] \
            if isinstance(r, types.ModuleType) else [r]
        references.update((id(_plain(m)), _plain(m)) for m in members)
    everything, users = _use_graph(modules)
    grown = True
    while grown:  # a reference's private helpers (``classic._negamax``, ``search._Searcher.minimax``) compute it too
        grown = False
        for f in everything:
            if (id(f) not in references and isinstance(f, types.FunctionType) and users.get(id(f))
                    and users[id(f)] <= references.keys() and any(p.startswith("_") for p in f.__qualname__.split("."))):
                references[id(f)] = f
                grown = True
    found = dict(references)
    found.update((id(f), f) for f in everything if f.__module__.split(".")[0] == "grader")  # the grader is no course material
    by_id = {id(f): f for f in everything}
    reached = list(found)
    while reached:  # whatever reaches something forbidden is forbidden: each user of one, and so on
        for user in users.get(reached.pop(), ()):
            if user not in found:
                found[user] = by_id[user]
                reached.append(user)
    cached = {id(_plain(getattr(w, "__func__", w))) for _, _, w in _cache_sites(modules)}
    traps = tuple(f for i, f in found.items() if i in references or (i in cached and f.__module__.startswith("ttt")))
    return found, traps, tuple(references.values())


@functools.lru_cache(maxsize=8)
def _use_graph(modules: frozenset) -> tuple[list[Any], dict[int, set[int]]]:
    """Return (`_everything` (), {id: ids of the functions among them that use it}) over the package
    modules imported now (`modules`): the graph every check's `_derived` walks."""
    everything = _everything()
    users: dict[int, set[int]] = {}
    for f in everything:
        for used in {id(_plain(u)) for u in _uses(f)} - {id(f)}:
            users.setdefault(used, set()).add(id(f))
    return everything, users


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


def graded_kinds(names: Iterable[str]) -> list[str]:
    """Return the checks (`REFERENCE`'s keys) that grade functions of these names, sorted."""
    return sorted({_KIND_OF_NAME.get(name, name) for name in names} & REFERENCE.keys())


def load_traps(kinds: Iterable[str]) -> list[Callable]:
    """Return the functions switched off while a submission's definitions load, for checks of
    `kinds`: what each check grades (its references and their private helpers), whatever reaches
    them. A function the lesson hands the student that reaches one (a board that plays the
    package's solver) fails while loading too: the lesson's own cells run on the grader's side, so
    only the submission's copy of such a statement is left out.

    A function copied while it is switched off (a new function made from its code object, at load
    time) copies the trap: it cannot escape the checks' traps under another identity. A check's
    traps are switched on again around each call. Used with ``_reference_off(..., caches=False)``:
    a cache imported while loading is the cache itself, the function behind it switched off.
    """
    found: dict[int, Callable] = {}
    for kind in kinds:
        if kind in REFERENCE:
            found.update((id(f), f) for f in _derived(kind, _modules_key())[2])
    return list(found.values())


@contextlib.contextmanager
def _reference_off(functions: Sequence[Callable], *, caches: bool = True) -> Iterator[None]:
    """Make each of `functions` raise ReferenceCalled, wherever it is called from, inside the block.

    The function objects themselves get a trap as their code, so aliases, default arguments
    and ``from ... import`` copies are all caught; a cache in front of one is replaced by a trap
    wherever a module or class of the package holds it (unless `caches` is False: while
    definitions load, an import would keep the trap for good). All is put back afterwards.
    """
    swapped = []
    patched = []
    try:
        for f in functions:
            if isinstance(f, types.FunctionType) and not f.__code__.co_freevars:
                trap = _trap.__code__.replace(co_name=_label(f))
                swapped.append((f, f.__code__))
                f.__code__ = trap
        for holder, attr, value, trap in _trapped_sites(frozenset(id(f) for f in functions) if caches else frozenset(),
                                                        _modules_key()):
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
    """Raise CheckFailed if `function` is, or uses, something of the package this check forbids
    (for a function in a sandbox, as the sandbox finds it: a hint, which its code could fool)."""
    remote = _remote_of(function)
    if remote is not None:
        remote.refuse(function, name, kind)
        return
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
