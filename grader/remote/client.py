"""The trusted end (`Remote`): starts the student server through a launcher (the sandbox's),
limits each call in CPU seconds from outside, notices a server that stalls or dies and starts it
again, serves the callbacks the student's code makes to trusted functions, and relays the grader's
own exceptions (a failed check, a reference called) through the student's code."""

from __future__ import annotations

import builtins
import collections
import contextlib
import errno
import itertools
import json
import os
import select
import signal
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Iterator, Optional

from ttt.limits import over_limit

from grader.processes import ChosenWait
from grader.remote.errors import (
    NotPlainData,
    RemoteDied,
    RemoteError,
    RemoteFailure,
    RemoteProtocolError,
    RemoteStalled,
    RemoteTimeout,
    SandboxNotStarted,
    _stalled,
)
from grader.remote.protocol import (
    _HEADER,
    MAX_MESSAGE,
    MAX_NOTES,
    NOTE_CHARS,
    SERVICE_CPU,
    _Decoder,
    _Encoder,
    _frame,
    _glimpse,
    _identical,
    _incoming,
    _package_path,
    _parse,
    _resolve,
    _settle,
    decode,
    encode,
)

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
            raise RemoteTimeout(over_limit(f"the grader's look at the submission's objects ({message.get('op')})", SERVICE_CPU)
                                + ": their own code runs when they are read")
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
            raise RemoteTimeout(over_limit("the test", seconds))

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
                    raise RemoteTimeout(over_limit("the test", seconds))
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
                        raise RemoteTimeout(over_limit("the test", seconds))
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
                raise RemoteTimeout(over_limit("the test", budget))
            raise RemoteTimeout(over_limit(function.__name__, limit) if limit is not None else
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
                raise self._fail(RemoteTimeout(over_limit("the call", cpu) + " (stopped from outside)"))
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
