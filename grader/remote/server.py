"""The student server (``python -m grader.remote serve RFD WFD``), inside the sandbox: it loads a
notebook's definitions (`grader.remote.source`) or a ``.py`` file, then answers the client's
operations: call, map, set, clear_caches, reload, refuse."""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import json
import linecache
import os
import signal
import sys
import time
import types
from pathlib import Path
from typing import Any, Callable, Collection, Optional, Union

from grader.remote.errors import RemoteProtocolError
from grader.remote.protocol import (
    _HEADER,
    _JSON_TEXT,
    MAX_MESSAGE,
    MAX_NOTES,
    MAX_VALUE,
    NOTE_CHARS,
    _changed,
    _ClientsDecoder,
    _contents,
    _Decoder,
    _Encoder,
    _frame,
    _glimpse,
    _incoming,
    _package_path,
    _parse,
    _resolve,
    _settle,
    _type_label,
    decode,
)
from grader.remote.source import KEPT, python_source

# What the grader's own code in the student server leaves for the grader with a call's answer (a
# recorder's boards: ``grader.checks.student.counting_positions``): text, at most MAX_NOTES a call, each
# at most NOTE_CHARS long (`grader.remote.protocol`). The student's code can write here too: the grader reads a note as a claim
# the student's process makes, as it reads an answer.
NOTES: list = []


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
