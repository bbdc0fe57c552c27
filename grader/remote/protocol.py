"""What crosses between the grader and a student server: plain values as tagged JSON trees (the
codec: `encode`, `decode`, `Unplain`, with the identity of containers kept within a message and the
write-back of mutated arguments), each message framed by a length prefix, and the bounds on both."""

from __future__ import annotations

import base64
import json
import math
import numbers
import operator
import struct
import sys
from typing import Any, Optional

from grader.remote.errors import RemoteProtocolError

MAX_MESSAGE = 16 * 2**20  # bytes of one message, either way
MAX_DEPTH = 100  # nesting of containers in one message
MAX_VALUE = 100_000  # bytes of a global passed as a value when a submission is loaded
MAX_BIG_INT = 10_000  # hexadecimal digits of an int
# Work the trusted side does on one message is bounded by these, whatever the other side sends:
MAX_UNFOLDED = 1_000_000  # items of a value counted as a tree (a container met twice counts twice)
TEXT_PER_ITEM = 64  # a str or bytes counts one item more for each this many characters (showing it costs them)
MAX_SAME_HASH = 16  # items of one set, frozenset or dict's keys that share one hash
_HEADER = struct.Struct(">I")
MAX_NOTES, NOTE_CHARS = 200_000, 100  # notes a call's answer brings (`grader.remote.server.NOTES`), characters each
_PACKAGES = ("ttt", "grader")  # whose functions and classes cross by their module and name
STATE_CLASSES = {("ttt.games.bigboard", "BigState")}  # the package's NamedTuple states that cross as themselves
SERVICE_CPU = 10.0  # CPU seconds the server's own look at the submission's objects may use (refuse, clear_caches)


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
            raise _not_a_value(tree)
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
        raise _not_a_value(tree)

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


def _not_a_value(tree: Any) -> RemoteProtocolError:
    return RemoteProtocolError(f"not a value of the protocol: {_glimpse(tree)}")


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
