"""``ttt-grader check tictactoe.py``: grade a plain CS50-format file by the CS50 specification.

Each CS50 function (the CS50 project: initial_state, player, actions, result, winner, terminal,
utility, minimax) is checked by the same ``grader.checks`` function the notebooks' hidden tests
call, with the CS50 specification's own words where the lessons are stricter
(``checks.cs50_specification``: an invalid action may raise any Exception). A function passes if
it is correct as written, or correct when the other CS50 functions it calls are the reference
ones; the result names the student's own functions that made it fail as written.

The file runs in a sandbox (``grader.sandbox``: its own user, no network, read-only
installation, a folder holding only a copy of the file), loaded by a student server
(``grader.remote``); each check runs in a process of its own outside it and calls the file's
functions through plain values, so nothing the file does reaches a check or its verdict. A
check's limit is CPU seconds spent by the file's functions; a function that makes no progress
at all (it sleeps) is stopped, a busy machine never fails one. A file that loops, exits, crashes
or hoards memory loses that function's check and no more.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ttt.limits import over_limit

from grader.course import CELL_TIMEOUT, MEMORY_MB

FUNCTIONS = ("initial_state", "player", "actions", "result", "winner", "terminal", "utility", "minimax")
CPU_SECONDS = CELL_TIMEOUT  # CPU time a check may use, as a test cell may; the slowest honest minimax uses about 20 (see benchmarks/README.md)
_NOTE_BYTES = 4096  # where the subprocess writes the call it is making, for a file that kills it


@dataclass
class CheckResult:
    """One function's check: passed or not, the check's message, the student's functions that broke it as written."""

    function: str
    passed: bool
    message: str
    seconds: float  # wall-clock time of the check's subprocess
    cpu_seconds: float = 0.0  # CPU time the file's code used, in its sandbox (what the limit counts)
    broken_by: list = field(default_factory=list)
    checker_cpu_seconds: float = 0.0  # CPU time the check itself used outside the sandbox (calling, comparing)

    def as_dict(self) -> dict:
        """Returns the result as plain data (for --json)."""
        return asdict(self)


def check_file(path: Path, *, timeout: float = CPU_SECONDS, functions=FUNCTIONS, jobs: int | None = None,
               sandbox: bool = True) -> list[CheckResult]:
    """Checks each CS50 function of the file at ``path``; returns a result per function, in order.

    ``timeout`` is the CPU seconds each check's calls of the file's functions may use; ``jobs``
    how many checks run at once (default: one per core); ``sandbox`` False runs the file without
    a sandbox (unsafe; raises SandboxUnavailable where one is wanted and none can be had).
    """
    path = Path(path).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    if sandbox:
        from grader.sandbox import SandboxUnavailable, available

        why = available()
        if why is not None:
            raise SandboxUnavailable(f"{why} A file is checked only inside a sandbox; to check it without one (unsafe: "
                                     "it can then read and change your files), pass --no-sandbox.")
    order = sorted(functions, key=lambda name: name != "minimax")  # the longest first
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        done = dict(zip(order, pool.map(lambda name: _check_one(path, name, timeout=timeout, sandbox=sandbox), order)))
    return [done[name] for name in functions]


def _check_one(path: Path, name: str, *, timeout: float, sandbox: bool) -> CheckResult:
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        out, note = Path(scratch) / "result.json", Path(scratch) / "call.txt"
        command = [sys.executable, "-m", "grader.cs50file", str(path), name, str(out), str(note), str(timeout),
                   "sandbox" if sandbox else "plain"]
        done = subprocess.run(command, cwd=scratch, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, errors="replace")
        seconds = time.perf_counter() - start
        if out.exists():
            found = json.loads(out.read_text())
            return CheckResult(name, found["passed"], found["message"], seconds, found["cpu_seconds"], found["broken_by"],
                               found["checker_cpu_seconds"])
        during = _last_call(note)
        last = (done.stderr or "").strip().splitlines()[-1:] or [""]
        why = f"the check stopped (exit code {done.returncode}) {last[0][:200]}".strip()
        return CheckResult(name, False, why + (f"\n\nwhile running {during}" if during else ""), seconds, 0.0)


def _last_call(note: Path) -> str:
    """Returns the call the subprocess was making when it stopped (as it wrote it to `note`), or ''."""
    try:
        return note.read_bytes().rstrip(b"\0 ").decode("utf-8", "replace")
    except OSError:
        return ""


