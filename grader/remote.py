"""A submission's functions in a process of their own, called from the grader with plain data only.

The student's definitions live in a *student server* (``python -m grader.remote serve RFD WFD``),
which runs inside the sandbox; the checks live in a trusted process and call the student's
functions through `Remote`, its `LinkedNamespace` and `RemoteFunction` proxies. Between the two
go plain values only: None, bool, int, float, str, bytes, tuple, list, set, frozenset and dict
(and the ``NamedTuple`` states of ``ttt``), as tagged JSON with a length prefix over two pipes of
their own (the student's prints go to the server's stdout and stderr, which the client keeps,
capped, and never reads as messages). Nothing the server says is trusted beyond being plain data:
the client builds exact built-in values only, caps sizes and depth, and takes a malformed message
as a protocol error (the server is killed and started again for the next call).

The module has three sections:

- the codec (`encode`, `decode`, `Unplain`): plain values to JSON trees and back, with the
  identity of containers kept within a message, and the write-back of mutated arguments;
- the server (`serve`): loads a notebook's definitions (`definitions`, `python_source`, `KEPT`:
  the one place that says what loading a submission's definitions means) or a ``.py`` file,
  then answers the client's operations: call, set, clear_caches, reload, refuse;
- the client (`Remote`): starts the server through a launcher (the sandbox's), limits each call
  in CPU seconds from outside, notices a server that stalls or dies and starts it again, serves
  the callbacks the student's code makes to trusted functions, and relays the grader's own
  exceptions (a failed check, a reference called) through the student's code.
"""

from __future__ import annotations

import ast
import base64
import builtins
import collections
import contextlib
import errno
import functools
import itertools
import json
import linecache
import math
import numbers
import operator
import os
import select
import signal
import struct
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Iterator, Optional, Union

from grader.checks.failures import OutOfCpuTime
from grader.processes import ChosenWait

MAX_MESSAGE = 16 * 2**20  # bytes of one message, either way
MAX_DEPTH = 100  # nesting of containers in one message
MAX_VALUE = 100_000  # bytes of a global passed as a value when a submission is loaded
MAX_BIG_INT = 10_000  # hexadecimal digits of an int
# Work the trusted side does on one message is bounded by these, whatever the other side sends:
MAX_UNFOLDED = 1_000_000  # items of a value counted as a tree (a container met twice counts twice)
TEXT_PER_ITEM = 64  # a str or bytes counts one item more for each this many characters (showing it costs them)
MAX_SAME_HASH = 16  # items of one set, frozenset or dict's keys that share one hash
_HEADER = struct.Struct(">I")
KEPT = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign,
        ast.AugAssign, ast.If, ast.Try)
_PACKAGES = ("ttt", "grader")
STATE_CLASSES = {("ttt.games.bigboard", "BigState")}  # the package's NamedTuple states that cross as themselves


# -- errors -----------------------------------------------------------------------------------


class RemoteError(BaseException):
    """Base of the classes built for exceptions a student's function raised in the server.

    Each such class is ``type(student_type_name, (builtin_base, RemoteError), {})``, so an
    ``except ValueError`` catches a student's ValueError (or its own subclass of it). The base may
    be SystemExit or KeyboardInterrupt when the student's code raised one: callers that catch
    ``Exception`` do not catch those, so catch ``RemoteError`` (or BaseException) around a call.
    Attributes: ``remote_type`` (the student's class name), ``remote_line`` ("in result, line 5:
    i, j = action", or ""), ``remote_message`` (``str(error)``, cut at 2,000 characters).
    """

    remote_type: str = ""
    remote_line: str = ""
    remote_message: str = ""


class RemoteFailure(BaseException):
    """The server could not answer: out of time, stalled, died, or said something malformed.

    A BaseException, as ``grader.checks.failures.OutOfCpuTime`` is: a check's ``except Exception``
    does not take it for an answer of the student's function.
    """


class RemoteTimeout(RemoteFailure, OutOfCpuTime):
    """A call used more than its CPU time (the server stopped it, or it was killed from outside).
    The checks take it as they take their own time limit (``OutOfCpuTime``)."""


class RemoteStalled(RemoteFailure, OutOfCpuTime):
    """The servers chose to wait (sleeping, or waiting on something) for their allowance in all, over
    every operation of the Remote: the operation under way is stopped and the later ones are not run;
    the checks take it as a time limit too."""


STALLED_WORDS = "waiting without computing"  # in every RemoteStalled's message
SERVICE_CPU = 10.0  # CPU seconds the server's own look at the submission's objects may use (refuse, clear_caches)


def _stalled(seconds: float, *, ran: bool) -> RemoteStalled:
    """Returns the failure of an operation stopped, or not run, because the submission's functions
    had waited without computing for `seconds` in all."""
    return RemoteStalled(f"the submission's functions spent {seconds:g} s {STALLED_WORDS} (sleeping, or waiting "
                         "for something that never came), the most they may in all: this call was "
                         + ("stopped" if ran else "not run"))


class RemoteDied(RemoteFailure):
    """The server's process ended (``status`` is its exit status, negative for a signal) or closed its pipe."""

    status: Optional[int] = None


class SandboxNotStarted(RemoteFailure):
    """The server never answered its first word (before any of the submission's code ran): the
    machine could not start it (no sandbox, no processes left), which is never the submission's doing."""


class RemoteProtocolError(RemoteFailure):
    """The server sent something that is not a well-formed message (the server is killed)."""


class NotPlainData(RemoteFailure):
    """The trusted side tried to give a student's function something that is not plain data (nothing was sent)."""


# -- codec ------------------------------------------------------------------------------------
#
# A JSON tree: None, true/false, str, and int (|n| < 2**53) and finite float stand for
# themselves; everything else is a list whose first item is a tag:
#   ["l", item, ...] list          ["t", item, ...] tuple      ["d", key, value, key, value, ...] dict
#   ["s", item, ...] set           ["f", item, ...] frozenset  ["r", n] the n-th container again
#   ["i", "-1f"] a big int (hex)   ["x", "nan"] a float that JSON has no number for
#   ["b", "base64"] bytes          ["u", type name, repr] an object that is not plain data
#   ["n", module, qualname, item, ...] a NamedTuple of ttt (its state classes)
#   ["o", n, container] the container the receiver sent as its n-th (for mutations and identity)
# Containers are numbered in the order they open (depth first), so ["r", n] refers to an earlier
# one: a list given twice, or the very list a function was given, arrives as one object.

_SCALARS = (int, float, str, bytes)
_CONTAINERS = {list: "l", tuple: "t", dict: "d", set: "s", frozenset: "f"}
_MUTABLE = (list, dict, set)
_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})  # what a JSON tree holds that stands for itself


class Unplain:
    """What arrives in place of an object that is not plain data: its type's name and its repr.

    Equal to nothing but itself, so a check that compares it with an answer fails, and its repr is
    the student's repr (cut at 200 characters), so the failure shows what came back.
    """

    __slots__ = ("type_name", "text")

    def __init__(self, type_name: str, text: str) -> None:
        object.__setattr__(self, "type_name", str(type_name)[:200])
        object.__setattr__(self, "text", str(text)[:200])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Unplain is read-only")

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: Any) -> bool:
        return self is other

    def __ne__(self, other: Any) -> bool:
        return self is not other

    __hash__ = object.__hash__


class _Encoder:
    """Turns values into a JSON tree; one encoder per message, so identity is kept within it."""

    def __init__(self, origins: Optional[dict[int, int]] = None) -> None:
        self.numbers: dict[int, int] = {}
        self.objects: list = []  # the containers by number (kept alive, so ids stay unique)
        self.open: set[int] = set()  # tuples and frozensets being encoded (a cycle through one is refused)
        self.origins = origins or {}
        self.subclasses: list[str] = []  # "MyStr (a subclass of str)", once each
        self.unplain = False
        self.mutable = False
        self.other = False  # met a value that is not of a plain type (see `_other`)

    def tree(self, value: Any) -> Any:
        """Returns the JSON tree of `value`, as `encode` does; quickly for the common value made of
        lists, tuples and scalars that stand for themselves, no container in it twice or sent to
        this side (`_simple_tree`), whose containers are then not numbered (`objects` stays empty)."""
        try:
            return _simple_tree(value, set(), self.origins, 0)
        except _NotSimple:
            return self.encode(value)

    def encode(self, value: Any, depth: int = 0) -> Any:
        """Returns the JSON tree of `value`."""
        kind = type(value)
        if value is None or kind is bool or kind is str:
            return value
        if kind is int:
            return value if -2**53 < value < 2**53 else ["i", format(value, "x")]
        if kind is float:
            return value if math.isfinite(value) else ["x", repr(value)]
        if kind in _CONTAINERS:
            return self._container(value, kind, depth)
        if kind is bytes:
            return ["b", base64.b64encode(value).decode("ascii")]
        return self._other(value, kind, depth)

    def _container(self, value: Any, kind: type, depth: int, tag: Optional[str] = None) -> Any:
        number = self.numbers.get(id(value))
        if number is not None:
            if number in self.open:
                return self._unplain(kind.__name__, f"<a {kind.__name__} that contains itself>")
            return ["r", number]
        if depth >= MAX_DEPTH:
            return self._unplain(kind.__name__, f"<a {kind.__name__} nested more than {MAX_DEPTH} deep>")
        number = len(self.objects)
        self.numbers[id(value)] = number
        self.objects.append(value)
        immutable = kind in (tuple, frozenset)
        if immutable:
            self.open.add(number)
        else:
            self.mutable = True
        tree: list = [tag or _CONTAINERS[kind]] if tag != "n" else ["n", type(value).__module__, type(value).__qualname__]
        if kind is dict:
            for key, item in dict.items(value):
                tree.append(self.encode(key, depth + 1))
                tree.append(self.encode(item, depth + 1))
        else:
            for item in kind.__iter__(value):
                tree.append(self.encode(item, depth + 1))
        self.open.discard(number)
        origin = self.origins.get(id(value))
        return tree if origin is None else ["o", origin, tree]

    def _other(self, value: Any, kind: type, depth: int) -> Any:
        """A subclass of a plain type (as its plain base, noted), a NumPy int (as an int), or an `Unplain`."""
        self.other = True  # reading it may run its own code
        if kind is Unplain:
            return ["u", value.type_name, value.text]
        try:
            for base in (int, float, str, bytes, tuple, list, dict, set, frozenset):
                if isinstance(value, base):
                    if base is tuple and _named_tuple_of_ours(kind):
                        return self._container(value, tuple, depth, "n")
                    self._subclass(kind, base)
                    if base is str:
                        return str.__str__(value)
                    if base is int:
                        return self.encode(int.__index__(value), depth)
                    if base is float:
                        return self.encode(float.__float__(value), depth)
                    if base is bytes:
                        return self.encode(bytes(memoryview(value)), depth)
                    return self._container(value, base, depth)
            if kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool"):  # NumPy's bool: the bool it holds
                return bool(value)
            if isinstance(value, numbers.Integral):
                return self.encode(int(operator.index(value)), depth)
            text = repr(value)
        except Exception:  # noqa: BLE001  (the object's own methods failed: it is not plain data)
            text = f"<{kind.__name__} object>"
        return self._unplain(_type_label(kind), text)

    def _subclass(self, kind: type, base: type) -> None:
        note = f"{_type_label(kind)} (a subclass of {base.__name__})"
        if note not in self.subclasses:
            self.subclasses.append(note)

    def _unplain(self, type_name: str, text: str) -> list:
        self.unplain = True
        return ["u", type_name, text[:200]]


class _NotSimple(Exception):
    """Raised by `_simple_tree` for a value it leaves to `_Encoder.encode`."""


