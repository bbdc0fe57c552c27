"""Keeps a submission from passing the checks by calling the reference solution.

Loaded into the grading kernel before the first cell runs. ``install(names)`` wraps the
reference functions of those names (the functions the lesson asks students to write) so that,
while one of ``grader``'s checks is running, a call that comes from notebook code raises
``ReferenceSolutionError``; the checks themselves, and notebook code outside a check, still
call the reference freely. ``audit(namespace)`` replaces a graded name that is bound to a
reference function itself (``minimax = ttt.tictactoe.minimax``) by one that raises.

This closes the obvious shortcut, not every one: a determined student can copy the reference
code or patch the checks. Grading is not a sandbox.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable, Iterable

import ttt

REFERENCE_MODULES = ("ttt.tictactoe", "ttt.search", "ttt.games.classic")
_TTT = os.path.dirname(os.path.abspath(ttt.__file__)) + os.sep
_GRADER = os.path.dirname(os.path.abspath(__file__)) + os.sep
_CHECKS = os.path.join(_GRADER, "checks")


class ReferenceSolutionError(AssertionError):
    """Raised when a graded function uses the reference solution instead of its own code."""


def _file(frame) -> str:
    return frame.f_code.co_filename


def _used_inside_check() -> bool:
    """True if the reference was called from notebook code that a check is running."""
    frame = sys._getframe(2)
    while frame is not None and _file(frame).startswith(_TTT):
        frame = frame.f_back
    if frame is None or _file(frame).startswith(_GRADER):
        return False
    while frame is not None:
        if _file(frame).startswith(_CHECKS):
            return True
        frame = frame.f_back
    return False


def _guarded(function: Callable, where: str) -> Callable:
    def guarded(*args, **kwargs):
        if _used_inside_check():
            raise ReferenceSolutionError(
                f"{function.__name__} uses the reference solution ({where}.{function.__name__}); "
                "the graded function must be your own code.")
        return function(*args, **kwargs)

    guarded.__name__ = function.__name__
    guarded.__qualname__ = function.__qualname__
    guarded.__doc__ = function.__doc__
    guarded._ttt_reference = where
    return guarded


def install(names: Iterable[str]) -> list[str]:
    """Wraps the reference functions called ``names``; returns the dotted names wrapped."""
    wrapped = []
    for module_name in REFERENCE_MODULES:
        module = importlib.import_module(module_name)
        for name in names:
            function = getattr(module, name, None)
            if callable(function) and not hasattr(function, "_ttt_reference"):
                setattr(module, name, _guarded(function, module_name))
                wrapped.append(f"{module_name}.{name}")
    return wrapped


def _code_file(value) -> str:
    """The file that defines a callable, through partials, methods and decorators."""
    for _ in range(10):
        if isinstance(value, functools.partial):
            value = value.func
        elif hasattr(value, "__func__"):
            value = value.__func__
        elif hasattr(value, "__wrapped__"):
            value = value.__wrapped__
        else:
            break
    if hasattr(value, "_ttt_reference"):
        return _TTT
    code = getattr(value, "__code__", None)
    return os.path.abspath(code.co_filename) if code is not None else ""


def audit(namespace: dict, names: Iterable[str]) -> list[str]:
    """Replaces each graded name bound to reference code by a function that raises; returns them."""
    replaced = []
    for name in names:
        value = namespace.get(name)
        if value is None or not callable(value):
            continue
        where = _code_file(value)
        if where.startswith(_TTT) or where.startswith(_GRADER):

            def refuse(*args, _name=name, **kwargs):
                raise ReferenceSolutionError(
                    f"{_name} is the reference solution imported from the library, "
                    "not your own code.")

            namespace[name] = refuse
            replaced.append(name)
    return replaced
