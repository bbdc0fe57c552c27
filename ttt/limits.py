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
import threading
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

    The limit is a profiling timer (``ITIMER_PROF``, SIGPROF), so it works in the main thread on
    Unix only; elsewhere, or with `seconds` None, the block runs without a limit. A profiling timer
    set before the block is replaced while it runs.
    """
    if seconds is None or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(signum: int, frame: Any) -> None:
        raise OutOfCpuTime()

    previous = signal.signal(signal.SIGPROF, ring)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