_SIMPLE_DEPTH = 8


def _simple_tree(value: Any, seen: set[int], origins: dict[int, int], depth: int) -> list:
    """Returns the JSON tree of a list or tuple of lists, tuples, str, None, bool, int below 2**53
    and finite floats, nested at most `_SIMPLE_DEPTH` deep, with no container met twice (`seen`)
    and none in `origins`: the tree `_Encoder.encode` gives it, made without numbering. Raises
    _NotSimple for any other value."""
    kind = type(value)
    if (kind is not list and kind is not tuple) or depth > _SIMPLE_DEPTH or id(value) in seen or id(value) in origins:
        raise _NotSimple
    seen.add(id(value))
    tree = ["l" if kind is list else "t"]
    for item in value:
        kind = type(item)
        if kind is str or item is None or kind is bool or (kind is int and -2**53 < item < 2**53) or (kind is float and math.isfinite(item)):
            tree.append(item)
        else:
            tree.append(_simple_tree(item, seen, origins, depth + 1))
    return tree


def _type_label(kind: type) -> str:
    """Returns a type's name as a message names it: its own name, with its module when that is a library's."""
    try:
        module = kind.__module__
        name = kind.__qualname__
    except Exception:  # noqa: BLE001
        return "object"
    if not isinstance(module, str) or not isinstance(name, str):
        return "object"
    return name[:100] if module in ("builtins", "__main__", "tictactoe") else f"{module[:100]}.{name[:100]}"


def _named_tuple_of_ours(kind: type) -> bool:
    """True for a NamedTuple class of ``ttt`` (a game state), reachable by its module and name."""
    module, qualname = getattr(kind, "__module__", ""), getattr(kind, "__qualname__", "")
    return ((module, qualname) in STATE_CLASSES and isinstance(getattr(kind, "_fields", None), tuple)
            and _resolve(module, qualname, import_module=False) is kind)


def _resolve(module: str, qualname: str, *, import_module: bool) -> Any:
    """Returns the object `qualname` names in `module` (imported only if `import_module`, else only if imported already), or None."""
    if not isinstance(module, str) or not isinstance(qualname, str) or not module or not qualname:
        return None
    found = sys.modules.get(module)
    if found is None and import_module:
        import importlib

        try:
            found = importlib.import_module(module)
        except Exception:  # noqa: BLE001
            return None
    for part in qualname.split("."):
        if found is None or part.startswith("<"):
            return None
        found = getattr(found, part, None)
    return found


def encode(value: Any) -> Any:
    """Returns the JSON tree of `value` (only plain data survives; anything else becomes an `Unplain`)."""
    return _Encoder().encode(value)