def report(results: list[CheckResult]) -> str:
    """Returns the results as text: a line per function, then each failure's message and each pass's caveat."""
    lines = [f"{'PASS' if r.passed else 'FAIL'}  {r.function:<13} {r.cpu_seconds:5.1f} s CPU"
             f" (the check's own: {r.checker_cpu_seconds:.1f} s)"
             + (f"  (as written it fails because of your {', '.join(r.broken_by)})" if r.broken_by else "") for r in results]
    for r in results:
        if not r.passed or r.broken_by:
            lines += ["", f"--- {r.function} ---", r.message]
    lines += ["", f"{sum(r.passed for r in results)} of {len(results)} functions pass"]
    return "\n".join(lines)


def _noter(path: str):
    """Returns a function that writes each call (and its board, as a list) over the start of the file at `path`."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)

    def note(call: str, board) -> None:
        text = f"{call} on the board {board!r}" if board is not None else call
        os.pwrite(fd, text.encode()[:_NOTE_BYTES].ljust(_NOTE_BYTES, b"\0"), 0)

    return note


def _run(path: str, name: str, out: str, note: str, cpu_seconds: str, mode: str = "sandbox") -> None:
    """In the check's own process (outside the sandbox): loads the file into a student server as
    module ``tictactoe`` and runs one check on its function through plain values."""
    import contextlib
    import io
    import shutil

    from grader import checks
    from grader.checks import failures, student
    from grader.checks.reference import graded_kinds
    from grader.remote import Remote

    seconds = float(cpu_seconds)
    started = time.process_time()

    def write(passed: bool, message: str, broken_by=()) -> None:
        Path(out).write_text(json.dumps({"passed": passed, "message": message, "broken_by": list(broken_by),
                                         "cpu_seconds": round(remote.cpu_seconds(), 2),
                                         "checker_cpu_seconds": round(time.process_time() - started, 2)}))

    folder = Path(out).parent / "file"
    folder.mkdir()
    for sibling in sorted(Path(path).parent.glob("*.py"))[:200]:  # modules the file may import from its folder
        if sibling.is_file() and not sibling.is_symlink() and sibling.stat().st_size <= 2**20:
            shutil.copyfile(sibling, folder / sibling.name)
    shutil.copyfile(path, folder / "tictactoe.py")
    launcher = None
    if mode == "sandbox":
        from grader.recheck import student_launcher

        launcher = student_launcher(memory_mb=MEMORY_MB, under=Path(out).parent)
    remote = Remote({"file": "tictactoe.py", "traps": graded_kinds(FUNCTIONS)}, launcher=launcher, cwd=folder)  # the sandbox works in a copy of the folder
    try:
        try:
            remote.start()
        except BaseException as error:  # an exit or a crash while importing
            write(False, f"the file could not be imported: it ended the process it ran in ({error})")
            return
        if remote.load_error is not None:  # a syntax error, or an error raised while importing
            error = remote.load_error
            write(False, f"the file could not be imported: {failures._type_name(error)}: {error}")
            return
        namespace = remote.namespace()
        student.FRESH_COPY.set(lambda wanted: remote.reload()[wanted])  # checked again with the reference helpers: no memo kept
        function = namespace.get(name)
        if not callable(function):
            write(False, f"the file defines no function {name}")
            return
        student.WATCH_CALLS.set(_noter(note))
        try:
            with checks.cs50_specification(), contextlib.redirect_stdout(io.StringIO()), remote.budget(seconds):
                summary = getattr(checks, f"check_{name}")(function)
            write(True, summary, getattr(summary, "broken_by", ()))
        except (checks.CheckFailed, NotImplementedError) as error:
            write(False, str(error))
        except failures.OutOfCpuTime:
            write(False, "timed out: " + over_limit(f"the check of {name}", seconds)
                  + (f"\n\nwhile running {_last_call(Path(note))}" if _last_call(Path(note)) else ""))
        except BaseException as error:  # what the check itself could not turn into a message
            write(False, f"{name}: the check stopped with {failures._type_name(error)}: {error}")
    finally:
        remote.close()
        if launcher is not None:  # the server is stopped: its scratch copy goes now
            launcher.close()


if __name__ == "__main__":
    _run(*sys.argv[1:7])
