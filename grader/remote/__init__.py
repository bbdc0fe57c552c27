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

Its modules, each importing only from those before it:

- `grader.remote.errors`: what the trusted side raises (`RemoteError` for what the student's
  code raised, `RemoteFailure` and its kinds for what went wrong with the server);
- `grader.remote.protocol`: the codec (`encode`, `decode`, `Unplain`): plain values to JSON trees
  and back, with the identity of containers kept within a message and the write-back of mutated
  arguments; the framing of messages; and the bounds on both;
- `grader.remote.source`: what loading a submission's definitions means (`definitions`,
  `python_source`, `KEPT`), for the server and for the grader's own reading of a submission;
- `grader.remote.server` (`serve`): loads a notebook's definitions or a ``.py`` file, then answers
  the client's operations: call, map, set, clear_caches, reload, refuse;
- `grader.remote.client` (`Remote`): starts the server through a launcher (the sandbox's), limits
  each call in CPU seconds from outside, notices a server that stalls or dies and starts it
  again, serves the callbacks the student's code makes to trusted functions, and relays the
  grader's own exceptions (a failed check, a reference called) through the student's code.

The names below are the package's: the rest of the grader imports them from ``grader.remote``.
"""

from grader.remote.errors import (
    STALLED_WORDS,
    NotPlainData,
    RemoteDied,
    RemoteError,
    RemoteFailure,
    RemoteProtocolError,
    RemoteStalled,
    RemoteTimeout,
    SandboxNotStarted,
)
from grader.remote.protocol import (
    MAX_DEPTH,
    MAX_MESSAGE,
    MAX_NOTES,
    MAX_SAME_HASH,
    MAX_UNFOLDED,
    NOTE_CHARS,
    SERVICE_CPU,
    Unplain,
    decode,
    encode,
)
from grader.remote.source import KEPT, definitions, python_source
from grader.remote.server import NOTES, serve
from grader.remote.client import LinkedNamespace, Remote, RemoteFunction, watch

__all__ = [
    "KEPT", "MAX_DEPTH", "MAX_MESSAGE", "MAX_NOTES", "MAX_SAME_HASH", "MAX_UNFOLDED", "NOTES", "NOTE_CHARS",
    "SERVICE_CPU", "STALLED_WORDS", "LinkedNamespace", "NotPlainData", "Remote", "RemoteDied", "RemoteError",
    "RemoteFailure", "RemoteFunction", "RemoteProtocolError", "RemoteStalled", "RemoteTimeout", "SandboxNotStarted",
    "Unplain", "decode", "definitions", "encode", "python_source", "serve", "watch",
]