class _Decoder:
    """Builds values from a JSON tree: exact built-in types only (and `Unplain`, and ttt's NamedTuples)."""

    _OPEN = object()

    def __init__(self) -> None:
        self.table: list = []
        self.origins: list[tuple[Any, int]] = []  # (container built, the number the other side gave it)
        self.mutable = False
        self.unfolded: dict[int, int] = {}  # id of a container built -> its items counted as a tree
        self.hashed = 0  # items hashed so far (into sets, frozensets and dicts' keys), counted as trees

    def _size(self, items: list) -> int:
        """Returns the size of a container of `items` counted as a tree (shared containers count each time
        they occur; one being built, met again inside itself, counts 1); raises RemoteProtocolError past
        MAX_UNFOLDED. Hashing, comparing or showing a value costs about this: references between containers
        let a small message stand for a tree of 2^100 items (a tuple holding the one before it twice), or
        of 300 megabytes to show (a list holding 300 times one list of a 1 MB string), so text counts by its
        length (`TEXT_PER_ITEM`)."""
        size = 1
        for item in items:
            kind = type(item)
            size += (1 + len(item) // TEXT_PER_ITEM) if kind is str or kind is bytes else self.unfolded.get(id(item), 1)
        if size > MAX_UNFOLDED:
            raise RemoteProtocolError(f"a value of more than {MAX_UNFOLDED:,} items, counting the containers it "
                                      f"holds more than once each time")
        return size

    def _hashable(self, items: Any, size: int) -> None:
        """Raises RemoteProtocolError before a set, frozenset or dict is built of `items` (its keys) if building
        it would cost more than linear work: more than MAX_SAME_HASH items with one hash (Python's sets and
        dicts compare such items with each other, quadratic in their number, in one call no signal stops),
        or more items hashed in the message than MAX_UNFOLDED. Hashing each item once here is linear: the
        hashes are ints, and distinct ints have distinct hashes."""
        self.hashed += size
        if self.hashed > MAX_UNFOLDED:
            raise RemoteProtocolError(f"sets and dicts of more than {MAX_UNFOLDED:,} items in one message")
        counts: dict[int, int] = {}
        try:
            for item in items:
                key = hash(item)
                counts[key] = seen = counts.get(key, 0) + 1
                if seen > MAX_SAME_HASH:
                    raise RemoteProtocolError(f"a set or dict with more than {MAX_SAME_HASH} items that share one "
                                              f"hash ({_glimpse(item)} among them): refused, as building it would "
                                              f"take time quadratic in their number")
        except TypeError as error:
            raise RemoteProtocolError(f"an unhashable key or set item: {error}") from None

    def decode(self, tree: Any, depth: int = 0) -> Any:
        """Returns the value `tree` stands for; raises RemoteProtocolError for a malformed tree."""
        kind = type(tree)
        if tree is None or kind is bool or kind is str or kind is int or kind is float:
            return tree
        if kind is not list or not tree or type(tree[0]) is not str:
            raise RemoteProtocolError(f"not a value of the protocol: {_glimpse(tree)}")
        if depth > MAX_DEPTH + 2:
            raise RemoteProtocolError(f"a value nested more than {MAX_DEPTH} deep")
        tag = tree[0]
        if tag == "l" or tag == "d" or tag == "s":
            made: Any = [] if tag == "l" else {} if tag == "d" else set()
            self.table.append(made)
            self.mutable = True
            items = [item if type(item) in _JSON_SCALARS else self.decode(item, depth + 1) for item in tree[1:]]
            size = self._size(items)
            if tag == "d" and len(items) % 2:
                raise RemoteProtocolError("a dict with a key and no value")
            if tag != "l":
                self._hashable(items if tag == "s" else items[0::2], size)
            if tag == "l":
                made.extend(items)
            elif tag == "s":
                made.update(items)
            else:
                made.update(zip(items[0::2], items[1::2]))
            self.unfolded[id(made)] = size
            return made
        if tag == "t" or tag == "f" or tag == "n":
            number = len(self.table)
            self.table.append(self._OPEN)
            start = 3 if tag == "n" else 1
            items = [item if type(item) in _JSON_SCALARS else self.decode(item, depth + 1) for item in tree[start:]]
            size = self._size(items)
            if tag == "t":
                made = tuple(items)
            elif tag == "f":
                self._hashable(items, size)
                made = frozenset(items)
            else:
                made = self._named(tree, items)
            self.table[number] = made
            self.unfolded[id(made)] = size
            return made
        if tag == "r" and len(tree) == 2 and type(tree[1]) is int and 0 <= tree[1] < len(self.table):
            made = self.table[tree[1]]
            if made is self._OPEN:
                raise RemoteProtocolError("a tuple that contains itself")
            return made
        if tag == "o" and len(tree) == 3 and type(tree[1]) is int and type(tree[2]) is list and tree[2][:1] in (["l"], ["d"], ["s"], ["t"], ["f"], ["n"]):
            made = self.decode(tree[2], depth)
            self.origins.append((made, tree[1]))
            return made
        if len(tree) == 2 and type(tree[1]) is str:
            text = tree[1]
            if tag == "i" and 0 < len(text) <= MAX_BIG_INT:
                try:
                    return int(text, 16)
                except ValueError:
                    pass
            elif tag == "x" and text in ("nan", "inf", "-inf"):
                return float(text)
            elif tag == "b" and len(text) <= MAX_MESSAGE:
                try:
                    return base64.b64decode(text.encode("ascii"), validate=True)
                except ValueError:
                    pass
        if tag == "u" and len(tree) == 3 and type(tree[1]) is str and type(tree[2]) is str:
            return Unplain(tree[1], tree[2])
        raise RemoteProtocolError(f"not a value of the protocol: {_glimpse(tree)}")

    @staticmethod
    def _named(tree: list, items: list) -> tuple:
        """Returns a ttt NamedTuple built from its fields (without running any of its code), or raises RemoteProtocolError."""
        module, qualname = (tree + [None, None])[1:3]
        if (module, qualname) not in STATE_CLASSES:  # nothing else is imported or built on a word from the other side
            raise RemoteProtocolError(f"not a NamedTuple of ttt: {_glimpse(tree)}")
        kind = _resolve(module, str(qualname), import_module=True)
        fields = getattr(kind, "_fields", None)
        if not (isinstance(kind, type) and issubclass(kind, tuple) and isinstance(fields, tuple) and len(fields) == len(items)):
            raise RemoteProtocolError(f"not a NamedTuple of ttt: {_glimpse(tree)}")
        return tuple.__new__(kind, items)


class _ClientsDecoder(_Decoder):
    """The student server's decoder of the grader's own messages: the bounds on the work a value
    costs protect the grader from the student's process, not the other way round."""

    def _size(self, items: list) -> int:
        return 1

    def _hashable(self, items: Any, size: int) -> None:
        return None

    def decode(self, tree: Any, depth: int = 0) -> Any:
        """As `_Decoder.decode`, quickly for lists and tuples (the containers numbered in the same order)."""
        if type(tree) is list and tree and depth <= MAX_DEPTH:
            tag = tree[0]
            if tag == "l":
                made: Any = []
                self.table.append(made)
                made.extend([item if type(item) in _JSON_SCALARS else self.decode(item, depth + 1) for item in tree[1:]])
                return made
            if tag == "t":
                number = len(self.table)
                self.table.append(self._OPEN)
                made = tuple([item if type(item) in _JSON_SCALARS else self.decode(item, depth + 1) for item in tree[1:]])
                self.table[number] = made
                return made
        return super().decode(tree, depth)


def decode(tree: Any) -> Any:
    """Returns the value a JSON tree stands for (exact built-in types only); raises RemoteProtocolError for a malformed one."""
    return _Decoder().decode(tree)


def _glimpse(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _settle(decoder: _Decoder, value: Any, originals: list) -> Any:
    """Writes what came back into the objects this side sent, and returns `value` with them in place.

    `originals` are the containers this side sent, by number. Each container the other side marked
    as the n-th one it was sent gets the contents it came back with (a mutated argument), and
    stands for the original wherever it occurs: in the returned value too, so that a function that
    returns the list it was given returns the caller's own list.
    """
    if not decoder.origins:
        return value
    mapping: dict[int, Any] = {}
    for made, number in decoder.origins:
        if 0 <= number < len(originals) and type(originals[number]) is type(made):
            mapping[id(made)] = originals[number]
    done: dict[int, Any] = {}

    def resolve(item: Any) -> Any:
        kind = type(item)
        if kind not in _CONTAINERS and not isinstance(item, tuple):
            return item
        if id(item) in mapping:
            return mapping[id(item)]
        if id(item) in done:
            return done[id(item)]
        done[id(item)] = item
        if kind is list:
            item[:] = [resolve(x) for x in item]
        elif kind is dict:
            for key in list(item):
                item[key] = resolve(item[key])
        elif isinstance(item, tuple):
            parts = [resolve(x) for x in item]
            if any(a is not b for a, b in zip(parts, item)):
                done[id(item)] = tuple.__new__(kind, parts)
        return done[id(item)]

    for made, number in decoder.origins:
        original = mapping.get(id(made))
        if original is None or type(original) not in _MUTABLE:
            continue
        if type(original) is list:
            original[:] = [resolve(x) for x in made]
        elif type(original) is dict:
            contents = {key: resolve(x) for key, x in made.items()}
            original.clear()
            original.update(contents)
        else:
            original.clear()
            original.update(made)
    return resolve(value)


def _contents(made: Any) -> Optional[list]:
    """Returns what a mutable container holds (its items, or a dict's (key, value) pairs), to tell
    later whether it changed (`_changed`); None for a set (always taken as changed)."""
    kind = type(made)
    return list(made) if kind is list else list(dict.items(made)) if kind is dict else None


def _changed(made: Any, held: Optional[list]) -> bool:
    """True unless the container `made` holds the very objects it held (`_contents`), in the same order."""
    if held is None or len(made) != len(held):
        return True
    if type(made) is list:
        return any(map(operator.is_not, made, held))
    return any(k is not k0 or v is not v0 for (k, v), (k0, v0) in zip(dict.items(made), held))


def _identical(a: Any, b: Any) -> bool:
    """True if `a` and `b` are equal plain values of the very same types all the way down (1 is
    neither True nor 1.0); False for anything else (a set, a dict: never taken from a plan)."""
    kind = type(a)
    if kind is not type(b):
        return False
    if not (kind is list or isinstance(a, tuple)):
        return kind in _JSON_SCALARS and a == b
    if a != b:  # equal values (as Python compares them), and then the very same types, container by container
        return False
    pairs = [(a, b)]
    while pairs:
        x, y = pairs.pop()
        for p, q in zip(x, y):
            kind = type(p)
            if kind is not type(q):
                return False
            if kind is list or isinstance(p, tuple):
                pairs.append((p, q))
            elif kind not in _JSON_SCALARS:
                return False
    return True


def _incoming(decoder: _Decoder, *wrappers: Any) -> tuple[dict[int, int], list]:
    """Returns ({id: number} of the containers a message brought, but `wrappers`), and the mutable ones among them."""
    skip = {id(w) for w in wrappers}
    origins = {id(made): n for n, made in enumerate(decoder.table) if id(made) not in skip}
    return origins, [made for made in decoder.table if type(made) in _MUTABLE and id(made) not in skip]


# -- framing ----------------------------------------------------------------------------------


_JSON_TEXT = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode  # a message's JSON text (json.dumps
# with these settings would make a new encoder each time: a few microseconds a call, in a map)


def _frame(message: dict) -> bytes:
    """Returns a message as its length prefix and JSON text."""
    body = _JSON_TEXT(message).encode("ascii")
    return _HEADER.pack(len(body)) + body


def _parse(body: bytes) -> dict:
    """Returns the message in `body`, or raises RemoteProtocolError."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError) as error:
        raise RemoteProtocolError(f"a message that is not JSON: {str(error)[:200]}") from None
    if type(message) is not dict:
        raise RemoteProtocolError(f"a message that is not a JSON object: {_glimpse(message)}")
    return message


# -- server (in the sandbox) ------------------------------------------------------------------


def python_source(source: str) -> str:
    """Returns a cell's source as plain Python (IPython's magics and shell escapes translated)."""
    try:
        ast.parse(source)
        return source
    except SyntaxError:
        pass
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


def definitions(source: str) -> list[ast.stmt]:
    """Returns the statements of a cell that loading a submission runs: its definitions (`KEPT`),
    each to be run on its own; none for a cell that is not Python (after IPython's translation)."""
    try:
        tree = ast.parse(python_source(source))
    except (SyntaxError, ValueError):
        return []
    return [statement for statement in tree.body if isinstance(statement, KEPT)]


# What the grader's own code in the student server leaves for the grader with a call's answer (a
# recorder's boards: ``grader.checks.student.counting_positions``): text, at most MAX_NOTES a call, each
# at most NOTE_CHARS long. The student's code can write here too: the grader reads a note as a claim
# the student's process makes, as it reads an answer.
NOTES: list = []
MAX_NOTES, NOTE_CHARS = 200_000, 100


class _OutOfCPU(BaseException):
    """Raised in the student's code when a call's CPU time is up."""


class _Relayed(BaseException):
    """Raised in the student's code for an exception of the grader's own that a callback raised."""


class _Closed(Exception):
    """The client closed its pipe."""


class _Framed(bytes):
    """A reply's JSON text, made by the operation itself (`_Server.map` joins its replies' texts)."""


class _Limit:
    """The block of `_Server.limited` (a class rather than a generator: a map enters one a call)."""

    __slots__ = ("levels", "limit", "outer", "start", "level")

    def __init__(self, levels: list, seconds: Optional[float], outer: Optional[float]) -> None:
        self.levels, self.outer = levels, outer
        self.limit = float(seconds) if isinstance(seconds, (int, float)) and seconds is not True and seconds > 0 else None

    def __enter__(self) -> dict:
        self.level = {"rang": False}
        if self.limit is not None and self.outer is None:
            self.outer = signal.getitimer(signal.ITIMER_VIRTUAL)[0]
        self.start = os.times().user if self.limit is not None and self.outer else 0.0
        self.levels.append(self.level)
        if self.limit is not None:
            try:
                signal.setitimer(signal.ITIMER_VIRTUAL, max(self.limit, 0.001))
            except BaseException:
                self.levels.pop()
                raise
        return self.level

    def __exit__(self, *exc: Any) -> None:
        try:
            if self.limit is not None:
                outer = self.outer
                left = outer - (os.times().user - self.start) if outer else 0
                signal.setitimer(signal.ITIMER_VIRTUAL, max(left, 0.001) if outer else 0)
        finally:
            self.levels.pop()


class _Server:
    """The student server: the submission's namespace, its functions by id, and the operations on them."""

    def __init__(self, rfd: int, wfd: int) -> None:
        self.rfd, self.wfd = rfd, wfd
        self.namespace: dict = {}
        self.objects: list = []  # registered objects, by id
        self.ids: dict[str, int] = {}  # name -> id, kept over reloads
        self.file: Optional[str] = None
        self.student_files: set[str] = set()
        self.levels: list[dict] = []  # the CPU limits in force, innermost last
        self.load_message: dict = {}

    # messages

    def receive(self) -> dict:
        """Returns the next message from the client; raises _Closed when it is gone."""
        head = self._read(_HEADER.size)
        (size,) = _HEADER.unpack(head)
        if size > MAX_MESSAGE:
            raise _Closed()
        return _parse(self._read(size))

    def _read(self, size: int) -> bytes:
        parts = bytearray()
        while len(parts) < size:
            try:
                chunk = os.read(self.rfd, min(size - len(parts), 1 << 20))
            except InterruptedError:
                continue
            if not chunk:
                raise _Closed()
            parts += chunk
        return bytes(parts)

    def send(self, message: Union[dict, _Framed], *, seq: Optional[int] = None) -> None:
        """Sends a message (or a reply's JSON text) to the client, after flushing what the student's code printed;
        `seq`: the number of the operation it answers."""
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001  (a stream the student's code replaced or closed)
                pass
        if seq is not None:
            message = _Framed(b'{"seq":%d,' % seq + message[1:]) if isinstance(message, _Framed) else {**message, "seq": seq}
        data = _HEADER.pack(len(message)) + message if isinstance(message, _Framed) else _frame(message)
        if len(data) > MAX_MESSAGE and isinstance(message, dict) and "data" in message:  # a value too big to pass: it arrives as an Unplain
            data = _frame(message | {"data": [["u", "object", f"<a value of {len(data):,} bytes, too big to pass on>"], []],
                                     "subclasses": []})
        if len(data) > MAX_MESSAGE:
            data = _frame({"error": f"the answer is {len(data):,} bytes, more than {MAX_MESSAGE:,}", "too_big": len(data)})
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self.wfd, view):]
            except InterruptedError:
                continue

    def run(self) -> None:
        """Answers the client's operations until it closes its pipe."""
        signal.signal(signal.SIGVTALRM, self._ring)
        while True:
            try:
                message = self.receive()
            except (_Closed, RemoteProtocolError):
                return
            self.answer(message)

    def answer(self, message: dict) -> None:
        """Sends the reply to one operation, with the operation's number (``seq``) so the client knows it for its own."""
        seq = message.get("seq")
        self.send(self.handle(message), seq=seq if type(seq) is int else None)

    def handle(self, message: dict) -> Union[dict, "_Framed"]:
        """Returns the reply to one operation."""
        op = message.get("op")
        handler = {"hello": lambda message: {"hello": True}, "load": self.load, "call": self.call, "map": self.map, "set": self.set,
                   "clear_caches": self.clear_caches, "reload": self.reload,
                   "refuse": self.refuse}.get(op if isinstance(op, str) else "")
        if handler is None:
            return {"error": f"no such operation: {_glimpse(op)}"}
        try:
            return handler(message)
        except _Relayed:
            return {"relayed": True}
        except (_OutOfCPU, RemoteProtocolError, LookupError, TypeError, ValueError) as error:
            return {"error": f"{type(error).__name__}: {str(error)[:500]}"}

    # CPU time

    def _ring(self, signum: int, frame: Any) -> None:
        if not self.levels:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            return
        self.levels[-1]["rang"] = True
        signal.setitimer(signal.ITIMER_VIRTUAL, 0.05)  # again and again, for code that catches it
        raise _OutOfCPU()

    def limited(self, seconds: Optional[float], *, outer: Optional[float] = None) -> "_Limit":
        """Inside the block, `_OutOfCPU` is raised once `seconds` of CPU time are used (none for None);
        yields a record whose "rang" says whether it was. An outer limit goes on counting afterwards.
        `outer`: the seconds the timer has left, when the caller knows it (0: none runs), saving the
        system calls that read it."""
        return _Limit(self.levels, seconds, outer)

    def bounded(self, seconds: Optional[float], work: Callable[[], Any], *, outer: Optional[float] = None,
                began: Optional[float] = None) -> tuple[Any, Optional[float]]:
        """Returns (what `work` () returned, None), or (None, the CPU seconds it used) when it ran
        out of its `seconds` (see `limited`, and its `outer`); `began`: the process's CPU time
        (time.process_time) at the start, when the caller has just read it."""
        start = time.process_time() if began is None else began
        result = None
        try:
            with self.limited(seconds, outer=outer) as clock:
                result = work()
        except _OutOfCPU:
            clock = {"rang": True}
        return (None, round(time.process_time() - start, 3)) if clock["rang"] else (result, None)

    # load

    def load(self, message: dict) -> dict:
        """Loads the submission (`cells` or `file`); returns its names (see `_names`), what was
        skipped, the error of a file that failed, and whether the CPU time ran out."""
        if self.objects:
            return {"error": "a submission is loaded already"}
        self.load_message = message
        cpu = message.get("cpu")
        with self._load_trapped(message.get("traps")):
            if isinstance(message.get("cells"), list):
                skip = {tuple(at) for at in message.get("skip", []) if isinstance(at, list) and len(at) == 2}
                reply = self._load_cells([c for c in message["cells"] if isinstance(c, str)], cpu, skip)
            elif isinstance(message.get("file"), str):
                reply = self._load_file(message["file"], cpu)
            else:
                return {"error": "load needs cells or file"}
            return reply | self._limited_names(cpu)

    @staticmethod
    def _load_trapped(kinds: Any) -> Any:
        """Returns the block the definitions load in: the references of the checks `kinds` switched
        off (``load_traps``)."""
        if not isinstance(kinds, list) or not kinds:
            return contextlib.nullcontext()
        from grader.checks.reference import _reference_off, load_traps

        return _reference_off(load_traps([k for k in kinds if isinstance(k, str)]), caches=False)

    def _load_cells(self, cells: list[str], cpu: Any, skip: Collection[tuple] = ()) -> dict:
        namespace = self.namespace = {"__name__": "__main__", "__builtins__": builtins}
        folder = os.getcwd()
        if folder not in sys.path:
            sys.path.append(folder)  # the notebook's folder, after the installed modules
        skipped: list[str] = []
        out_of_time = False
        with self.limited(cpu) as clock:
            for index, source in enumerate(cells):
                name = f"<cell {index}>"
                try:
                    text = python_source(source)
                    tree = ast.parse(text)
                except (SyntaxError, ValueError) as error:
                    skipped.append(f"cell {index}: {type(error).__name__}: {str(error)[:200]}")
                    continue
                except _OutOfCPU:
                    out_of_time = True
                    break
                linecache.cache[name] = (len(text), None, text.splitlines(True), name)
                self.student_files.add(name)
                for statement in tree.body:
                    if not isinstance(statement, KEPT):
                        continue
                    if (index, statement.lineno) in skip:  # it ended the process last time: left out
                        skipped.append(f"cell {index}, line {statement.lineno}: stopped the process it was loaded "
                                       "into (it exits, crashes, or waits without end), so it was left out")
                        continue
                    self.send({"op": "progress", "at": [index, statement.lineno]})
                    try:
                        exec(compile(ast.Module(body=[statement], type_ignores=[]), name, "exec"), namespace)
                    except BaseException as error:  # noqa: BLE001  (a failing definition is left out)
                        if clock["rang"] or isinstance(error, _OutOfCPU):
                            out_of_time = True
                            break
                        if len(skipped) < 50:
                            skipped.append(f"cell {index}, line {statement.lineno}: {type(error).__name__}: {str(error)[:200]}")
                if out_of_time:
                    break
        return {"skipped": skipped, "out_of_time": out_of_time}

    def _load_file(self, path: str, cpu: Any) -> dict:
        path = str(Path(path).resolve())
        self.file = path
        self.student_files.add(path)
        folder = str(Path(path).parent)
        if folder not in sys.path:
            sys.path.append(folder)
        return self._run_file(cpu)

    def _run_file(self, cpu: Any) -> dict:
        """Runs the file as a fresh module ``tictactoe``; returns its error (None) and whether it ran out of time."""
        import importlib.util

        path = self.file or ""
        module = types.ModuleType("tictactoe")
        module.__file__ = path
        sys.modules["tictactoe"] = module
        self.namespace = vars(module)
        error_info = None
        out_of_time = False
        linecache.checkcache(path)
        with self.limited(cpu) as clock:
            try:
                with open(path, "rb") as handle:
                    source = handle.read()
                spec = importlib.util.spec_from_file_location("tictactoe", path)
                module.__spec__ = spec
                exec(compile(source, path, "exec"), self.namespace)
            except BaseException as error:  # noqa: BLE001  (a syntax error, an exit, a crash while importing)
                if clock["rang"] or isinstance(error, _OutOfCPU):
                    out_of_time = True
                else:
                    error_info = self._raised(error)
        return {"error_raised": error_info, "out_of_time": out_of_time}

    def reload(self, message: dict) -> dict:
        """Runs the file again into a fresh module (same ids for the same names); returns what `load` returns."""
        if self.file is None:
            return {"error": "reload is for a .py file"}
        cpu = message.get("cpu", self.load_message.get("cpu"))
        with self._load_trapped(self.load_message.get("traps")):
            reply = self._run_file(cpu)
            return reply | self._limited_names(cpu)

    def _limited_names(self, cpu: Any) -> dict:
        """Returns {"names": `_names`}, read under the CPU limit `cpu` (reading a value may run the
        student's code: its ``__repr__``, its ``__index__``); {"names": [], "out_of_time": True} when it ran out."""
        names, over = self.bounded(cpu, self._names)
        return {"names": [], "out_of_time": True} if over is not None else {"names": names}

    def _names(self) -> list[dict]:
        """Registers the namespace's callables (ids in namespace order) and returns each name's
        entry: a function of the student's, a package's function or class, a plain value, or an object."""
        entries = []
        room = MAX_MESSAGE // 2
        for name, value in list(self.namespace.items()):
            if not isinstance(name, str) or (name.startswith("__") and name.endswith("__")) or len(name) > 200:
                continue
            try:
                entry = self._entry(name, value, room)
            except _OutOfCPU:
                raise
            except BaseException:  # noqa: BLE001  (an object whose reading fails, or calls a switched-off reference)
                entry = {"name": name, "kind": "object", "type": "object"}
            room -= len(json.dumps(entry.get("value")))
            entries.append(entry)
        return entries

    def _entry(self, name: str, value: Any, room: int) -> dict:
        if callable(value) and not isinstance(value, types.ModuleType):
            if name in self.ids:
                self.objects[self.ids[name]] = value
            else:
                self.ids[name] = len(self.objects)
                self.objects.append(value)
            entry = {"name": name, "id": self.ids[name], "qualname": str(getattr(value, "__name__", name))[:200]}
            where = _package_path(value)
            if where:
                return entry | {"kind": "package", "module": where[0], "qualname": where[1]}
            return entry | {"kind": "function"}
        encoder = _Encoder()
        tree = encoder.encode(value)
        if not encoder.unplain and not encoder.subclasses and len(json.dumps(tree)) <= min(MAX_VALUE, room):
            return {"name": name, "kind": "value", "value": tree}
        return {"name": name, "kind": "object", "type": _type_label(type(value))}

    # call

    def _object(self, number: Any) -> Any:
        if type(number) is not int or not 0 <= number < len(self.objects):
            raise LookupError(f"no object {_glimpse(number)}")
        return self.objects[number]

    def call(self, message: dict) -> dict:
        """Calls a registered object; returns {"ok": [value, mutated arguments]}, {"raised": ...},
        {"out_of_time": CPU seconds} or {"not_written": message}."""
        return self._call_one(self._object(message.get("id")), message.get("data"), message.get("traps"),
                              message.get("cpu"))

    def map(self, message: dict) -> "_Framed":
        """Calls a registered object on each of ``calls`` in turn (each [args, kwargs], as a call's
        data), each under its own limit ``cpu`` and all of them under ``total`` CPU seconds; returns
        {"replies": [what `call` returns, ...]}, ending early after a call out of time (its
        ``"by"``: "call" or "total"), or once the replies fill half a message."""
        function = self._object(message.get("id"))
        calls, own, total = message.get("calls"), message.get("cpu"), message.get("total")
        if type(calls) is not list:
            raise ValueError("map needs calls")
        own = float(own) if type(own) in (int, float) and own > 0 else None
        total = float(total) if type(total) in (int, float) and total > 0 else None
        with self._trapped(message.get("traps")):  # once for all the calls (nothing else runs between them)
            return self._mapped(function, calls, own, total)

    def _mapped(self, function: Any, calls: list, own: Optional[float], total: Optional[float]) -> "_Framed":
        parts: list[bytes] = []
        size = 0
        start = now = time.process_time()
        outer = None if self.levels else 0.0  # no limit runs outside a map that is not nested in a callback
        for data in calls:
            cpu, by = own, "call"
            if total is not None:
                left = total - (now - start)
                if left <= 0:
                    break
                if cpu is None or left < cpu:
                    cpu, by = left, "total"
            reply = self._call_one(function, data, None, cpu, outer=outer, began=now)
            now = time.process_time()
            if "out_of_time" in reply:
                reply["by"] = by
            text = _JSON_TEXT(reply).encode("ascii")
            if len(text) > MAX_MESSAGE // 4:  # one answer too big to pass: it arrives as an Unplain, as from `call`
                reply |= {"data": [["u", "object", f"<a value of {len(text):,} bytes, too big to pass on>"], []], "subclasses": []}
                text = _JSON_TEXT(reply).encode("ascii")
            parts.append(text)
            size += len(text)
            if "data" not in reply or size > MAX_MESSAGE // 2:
                break
        return _Framed(b'{"replies":[' + b",".join(parts) + b"]}")

    def _call_one(self, function: Any, data: Any, traps: Any, cpu: Any, *, outer: Optional[float] = None,
                  began: Optional[float] = None) -> dict:
        """Calls `function` on `data` ([args, kwargs]) under the traps of the check `traps` (None:
        none, or the caller's in force) and `cpu` CPU seconds; returns the reply `call` describes.
        `outer`, `began`: see `bounded`."""
        decoder = _ClientsDecoder()
        top = decoder.decode(data)
        if type(top) is not list or len(top) != 2 or type(top[0]) is not list or type(top[1]) is not dict:
            raise ValueError("call needs [args, kwargs]")
        args, kwargs = top
        origins, mutables = _incoming(decoder, top, args, kwargs)
        before = [(made, _contents(made)) for made in mutables]
        NOTES.clear()

        def answered() -> dict:
            value: Any = None
            raised: Optional[BaseException] = None
            with self._trapped(traps):
                try:
                    value = function(*args, **kwargs)
                except _OutOfCPU:
                    raise
                except BaseException as error:  # noqa: BLE001  (whatever it raised is its answer)
                    raised = error
                if isinstance(raised, _Relayed):
                    return {"relayed": True}
                if type(raised) is NotImplementedError:
                    return {"not_written": str(raised)[:2000]}
                try:  # encoding may run the student's code (repr, __index__): still in the call, traps and limit on
                    return self._answer(origins, before, value, raised)
                except _OutOfCPU:
                    raise
                except BaseException as error:  # noqa: BLE001  (what reading the answer raised is its answer)
                    return self._answer(origins, before, None, error)

        reply, over = self.bounded(cpu, answered, outer=outer, began=began)
        return {"out_of_time": over} if over is not None else reply

    @staticmethod
    def _trapped(traps: Any) -> Any:
        """Returns the block a call runs in: the references of the check `traps` switched off (a str), or nothing."""
        if not isinstance(traps, str):
            return contextlib.nullcontext()
        from grader.checks.reference import _forbidden_objects, _reference_off

        return _reference_off(_forbidden_objects(traps))

    def _answer(self, origins: dict[int, int], before: list[tuple[Any, Optional[list]]], value: Any,
                raised: Optional[BaseException]) -> dict:
        """Returns the reply to a call: the value (or the error), and the arguments it was given that
        it changed, as they are now (`before`: each mutable argument and what it held, `_contents`)."""
        changed = [made for made, held in before if _changed(made, held)]
        encoder = _Encoder(origins)
        tree = encoder.tree([None if raised is not None else value, changed])
        if encoder.other and sum(_changed(made, held) for made, held in before) != len(changed):  # reading the value changed one: all of them
            encoder = _Encoder(origins)
            tree = encoder.encode([None if raised is not None else value, [made for made, _ in before]])
        reply: dict = {"data": tree, "subclasses": encoder.subclasses[:20]}
        if NOTES:
            reply["notes"] = [note for note in NOTES[:MAX_NOTES] if type(note) is str and len(note) <= NOTE_CHARS]
            NOTES.clear()
        if raised is not None:
            reply["raised"] = self._raised(raised)
        else:
            reply["ok"] = True
        return reply

    def _raised(self, error: BaseException) -> dict:
        """Returns what the client is told of an exception: its class, built-in base, message, the student's line."""
        kind = type(error)
        builtin = next((base.__name__ for base in kind.__mro__ if base.__module__ == "builtins"), "BaseException")
        try:
            text = str(error)[:2000]
        except Exception:  # noqa: BLE001
            text = ""
        info = {"type": str(getattr(kind, "__name__", "Exception"))[:100], "builtin": builtin, "message": text,
                "line": self._line(error)}
        if kind.__name__ == "ReferenceCalled" and kind.__module__.startswith("grader.checks"):
            info["reference"] = text[:300]
        return info

    def _line(self, error: BaseException) -> str:
        """Returns 'in f, line N: code' for the innermost frame of the error in the student's code, or ''."""
        import traceback

        try:
            for frame, line in reversed(list(traceback.walk_tb(error.__traceback__))):
                code = frame.f_code
                if code.co_filename in self.student_files:
                    text = linecache.getline(code.co_filename, line).strip()
                    return f"in {code.co_name}, line {line}: {text}"[:500]
        except Exception:  # noqa: BLE001
            pass
        return ""

    # callbacks

    def callback(self, cid: int, name: str, args: tuple, kwargs: dict) -> Any:
        """Calls the client's function `cid` from the student's code; returns its value (or raises its exception),
        answering the client's operations (calls of the student's functions) meanwhile."""
        encoder = _Encoder()
        tree = encoder.encode([list(args), kwargs])
        self.send({"op": "callback", "cid": cid, "data": tree})
        while True:
            message = self.receive()
            if message.get("op") == "return":
                break
            self.answer(message)
        if message.get("relay") is not None:
            raise _Relayed(str(message.get("relay"))[:200])
        decoder = _Decoder()
        top = decoder.decode(message.get("data"))
        value = _settle(decoder, top[0], encoder.objects) if type(top) is list and len(top) == 2 else None
        raised = message.get("raised")
        if isinstance(raised, dict):
            raise _rebuilt(raised)
        return value

    def _stub(self, cid: int, name: str) -> Callable:
        server = self

        def stub(*args: Any, **kwargs: Any) -> Any:
            return server.callback(cid, name, args, kwargs)

        stub.__name__ = stub.__qualname__ = name
        return stub

    # other operations

    def set(self, message: dict) -> dict:
        """Rebinds a global of the submission's namespace; returns {"done": True} or {"raised": ...}."""
        name, spec = message.get("name"), message.get("value")
        if not isinstance(name, str) or not isinstance(spec, dict):
            raise ValueError("set needs a name and a value")
        if spec.get("delete"):
            self.namespace.pop(name, None)
        elif "callback" in spec:
            self.namespace[name] = self._stub(int(spec["callback"]), name)
        elif "object" in spec:
            self.namespace[name] = self._object(spec["object"])
        elif "local" in spec:
            module, qualname, args = (list(spec["local"]) + [None, None, None])[:3]
            try:
                args = decode(args) if args is not None else None
                found = _resolve(str(module), str(qualname), import_module=True)
                if found is None:
                    raise LookupError(f"no {module}.{qualname}")
                self.namespace[name] = found(*args) if isinstance(args, list) else found
            except Exception as error:  # noqa: BLE001
                return {"raised": self._raised(error)}
        elif "value" in spec:
            self.namespace[name] = decode(spec["value"])
        else:
            raise ValueError("set needs callback, object, local, value or delete")
        return {"done": True}

    def _service(self, message: dict, work: Callable[[], dict]) -> dict:
        """Returns `work` ()'s reply, run under the message's CPU limit: the grader's own look at the
        submission's objects runs their code (a ``values`` of a dict subclass, an attribute);
        {"out_of_time": CPU seconds} when it ran out."""
        reply, over = self.bounded(message.get("cpu"), work)
        return {"out_of_time": over} if over is not None else reply

    def clear_caches(self, message: dict) -> dict:
        """Clears every functools.lru_cache in the namespace (and on its classes); returns how many."""
        return self._service(message, self._clear_caches)

    def _clear_caches(self) -> dict:
        count = 0
        for value in list(self.namespace.values()):
            holders = [value] + (list(vars(value).values()) if isinstance(value, type) else [])
            for item in holders:
                item = getattr(item, "__func__", item)
                if isinstance(item, functools._lru_cache_wrapper):
                    item.cache_clear()
                    count += 1
        return {"done": count}

    def refuse(self, message: dict) -> dict:
        """Runs the grader's refusal of the reference on a registered function; returns {"failed": message, "fatal": ...} or {"done": True}."""
        function = self._object(message.get("id"))
        from grader.checks.failures import CheckFailed
        from grader.checks.reference import _refuse_reference

        def work() -> dict:
            try:
                _refuse_reference(function, str(message.get("name")), str(message.get("kind")))
            except CheckFailed as failed:
                return {"failed": str(failed)[:5000], "fatal": bool(getattr(failed, "fatal", False))}
            return {"done": True}

        return self._service(message, work)


def _package_path(value: Any) -> Optional[tuple[str, str]]:
    """Returns (module, qualname) for a function or class of ttt, grader or the standard library that is found there under that name, else None."""
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        return None
    top = module.split(".")[0]
    if top not in _PACKAGES and top not in sys.stdlib_module_names and top != "builtins":
        return None
    return (module, qualname) if _resolve(module, qualname, import_module=False) is value else None


def _rebuilt(info: dict) -> BaseException:
    """Returns an exception for the student's code to catch: of the built-in class named, with the message and class name given."""
    base = getattr(builtins, str(info.get("builtin")), None)
    if not (isinstance(base, type) and issubclass(base, BaseException)):
        base = Exception
    try:
        name = str(info.get("type", base.__name__))[:100]
        kind = base if name == base.__name__ else type(name, (base,), {"__module__": "__main__"})
        return kind(str(info.get("message", ""))[:2000])
    except Exception:  # noqa: BLE001  (a base whose constructor wants more)
        return Exception(str(info.get("message", ""))[:2000])


def serve(rfd: int, wfd: int) -> None:
    """Runs the student server on the pipes `rfd` (from the client) and `wfd` (to it) until the client closes."""
    for fd in (rfd, wfd):
        os.set_inheritable(fd, False)
    _Server(rfd, wfd).run()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)  # no atexit handler of the student's runs after the client is gone


