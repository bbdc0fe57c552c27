"""The exceptions the trusted side raises for a student server: what the student's code raised
(`RemoteError`), and what went wrong with the server itself (`RemoteFailure` and its kinds)."""

from __future__ import annotations

from typing import Optional

from ttt.limits import OutOfCpuTime


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
