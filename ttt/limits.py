"""A CPU-time limit on a block of code: how a lesson's test, a widget and the grader stop a
student's function that does not come back (a loop or a recursion that never ends).

CPU time, not wall time, so the same code gets the same verdict on a busy machine as on a quiet one.

    >>> from ttt.limits import OutOfCpuTime, cpu_limit
    >>> try:
    ...     with cpu_limit(0.05):
    ...         while True:
    ...             pass
    ... except OutOfCpuTime:
    ...     print("stopped")
    stopped
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from typing import Any, Iterator, Optional


class OutOfCpuTime(BaseException):
    """Raised in the main thread when a block's CPU-time limit is up.

    A ``BaseException``, as ``KeyboardInterrupt`` is: a student's ``except Exception`` does not catch it.
    """


def over_limit(who: str, seconds: float) -> str:
    """How a student or an instructor is told that `who` (a function's name, "the test", "the call")
    was stopped at its limit of `seconds` CPU seconds: the one wording, wherever a limit stops code.

    >>> over_limit("minimax", 10)
    'minimax used more than its 10 s of CPU time'
    """
    return f"{who} used more than its {seconds:g} s of CPU time"


def still_running(seconds: float) -> str:
    """How a call stopped at its limit of `seconds` CPU seconds is described where it ran.

    >>> still_running(0.5)
    'still running after 0.5 s of CPU time'
    """
    return f"still running after {seconds:g} s of CPU time"


@contextlib.contextmanager
def cpu_limit(seconds: Optional[float]) -> Iterator[None]:
    """Inside the block, raise `OutOfCpuTime` once the process has used `seconds` of CPU time.

    Where Python has a profiling timer (Unix), the limit is that timer (``ITIMER_PROF``, SIGPROF),
    in the main thread; a profiling timer set before the block is replaced while it runs. Where it
    has none but has ``sys.monitoring`` (Python 3.12 and newer: in a browser, Pyodide has no timer
    signals), the block's own code looks at the clock as it runs (`_watched`). Otherwise, in
    another thread, or with `seconds` None, the block runs without a limit.
    """
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
    elif hasattr(signal, "setitimer"):
        with _timer(seconds):
            yield
    elif hasattr(sys, "monitoring"):
        with _watched(seconds):
            yield
    else:
        yield


@contextlib.contextmanager
def _timer(seconds: float) -> Iterator[None]:
    def ring(signum: int, frame: Any) -> None:
        raise OutOfCpuTime()

    previous = signal.signal(signal.SIGPROF, ring)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


WATCH_EVERY = 2000  # events between two looks at the clock: about 0.1 ms of a tight loop


@contextlib.contextmanager
def _watched(seconds: float) -> Iterator[None]:
    """The limit where no timer can interrupt Python: a ``sys.monitoring`` tool counts the
    functions started and the jumps made (a loop's every turn makes one) and, every
    `WATCH_EVERY` of them, raises `OutOfCpuTime` in the code running if the process's CPU time
    is past the limit. An endless loop or recursion in Python is stopped; a single call into
    compiled code that never returns is not. Each counted event costs a Python call: code in the
    block runs a few times slower (benchmarks/README.md). A block inside another gets a tool of its own."""
    monitoring = sys.monitoring  # type: ignore[attr-defined]
    events = monitoring.events
    tool = next((i for i in (4, 3) if monitoring.get_tool(i) is None), None)
    if tool is None:  # both free tools taken (by two blocks around this one): this one runs in theirs
        yield
        return
    deadline = time.process_time() + seconds
    left = WATCH_EVERY

    def look(*_: Any) -> None:
        nonlocal left
        left -= 1
        if left <= 0:
            left = WATCH_EVERY
            if time.process_time() > deadline:
                monitoring.set_events(tool, events.LINE | events.JUMP)
                monitoring.register_callback(tool, events.JUMP, stop)

    def stop(*_: Any) -> None:
        monitoring.set_events(tool, 0)  # once: what runs next (the block's exits, the handler) runs free
        raise OutOfCpuTime()

    # Stopped at the next line where it can be: an exception raised at a jump (Python 3.12, 3.13)
    # is caught by the try blocks of the frames that called the code, not by that frame's own.
    watched = {events.PY_START: look, events.JUMP: look, events.LINE: stop}
    monitoring.use_tool_id(tool, "ttt.limits")
    try:
        for event, callback in watched.items():
            monitoring.register_callback(tool, event, callback)
        monitoring.set_events(tool, events.PY_START | events.JUMP)
        yield
    finally:
        monitoring.set_events(tool, 0)
        for event in watched:
            monitoring.register_callback(tool, event, None)
        monitoring.free_tool_id(tool)