# -- client (trusted) -------------------------------------------------------------------------


_POLL = 0.2  # seconds between looks at the server's CPU time while waiting
_FIRST_CHUNK, _LAST_CHUNK = 16, 1024  # calls of a plan sent in one request: the first request, and at most (growing 4x)
_sandbox: list = []  # grader.sandbox, once looked for (None when it is missing)


def _sandbox_module() -> Any:
    if not _sandbox:
        try:
            import grader.sandbox as found
        except ImportError:
            found = None
        _sandbox.append(found)
    return _sandbox[0]


class _Watched:
    """A process and its descendants seen from outside with psutil (where grader.sandbox is missing)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def cpu_seconds(self) -> float:
        """Returns the CPU seconds the process and its descendants (running, or reaped by it) used so far."""
        import psutil

        try:
            top = psutil.Process(self.pid)
            times = top.cpu_times()
            total = times.user + times.system + times.children_user + times.children_system
            for child in top.children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    child_times = child.cpu_times()
                    total += child_times.user + child_times.system
            return total
        except psutil.Error:
            return 0.0

    def kill(self) -> None:
        """Kills the process and its descendants (its process group too, when it leads one)."""
        import psutil

        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(self.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    child.kill()
        with contextlib.suppress(OSError):
            if os.getpgid(self.pid) == self.pid:
                os.killpg(self.pid, signal.SIGKILL)


def watch(pid: int) -> Any:
    """Returns the watcher of the server started as process `pid`: ``cpu_seconds()`` (of its whole
    process tree, never decreasing: from the sandbox's cgroup where it has one), ``kill()`` (of the
    whole tree) and ``close()`` (once reaped): ``grader.sandbox.Tree``, or the same with psutil where
    grader.sandbox is missing."""
    tree = getattr(_sandbox_module(), "Tree", None)
    return tree(pid) if tree is not None else _Watched(pid)


def _stop(popen: subprocess.Popen, watcher: Any) -> None:
    """Kills the server's process tree, reaps the process `popen` started, and lets the watcher go."""
    with contextlib.suppress(Exception):
        watcher.kill()
    with contextlib.suppress(OSError):
        popen.kill()
    popen.wait()
    with contextlib.suppress(Exception):
        getattr(watcher, "close", lambda: None)()


