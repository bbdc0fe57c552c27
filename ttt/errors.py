"""The exceptions a student or instructor sees, each message saying what is wrong and why, and an
error raised in a student's own code told in their words (`in_words`)."""

from __future__ import annotations

import linecache
import traceback
from pathlib import Path
from typing import Optional


class InvalidActionError(ValueError):
    """An action (a move) that cannot be played on the board it was given."""


class InvalidBoardError(ValueError):
    """A board that is malformed, or not a position that a real game can reach."""


class StillThinking(RuntimeError):
    """A computer player (a student's function, say) stopped at its CPU-time limit without choosing a move."""


def not_written(name: str) -> str:
    """Return what a lesson says of a function that still raises its stub's NotImplementedError."""
    return f"{name} is not written yet: replace `raise NotImplementedError()` with your code."


def bad_depth(depth: object) -> ValueError:
    """The error for a depth-limited search asked for a depth below one ply."""
    return ValueError(f"depth must be at least 1, not {depth!r}")


def library_file(filename: str, also: tuple[str, ...] = ()) -> bool:
    """True if `filename` is this package's, an installed library's, or under one of the folders
    `also` (absolute paths): code a student did not write."""
    if not filename or filename.startswith("<"):
        return False
    name = str(Path(filename).resolve())
    return name.startswith((str(Path(__file__).resolve().parent), *also)) or "site-packages" in name or "/lib/python" in name


def in_your_code(error: BaseException) -> Optional[tuple[str, int, str]]:
    """Return (function, line, code) of the innermost frame of `error` in the student's own code
    (a notebook cell, a file of theirs), or None if it was raised in the package or a library alone."""
    for frame, line in reversed(list(traceback.walk_tb(error.__traceback__))):
        code = frame.f_code
        if not library_file(code.co_filename):
            return code.co_name, line, linecache.getline(code.co_filename, line, frame.f_globals).strip()
    return None


def in_words(error: BaseException) -> str:
    """Return `error` as a student reads it: an unwritten function named; an error raised in their
    code with its function, line and code; the package's own errors (which say what and why) as they are."""
    where = in_your_code(error)
    if isinstance(error, NotImplementedError) and where is not None and where[0].isidentifier():
        return not_written(where[0])
    ours = isinstance(error, ValueError) or type(error).__module__ == __name__  # they say what and why
    text = f"{error}" if ours and where is None else f"{type(error).__name__}: {error}"
    if where is None:
        return text
    name, line, code = where
    return f"{text} (in your {name}, line {line}: {code})" if code else f"{text} (in your {name}, line {line})"