def _default_launcher(argv: list[str], **options: Any) -> subprocess.Popen:
    return subprocess.Popen(argv, start_new_session=True, **options)


class RemoteFunction:
    """A callable standing for one of the server's objects (a function of the student's).

    Calling it calls the object in the server with copies of the arguments, under the remote's
    CPU limit and traps in force; the arguments' mutations are written back into the caller's
    objects, and an argument returned is returned as the caller's own object. Raises what the
    student's function raised (see `RemoteError`), NotImplementedError for a stub not written yet,
    ``grader.checks.ReferenceCalled`` for a trapped reference, or a `RemoteFailure`.
    """

    def __init__(self, remote: "Remote", number: int, name: str, namespace: "LinkedNamespace") -> None:
        self.remote = remote
        self.id = number
        self.__name__ = self.__qualname__ = name
        self.__module__ = "__main__"
        self.__globals__ = namespace
        self.__doc__ = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.remote._call(self, args, kwargs)

    def __repr__(self) -> str:
        return f"<function {self.__name__} (in the sandbox)>"


class LinkedNamespace(dict):
    """The submission's namespace on the trusted side; rebinding a name rebinds it in the server too.

    Names bound to a `RemoteFunction` are the server's own object again; to an object with a
    ``_sandbox_local = (module, qualname, args)`` attribute, what the server builds from that; to
    a plain value, a copy; to a function of ttt, grader or the standard library, the server's own
    copy of it; to any other callable, a stub in the server that calls it here (a callback).
    Anything else (and dunder names) stays on this side. Works as the globals of ``exec``.
    """

    def __init__(self, remote: "Remote", entries: dict) -> None:
        super().__init__(entries)
        self.remote = remote

    def __setitem__(self, name: Any, value: Any) -> None:
        self.remote._bind(name, value)
        super().__setitem__(name, value)

    def __delitem__(self, name: Any) -> None:
        super().__delitem__(name)
        self.remote._bind(name, _DELETED)

    def pop(self, name: Any, *default: Any) -> Any:
        if name in self:
            value = super().pop(name)
            self.remote._bind(name, _DELETED)
            return value
        if default:
            return default[0]
        raise KeyError(name)

    def popitem(self) -> tuple:
        name, value = super().popitem()
        self.remote._bind(name, _DELETED)
        return name, value

    def clear(self) -> None:
        for name in list(self):
            del self[name]

    def update(self, *others: Any, **named: Any) -> None:
        for other in others:
            pairs = other.items() if hasattr(other, "items") else other
            for name, value in pairs:
                self[name] = value
        for name, value in named.items():
            self[name] = value

    def setdefault(self, name: Any, default: Any = None) -> Any:
        if name not in self:
            self[name] = default
        return self[name]

    def __ior__(self, other: Any) -> "LinkedNamespace":
        self.update(other)
        return self


_DELETED = object()


class Remote:
    """A submission's definitions in a student server, and the trusted side's view of them.

    `load` is the load operation's content: ``{"cells": [source, ...]}`` or ``{"file": path}``,
    with an optional ``"cpu"`` (CPU seconds the top-level code may use). `launcher(argv, *, cwd,
    pass_fds, stdin, stdout, stderr)` starts the server (default: a plain subprocess in a session
    of its own); `handed` names the ready-made functions a lesson hands the student (these are
    the trusted side's own objects when the submission has them unchanged); `output_bytes` caps
    what `take_output` keeps; `stall_seconds` is how long the servers may choose to wait (sleep, or
    wait on something other than a core) while operations run, in all (``RemoteStalled``);
    `grace` the CPU seconds past a call's limit before it is killed from outside; `cpu` the
    default CPU limit of a call (None: none).
    """

    def __init__(self, load: dict, *, launcher: Optional[Callable[..., subprocess.Popen]] = None, cwd: Path,
                 handed: Collection[str] = (), output_bytes: int = 100_000, stall_seconds: float = 60.0,
                 grace: float = 2.0, cpu: Optional[float] = None) -> None:
        self.load = dict(load)
        self.launcher = launcher or _default_launcher
        self.cwd = Path(cwd)
        self.handed = frozenset(handed)
        self._load_spent = 0.0  # CPU seconds of the loads that ended their server (each retried without the statement at fault)
        self.output_bytes = output_bytes
        self.stall_seconds = stall_seconds
        self.grace = grace
        self.cpu = cpu
        self.skipped: list[str] = []  # the definitions the load left out, and why
        self.load_error: Optional[BaseException] = None  # what the file raised while loading (file mode)
        self.load_out_of_time = False
        self.subclasses: list[str] = []  # "result returned a MyStr (a subclass of str)", once each
        self.calls = 0
        self._popen: Optional[subprocess.Popen] = None
        self._generation = 0
        self._dead: Optional[RemoteFailure] = None
        self._namespace: Optional[LinkedNamespace] = None
        self._bound: dict[str, dict] = {}  # the sets in force, re-applied by restart
        self._server_names: set[str] = set()  # the names the server's namespace has
        self._callbacks: dict[int, Callable] = {}
        self._callback_ids: dict[int, int] = {}
        self._cpu_limits: list[Optional[float]] = []
        self._budgets: list[tuple[float, float]] = []  # (CPU seconds used when the budget began, its seconds)
        self._cpu_base = 0.0  # CPU seconds of the servers before this one (restarts)
        self._cpu_last = (0.0, -1.0)  # (this server's CPU seconds, when they were read)
        self._traps: list[Optional[str]] = []
        self._relays: list[list[BaseException]] = []
        self._output = bytearray()
        self._dropped = 0
        self._inbox = bytearray()
        self._outbox = bytearray()
        self._fds: dict[str, int] = {}
        self._poller: Any = None
        self._watcher: Any = None
        self._waits = ChosenWait(None)  # the seconds the servers chose to wait while an operation ran
        self._plan_of: Optional[tuple[int, Optional[str]]] = None  # the function and traps of the planned calls (see `expect`)
        self._plan_source: Iterator[tuple] = iter(())  # the planned calls' arguments not read yet
        self._plan: collections.deque = collections.deque()  # the planned calls' arguments read, not made yet
        self._fetched: collections.deque = collections.deque()  # the server's replies to the plan's first calls
        self._fetched_limits: tuple[Optional[float], Optional[float]] = (None, None)  # what bounded them
        self._chunk = _FIRST_CHUNK
        self._epoch = 0  # plans dropped so far
        self._seq = 0  # the number of the last operation sent (the server sends it back with its reply)
        self._listeners: list[Callable[[list], None]] = []  # told the notes of each call's answer (see `listening`)
        self._fetched_relays: list[BaseException] = []  # what callbacks relayed while the last chunk ran

    # life

    def start(self) -> None:
        """Starts the server and loads the submission (nothing if it runs already; again if it died)."""
        if self._popen is None:
            self._launch()
        elif self._dead is not None:
            self.restart()

    def close(self) -> None:
        """Stops the server (killing whatever it started) and closes the pipes."""
        popen, self._popen = self._popen, None
        if popen is not None:
            with contextlib.suppress(OSError):
                os.close(self._fds.pop("to"))
            _stop(popen, self._watcher)
            self._drain_output()
        for fd in self._fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = {}
        self._inbox.clear()
        self._outbox.clear()

    def restart(self) -> None:
        """Starts a new server with the same load, and re-applies every `set` in force."""
        self.close()
        self._launch()

    def __enter__(self) -> "Remote":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _launch(self) -> None:
        self._generation += 1
        self._cpu_base += self._reading()  # the last server's, all of it
        self._cpu_last, self._watcher = (0.0, -1.0), None
        self._dead = None
        to_read, to_write = os.pipe()
        from_read, from_write = os.pipe()
        argv = [sys.executable, "-P", "-m", "grader.remote", "serve", str(to_read), str(from_write)]
        try:
            self._popen = self.launcher(argv, cwd=self.cwd, pass_fds=(to_read, from_write), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        except BaseException:
            os.close(to_write)
            os.close(from_read)
            raise
        finally:
            os.close(to_read)
            os.close(from_write)
        self._watcher = watch(self._popen.pid)
        self._waits.follow(self._watcher)
        self._fds = {"to": to_write, "from": from_read}
        if self._popen.stdout is not None:
            self._fds["out"] = self._popen.stdout.fileno()
        for fd in self._fds.values():
            os.set_blocking(fd, False)
        self._poller = select.poll()
        self._poller.register(from_read, select.POLLIN)
        if "out" in self._fds:
            self._poller.register(self._fds["out"], select.POLLIN)
        try:
            hello = self._request({"op": "hello"}, cpu=None, start=False)
        except RemoteFailure as error:
            raise SandboxNotStarted(f"{error}: {self.take_output().strip()[-300:]}") from None
        if hello.get("hello") is not True:
            raise self._fail(RemoteProtocolError(f"the first word was answered with {_glimpse(hello)}"))
        self._at = None
        before = self.cpu_seconds()
        try:
            reply = self._request({"op": "load", **self.load}, cpu=self.load.get("cpu"), start=False)
        except RemoteFailure as error:
            skip = self.load.get("skip", [])
            self._load_spent += self.cpu_seconds() - before
            cpu = self.load.get("cpu")
            if self._at is None or self._at in skip or len(skip) >= 10 or \
                    isinstance(error, (SandboxNotStarted, RemoteStalled)) or \
                    (isinstance(error, RemoteTimeout) and isinstance(cpu, (int, float)) and self._load_spent >= 2 * cpu):
                raise  # a stall spent the unit's allowance; the loads together spent twice a load's CPU time
            # a statement of the submission ended the process (os._exit, a crash, a sleep without end):
            # load again without it, so that its other definitions are graded on their own
            self.load = {**self.load, "skip": [*skip, self._at]}
            self.close()
            return self._launch()
        names = reply.get("names")
        if not isinstance(names, list):
            raise self._fail(RemoteProtocolError(f"the load was answered with {_glimpse(reply)}"))
        self._loaded(reply)
        for name, spec in list(self._bound.items()):
            self._set(name, spec)

    def _loaded(self, reply: dict) -> None:
        """Takes a load's (or reload's) reply: what was left out, the error, and the namespace (built once a load)."""
        skipped = reply.get("skipped")
        self.skipped = [str(s)[:500] for s in skipped[:50]] if isinstance(skipped, list) else []
        raised = reply.get("error_raised")
        self.load_error = self._exception(raised) if isinstance(raised, dict) else None
        self.load_out_of_time = bool(reply.get("out_of_time"))
        self._server_names |= {e["name"] for e in reply["names"] if isinstance(e, dict) and isinstance(e.get("name"), str)}
        if self._namespace is None:
            self._namespace = self._linked(reply["names"])

    def _linked(self, names: list) -> LinkedNamespace:
        """Returns the namespace a load reply describes (see `LinkedNamespace`)."""
        namespace = LinkedNamespace(self, {"__name__": "__main__"})
        entries = {}
        for entry in names[:100_000]:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or len(entry["name"]) > 200:
                continue
            name, kind = entry["name"], entry.get("kind")
            if kind in ("function", "package") and type(entry.get("id")) is int and entry["id"] >= 0:
                value: Any = None
                if kind == "package" and name in self.handed:  # only a module imported here already: none on its word
                    module, qualname = entry.get("module"), entry.get("qualname")
                    value = _resolve(str(module), str(qualname), import_module=False)
                    if not callable(value):
                        value = None
                if value is None:
                    title = entry.get("qualname") if kind == "function" else name
                    value = RemoteFunction(self, entry["id"], str(title)[:200] if isinstance(title, str) else name, namespace)
                entries[name] = value
            elif kind == "value":
                try:
                    entries[name] = decode(entry.get("value"))
                except RemoteProtocolError:
                    continue
        dict.update(namespace, entries)
        return namespace

    def namespace(self) -> LinkedNamespace:
        """Returns the submission's namespace (starting the server first if need be)."""
        self.start()
        if self._namespace is None:
            raise RemoteDied("the server has no submission loaded")
        return self._namespace

    def reload(self) -> LinkedNamespace:
        """Runs a .py submission again into a fresh module (its caches and globals fresh, the same ids
        for the same names); returns the new namespace. The sets in force are dropped."""
        reply = self._request({"op": "reload", "cpu": self.load.get("cpu")}, cpu=self.load.get("cpu"))
        if not isinstance(reply.get("names"), list):
            raise self._fail(RemoteProtocolError(f"reload was answered with {_glimpse(reply)}"))
        self._bound.clear()
        self._namespace = None
        self._loaded(reply)
        assert self._namespace is not None
        return self._namespace

    def clear_caches(self) -> int:
        """Clears every functools.lru_cache of the submission's namespace; returns how many."""
        reply = self._service({"op": "clear_caches"})
        return reply["done"] if type(reply.get("done")) is int else 0

    def _service(self, message: dict) -> dict:
        """Returns the reply to a service operation (the server's own look at the submission's
        objects, which may run their code), limited to ``SERVICE_CPU`` seconds; raises RemoteTimeout past it."""
        reply = self._request({**message, "cpu": SERVICE_CPU}, cpu=SERVICE_CPU)
        if "out_of_time" in reply:
            raise RemoteTimeout(f"the submission's objects used more than {SERVICE_CPU:g} s of CPU time while the "
                                f"grader looked at them ({message.get('op')}): their own code runs when they are read")
        return reply

    def refuse(self, function: RemoteFunction, name: str, kind: str) -> None:
        """Raises ``grader.checks.CheckFailed`` (its ``fatal`` set) when the grader's refusal of the
        reference, run next to the student's code, finds that `function` is or uses the reference
        of the check `kind`; returns None otherwise. A hint: the student's code could fool it."""
        from grader.checks import CheckFailed

        reply = self._service({"op": "refuse", "id": function.id, "name": name, "kind": kind})
        if isinstance(reply.get("failed"), str):
            failed = CheckFailed(reply["failed"][:5000])
            failed.fatal = bool(reply.get("fatal"))
            raise failed

    def take_output(self) -> str:
        """Returns what the student's code printed since the last take (at most `output_bytes`, then a note of how much more there was)."""
        self._drain_output()
        text = self._output.decode("utf-8", "replace")
        if self._dropped:
            text += f"\n... {self._dropped:,} more bytes not kept\n"
        self._output = bytearray()
        self._dropped = 0
        return text

    @contextlib.contextmanager
    def cpu_limit(self, seconds: Optional[float]) -> Iterator[None]:
        """Inside the block, each call may use `seconds` of CPU time (None: the remote's default)."""
        self._cpu_limits.append(seconds)
        try:
            yield
        finally:
            self._cpu_limits.pop()

    @contextlib.contextmanager
    def traps(self, kind: Optional[str]) -> Iterator[None]:
        """Inside the block, each call runs with the reference of the check `kind` switched off (None: no traps)."""
        self._traps.append(kind)
        try:
            yield
        finally:
            self._traps.pop()

    @contextlib.contextmanager
    def listening(self, listener: Callable[[list], None]) -> Iterator[None]:
        """Inside the block, `listener` is given the notes each call's answer brings (a list of str
        the server's `NOTES` held at its end, at most MAX_NOTES, each at most NOTE_CHARS: what the
        grader's code in the server recorded, or what the student's code wrote there)."""
        self._listeners.append(listener)
        try:
            yield
        finally:
            self._listeners.pop()

    @contextlib.contextmanager
    def budget(self, seconds: float) -> Iterator[None]:
        """Inside the block, the calls may use `seconds` of CPU time in all (each call at most what is
        left, under its own limit too); a call made when none is left raises RemoteTimeout."""
        began = self.cpu_seconds()
        self._budgets.append((began, float(seconds)))
        try:
            yield
        finally:
            self._budgets.pop()
        if self.cpu_seconds() - began > seconds + self.grace:  # spent after its last answer (a thread of the student's)
            raise RemoteTimeout(f"the test used more than its {seconds:g} s of CPU time")

    def cpu_seconds(self) -> float:
        """Returns the CPU seconds the student servers have used so far (restarted ones included),
        read from outside the server (its sandbox's cgroup where it has one): never the server's word."""
        return self._cpu_base + self._reading()

    def _reading(self) -> float:
        """Returns the CPU seconds of this server (its last reading once it is gone), read now."""
        reading = self._cpu_last[0]
        if self._watcher is not None:
            with contextlib.suppress(Exception):
                reading = max(reading, self._watcher.cpu_seconds())
            self._cpu_last = (reading, time.monotonic())
        return reading

    def _cpu_at_most(self) -> float:
        """Returns a bound on cpu_seconds() got without reading it: the last reading plus all the
        machine's cores busy since (a server cannot use more)."""
        reading, when = self._cpu_last
        if when < 0 or self._popen is None:
            return self.cpu_seconds()
        return self._cpu_base + reading + (time.monotonic() - when) * (os.cpu_count() or 1)

    def _call_limit(self) -> tuple[Optional[float], Optional[float]]:
        """The CPU seconds the next call may use, and the budget (its seconds in all) when what is
        left of one is what bounds it (else None). The servers' CPU time is read afresh only when
        what is left of a budget might be less than the call's own limit."""
        limit = self._cpu_limits[-1] if self._cpu_limits else None
        limit = self.cpu if limit is None else limit
        bound_by = None
        if self._budgets:
            used = self._cpu_at_most()
            if limit is None or any(seconds - (used - began) < limit for began, seconds in self._budgets):
                used = self.cpu_seconds()
            for began, seconds in self._budgets:
                left = seconds - (used - began)
                if left <= 0:
                    raise RemoteTimeout(f"the test used more than its {seconds:g} s of CPU time")
                if limit is None or left < limit:
                    limit, bound_by = left, seconds
        return limit, bound_by

    # calls

    def expect(self, function: RemoteFunction, calls: Iterable[tuple], *, traps: Optional[str]) -> None:
        """Says that the next calls will be `function` on each argument tuple of `calls`, in turn,
        under the traps of the check `traps`: they then cross in a few requests (see `_Server.map`),
        each still its own call with its own limit, answered as `__call__` would. A call that
        differs from the plan, or any other operation, drops what is left of it (the calls made
        ahead stay made: for a function whose calls count nothing, in the order the check makes them).
        A callback made meanwhile is served as in a call, and an operation it makes drops the plan.
        `calls` is read a chunk at a time, as the chunks are sent."""
        self._drop_plan()
        if function.remote is self:
            self._plan_of, self._plan_source = (function.id, traps), iter(calls)

    def _drop_plan(self) -> None:
        self._epoch += 1
        self._plan_of, self._plan_source = None, iter(())
        self._plan.clear()
        self._fetched.clear()
        self._chunk = _FIRST_CHUNK

    def _planned(self, function: RemoteFunction, args: tuple, kwargs: dict, traps: Optional[str]) -> Optional[dict]:
        """Returns the server's reply to this call when it is the plan's next (the same function,
        traps, and arguments of the same values and types, `_identical`), fetching the plan's next
        calls first if need be; else None (and the plan is dropped)."""
        if self._plan_of is None:
            return None
        if not self._plan:
            self._plan.extend(itertools.islice(self._plan_source, self._chunk))
        if kwargs or self._plan_of != (function.id, traps) or not self._plan or not _identical(args, tuple(self._plan[0])):
            self._drop_plan()
            return None
        if not self._fetched:
            limit = self._cpu_limits[-1] if self._cpu_limits else None
            limit = self.cpu if limit is None else limit
            total, bound_by = None, None
            if self._budgets:
                used = self.cpu_seconds()
                for began, seconds in self._budgets:
                    left = seconds - (used - began)
                    if left <= 0:
                        self._drop_plan()
                        raise RemoteTimeout(f"the test used more than its {seconds:g} s of CPU time")
                    if total is None or left < total:
                        total, bound_by = left, seconds
            self._plan.extend(itertools.islice(self._plan_source, max(0, self._chunk - len(self._plan))))
            chunk = []
            for planned_args in itertools.islice(self._plan, self._chunk):
                encoder = _Encoder()
                tree = ["l", encoder.tree(list(planned_args)), ["d"]]  # [args, kwargs]
                if encoder.unplain:  # not plain data: the plan ends before it (the call says so itself)
                    while len(self._plan) > len(chunk):
                        self._plan.pop()
                    self._plan_source = iter(())
                    break
                chunk.append(tree)
            if not chunk:
                self._drop_plan()
                return None
            self._chunk = min(self._chunk * 4, _LAST_CHUNK)
            message = {"op": "map", "id": function.id, "calls": chunk, "cpu": limit, "total": total, "traps": traps}
            outside = total if total is not None else (limit * len(chunk) if limit is not None else None)
            epoch = self._epoch
            self._relays.append([])
            try:
                replies = self._request(message, cpu=outside).get("replies")
                if type(replies) is not list or len(replies) > len(chunk) or not all(type(r) is dict for r in replies):
                    raise self._fail(RemoteProtocolError("a map was answered with something else"))
            except RemoteFailure:
                # a call of the chunk ended or outran its server, or wrote a reply of its own: the calls go one by
                # one from here (in a new server), so the failure is told on the call that makes it. What the chunk
                # spent stays the test's: given back, it would be a second allowance for a submission that keeps
                # its work in its folder and ends its server on purpose (a chunk stopped from outside, past all
                # the test's time, is then told on the chunk's first call)
                self._drop_plan()
                return None
            finally:
                self._fetched_relays = self._relays.pop()
            self._fetched_limits = (limit, bound_by)
            if not replies or self._epoch != epoch:  # out of time before the first call (it goes alone, and its
                self._drop_plan()  # limit says so), or a callback's operation dropped the plan: one by one from here
                return replies[0] if replies else None
            self._fetched.extend(replies)
        self._plan.popleft()
        return self._fetched.popleft()

    def _call(self, function: RemoteFunction, args: tuple, kwargs: dict) -> Any:
        """Calls `function` in the server (see `RemoteFunction`); returns its value."""
        traps = self._traps[-1] if self._traps else None
        reply = self._planned(function, args, kwargs, traps)
        planned = reply is not None
        encoder: Optional[_Encoder] = None
        if planned:
            self.calls += 1
            limit, budget = self._fetched_limits
            if reply.get("by") == "call":
                budget = None
        else:
            encoder = _Encoder()
            tree = encoder.encode([list(args), dict(kwargs)])
            if encoder.unplain:
                raise NotPlainData(f"{function.__name__} can only be given plain data (None, bool, int, float, str, bytes, "
                                   f"tuple, list, set, frozenset, dict), not {_glimpse(args)}")
            limit, budget = self._call_limit()
            message = {"op": "call", "id": function.id, "data": tree, "cpu": limit, "traps": traps}
            self.calls += 1
            self._relays.append([])
            try:
                reply = self._request(message, cpu=limit)
            finally:
                relayed = self._relays.pop()
            if relayed:
                raise relayed[0]
        notes = reply.get("notes")
        if self._listeners and type(notes) is list:
            self._listeners[-1]([note for note in notes[:MAX_NOTES] if type(note) is str and len(note) <= NOTE_CHARS])
        if "out_of_time" in reply:
            used = reply["out_of_time"]
            if budget is not None:  # the test's time ran out in this call: said as the test's limit, not what was left
                raise RemoteTimeout(f"the test used more than its {budget:g} s of CPU time")
            raise RemoteTimeout(f"{function.__name__} used more than its {limit:g} s of CPU time" if limit is not None else
                                f"{function.__name__} ran out of CPU time" + (f" ({used:g} s)" if isinstance(used, (int, float)) else ""))
        if "not_written" in reply:
            raise NotImplementedError(str(reply["not_written"])[:2000])
        if reply.get("relayed") and planned and self._fetched_relays:
            raise self._fetched_relays[0]
        if reply.get("relayed"):
            raise RemoteProtocolError("the server relayed an exception that was never sent")
        if "data" not in reply:
            raise self._fail(RemoteProtocolError(f"a call was answered with {_glimpse(reply)}"))
        decoder = _Decoder()
        try:
            top = decoder.decode(reply["data"])
            if type(top) is not list or len(top) != 2:
                raise RemoteProtocolError(f"a call was answered with {_glimpse(reply)}")
        except RemoteProtocolError as error:
            raise self._fail(error) from None
        if decoder.origins and encoder is None:  # an argument came back: the containers this call was given, numbered
            encoder = _Encoder()
            encoder.encode([list(args), dict(kwargs)])
        value = _settle(decoder, top[0], encoder.objects if encoder is not None else [])
        notes = reply.get("subclasses")
        if isinstance(notes, list) and notes:
            for note in notes[:20]:
                said = f"{function.__name__} returned a {str(note)[:200]}"
                if said not in self.subclasses:
                    self.subclasses.append(said)
        if isinstance(reply.get("raised"), dict):
            raise self._exception(reply["raised"])
        return value

    _classes: dict = {}

    def _exception(self, info: dict) -> BaseException:
        """Returns the exception a `raised` reply describes (see `RemoteError`)."""
        message = str(info.get("message", ""))[:2000]
        if isinstance(info.get("reference"), str):
            from grader.checks import ReferenceCalled

            return ReferenceCalled(info["reference"][:300])
        name = str(info.get("type") or "Exception")[:100]
        base = getattr(builtins, str(info.get("builtin")), None)
        if not (isinstance(base, type) and issubclass(base, BaseException)) or issubclass(base, RemoteError):
            base = Exception
        error: Optional[BaseException] = None
        for candidate in (base, Exception):
            kind = self._classes.get((name, candidate))
            try:
                if kind is None:
                    kind = type(name, (candidate, RemoteError), {"__module__": "__main__"})
                    self._classes[(name, candidate)] = kind
                error = kind(message)
                break
            except Exception:  # noqa: BLE001  (a built-in base whose constructor wants more than a message)
                continue
        assert error is not None
        error.remote_type = name  # type: ignore[attr-defined]
        error.remote_line = str(info.get("line", ""))[:500]  # type: ignore[attr-defined]
        error.remote_message = message  # type: ignore[attr-defined]
        return error

    # binding names

    def _bind(self, name: Any, value: Any) -> None:
        """Rebinds `name` in the server to what stands for `value` there (see `LinkedNamespace`)."""
        if not isinstance(name, str) or (name.startswith("__") and name.endswith("__")):
            return
        spec = self._spec(value, known=name in self._server_names)
        if spec is None:
            return
        self._set(name, spec)
        self._bound[name] = spec
        self._server_names.add(name)

    def _spec(self, value: Any, *, known: bool) -> Optional[dict]:
        """Returns how the server gets `value`: {"delete"}, {"object"}, {"local"}, {"value"} or {"callback"},
        or None to keep it on this side (an object that is not plain data, a class, a module, a function
        of the grader's for a name the submission does not have: a test cell's import)."""
        if value is _DELETED:
            return {"delete": True} if known else None
        if isinstance(value, RemoteFunction) and value.remote is self:
            return {"object": value.id}
        local = getattr(value, "_sandbox_local", None) if not isinstance(value, type) else None
        if isinstance(local, tuple) and len(local) == 3:
            module, qualname, args = local
            return {"local": [str(module), str(qualname), encode(list(args)) if isinstance(args, (list, tuple)) else None]}
        if not callable(value):
            encoder = _Encoder()
            tree = encoder.encode(value)
            if encoder.unplain or len(json.dumps(tree)) > MAX_MESSAGE // 2:
                return None
            return {"value": tree}
        if isinstance(value, (types.ModuleType, type)):
            return None
        where = _package_path(value)
        if where and where[0].split(".")[0] == "grader" and not known:
            return None
        if where:
            return {"local": [where[0], where[1], None]}
        cid = self._callback_ids.get(id(value))
        if cid is None:
            cid = self._callback_ids[id(value)] = len(self._callbacks)
            self._callbacks[cid] = value
        return {"callback": cid}

    def _set(self, name: str, spec: dict) -> None:
        reply = self._request({"op": "set", "name": name, "value": spec}, cpu=SERVICE_CPU)
        if isinstance(reply.get("raised"), dict):
            raise self._exception(reply["raised"])
        if "done" not in reply:
            raise self._fail(RemoteProtocolError(f"set was answered with {_glimpse(reply)}"))

    # the wire

    def _request(self, message: dict, *, cpu: Optional[float], start: bool = True) -> dict:
        """Sends one operation and returns its reply, serving callbacks meanwhile; kills the server and
        raises RemoteTimeout, RemoteStalled, RemoteDied or RemoteProtocolError when it cannot answer.
        `cpu` is the operation's CPU limit (None: none); the server is killed at `cpu` + grace."""
        if message.get("op") != "map":
            self._drop_plan()  # another operation: the server's state may change, so the calls made ahead are stale
        if start and self._waits.seconds >= self.stall_seconds:
            raise _stalled(self.stall_seconds, ran=False)
        if start and (self._popen is None or self._dead is not None):
            self.restart()
        generation = self._generation
        try:
            reply = self._await(message, cpu, generation)
        except BaseException as error:
            if self._generation == generation and self._dead is None:  # interrupted here: the server's answer would come late
                self._fail(error if isinstance(error, RemoteFailure) else RemoteDied(f"the call was interrupted ({type(error).__name__})"))
            raise
        if "error" in reply and set(reply) <= {"error", "too_big", "seq"}:  # the student's code (a thread, at any time) may have written it
            raise self._fail(RemoteProtocolError(f"{message.get('op')} was answered with an error: {str(reply['error'])[:300]}"))
        return reply

    def _await(self, message: dict, cpu: Optional[float], generation: int) -> dict:
        """Sends `message` and returns the server's reply (see `_request`)."""
        self._waits.begin()
        self._seq += 1
        seq = self._seq
        self._outbox += _frame({**message, "seq": seq})
        self._flush_outbox()
        started: Optional[float] = None  # the server's CPU seconds at the first look
        look = time.monotonic() + _POLL
        while True:
            reply = self._next(timeout=_POLL)
            if self._generation != generation:
                raise self._dead or RemoteDied("the server was restarted during the call")
            if reply is not None:
                if reply.get("op") == "progress":  # the load's statement now running (for a restart without it)
                    at = reply.get("at")
                    if isinstance(at, list) and len(at) == 2 and all(type(n) is int for n in at):
                        self._at = at
                elif reply.get("op") == "callback":
                    self._waits.end()  # the time spent on this side is the grader's
                    self._serve_callback(reply, generation)
                    self._waits.begin()
                else:
                    if "too_big" in reply:
                        raise self._fail(RemoteProtocolError(str(reply.get("error"))[:300]))
                    if reply.get("seq") != seq:  # a reply to no operation, or to an earlier one: the student's code wrote one
                        raise self._fail(RemoteProtocolError(f"{message.get('op')} was answered with a reply to another operation "
                                                             f"({_glimpse(reply.get('seq'))}, not {seq})"))
                    self._drain_output()
                    self._waits.end()
                    return reply
            # the limits are looked at every _POLL seconds whatever the server sends meanwhile: a stream of
            # progress messages or callbacks must not keep the looks away (a thread of the student's can write them)
            now = time.monotonic()
            if now < look:
                continue
            look = now + _POLL
            popen = self._popen
            if popen is None or popen.poll() is not None:
                self._read_messages()  # its last words, then its exit
                died = RemoteDied(f"exit status {popen.returncode if popen else None}")
                died.status = popen.returncode if popen else None
                raise self._fail(died)
            used = self._watcher.cpu_seconds()
            if started is None:
                started = used
            if cpu is not None and used - started > cpu + self.grace:
                raise self._fail(RemoteTimeout(f"the call used more than its {cpu:g} s of CPU time (stopped from outside)"))
            if self._waits.look() >= self.stall_seconds:
                raise self._fail(_stalled(self.stall_seconds, ran=True))

    def _serve_callback(self, message: dict, generation: int) -> None:
        """Calls the trusted function a callback names, and sends its value (or its exception) back."""
        cid = message.get("cid")
        function = self._callbacks.get(cid) if type(cid) is int else None
        decoder = _Decoder()
        try:
            top = decoder.decode(message.get("data"))
            if type(top) is not list or len(top) != 2 or type(top[0]) is not list or type(top[1]) is not dict or function is None:
                raise RemoteProtocolError(f"a callback that is not one: {_glimpse(message)}")
        except RemoteProtocolError as error:
            raise self._fail(error) from None
        args, kwargs = top
        value, raised = None, None
        try:
            value = function(*args, **{str(k): v for k, v in kwargs.items()})
        except BaseException as error:  # noqa: BLE001  (sent to the student's code, or relayed through it)
            raised = error
        if self._generation != generation or self._popen is None or self._dead is not None:
            if raised is not None:
                raise raised  # the server died under a nested call: the outer call ends with the same failure
            raise self._dead or RemoteDied("the server was restarted during a callback")
        reply: dict = {"op": "return"}
        if raised is not None and not _catchable(raised):
            if not self._relays:  # a callback outside any call: nothing to re-raise it from
                raise raised
            self._relays[-1].append(raised)
            reply["relay"] = type(raised).__name__
        else:
            origins, mutables = _incoming(decoder, top, args, kwargs)
            encoder = _Encoder(origins)
            reply["data"] = encoder.encode([None if raised is not None else value, mutables])
            if raised is not None:
                reply["raised"] = _described(raised)
        self._outbox += _frame(reply)
        self._flush_outbox()

    def _fail(self, failure: RemoteFailure) -> RemoteFailure:
        """Kills the server and marks it dead (the next call starts a new one); returns `failure`."""
        self._dead = failure
        self._drop_plan()
        popen = self._popen
        if popen is not None:
            _stop(popen, self._watcher)
            if isinstance(failure, RemoteDied) and failure.status is None:
                failure.status = popen.returncode
        self._drain_output()
        return failure

    def _flush_outbox(self) -> None:
        while self._outbox:
            try:
                written = os.write(self._fds["to"], self._outbox)
            except BlockingIOError:
                return
            except (BrokenPipeError, KeyError):
                self._outbox.clear()  # the server is gone: its pipe's end says so
                return
            del self._outbox[:written]

    def _next(self, *, timeout: float) -> Optional[dict]:
        """Returns the next message from the server if one is complete within `timeout` seconds, else None;
        raises RemoteDied when the server closed its pipe, RemoteProtocolError for a malformed message."""
        message = self._take_message()
        if message is not None:
            return message
        if self._poller is None or "from" not in self._fds:
            raise self._fail(RemoteDied("the server is not running"))
        to = self._fds.get("to")
        if self._outbox and to is not None:
            self._poller.register(to, select.POLLOUT)
        try:
            events = self._poller.poll(timeout * 1000)
        finally:
            if to is not None:
                with contextlib.suppress(KeyError, OSError):
                    self._poller.unregister(to)
        for fd, event in events:
            if fd == self._fds.get("out"):
                self._drain_output()
            elif fd == self._fds.get("to"):
                self._flush_outbox()
            elif fd == self._fds.get("from"):
                self._read_messages()
        return self._take_message()

    def _read_messages(self) -> None:
        fd = self._fds["from"]
        for _ in range(64):
            try:
                chunk = os.read(fd, 1 << 20)
            except BlockingIOError:
                return
            if not chunk:
                self._drain_output()
                popen = self._popen
                status = None
                if popen is not None:
                    try:
                        status = popen.wait(timeout=1.0)  # a pipe closed by a dying process: its status follows at once
                    except subprocess.TimeoutExpired:
                        status = None
                died = RemoteDied(f"exit status {status}" if status is not None else
                                  "it closed the grader's pipe")
                died.status = status
                raise self._fail(died)
            self._inbox += chunk
            if len(self._inbox) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(self._inbox)
                if size > MAX_MESSAGE:
                    raise self._fail(RemoteProtocolError(f"a message of {size:,} bytes, more than {MAX_MESSAGE:,}"))
                if len(self._inbox) >= _HEADER.size + size:
                    return

    def _take_message(self) -> Optional[dict]:
        if len(self._inbox) < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(self._inbox)
        if size > MAX_MESSAGE:
            raise self._fail(RemoteProtocolError(f"a message of {size:,} bytes, more than {MAX_MESSAGE:,}"))
        if len(self._inbox) < _HEADER.size + size:
            return None
        body = bytes(self._inbox[_HEADER.size:_HEADER.size + size])
        del self._inbox[:_HEADER.size + size]
        try:
            return _parse(body)
        except RemoteProtocolError as error:
            raise self._fail(error) from None

    def _drain_output(self) -> None:
        """Reads what the server printed (keeping the first `output_bytes` since the last take, counting the rest)."""
        fd = self._fds.get("out")
        if fd is None:
            return
        for _ in range(16):  # at most 16 MB a look, so that replies are read too
            try:
                chunk = os.read(fd, 1 << 20)
            except BlockingIOError:
                return
            except OSError as error:
                if error.errno == errno.EBADF:
                    return
                raise
            if not chunk:
                with contextlib.suppress(KeyError, OSError):
                    self._poller.unregister(fd)
                del self._fds["out"]
                return
            room = self.output_bytes - len(self._output)
            if room > 0:
                self._output += chunk[:room]
            self._dropped += max(0, len(chunk) - max(room, 0))


def _catchable(error: BaseException) -> bool:
    """True for an exception the student's code may catch as it is: a built-in Exception class's own
    instance, or a student's exception come back from the sandbox."""
    if isinstance(error, RemoteError):
        return isinstance(error, Exception)
    return isinstance(error, Exception) and type(error).__module__ == "builtins"


def _described(error: BaseException) -> dict:
    """Returns a trusted exception's description for the student's code (class name, built-in base, message)."""
    kind = type(error)
    builtin = next((base.__name__ for base in kind.__mro__ if base.__module__ == "builtins"), "Exception")
    name = getattr(error, "remote_type", "") or kind.__name__
    return {"type": str(name)[:100], "builtin": builtin, "message": str(error)[:2000]}


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "serve":
        from grader import remote  # served as grader.remote: the module the grader's code in the server finds (NOTES)

        remote.serve(int(sys.argv[2]), int(sys.argv[3]))
    else:
        sys.exit("usage: python -m grader.remote serve RFD WFD")
