"""``ttt-grader check tictactoe.py``: grade a plain CS50-format file with the lessons' checks.

Each CS50 function (the CS50 project: player, actions, result, winner, terminal, utility, minimax) is
checked by the same ``grader.checks`` function the notebooks' hidden tests call, on its own
(the other functions it calls are the reference ones, as in the notebooks), each in its
own subprocess under a memory cap and a time limit, so a file that loops, exits, crashes or
hoards memory loses that function's check and no more, and cannot hang or kill the grader.
The subprocess still runs the file as the grading user: this is not a sandbox.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

FUNCTIONS = ("player", "actions", "result", "winner", "terminal", "utility", "minimax")
MEMORY_MB = 2048


@dataclass
class CheckResult:
    """One function's check: passed or not, and the check's message."""

    function: str
    passed: bool
    message: str
    seconds: float

    def as_dict(self) -> dict:
        """Returns the result as plain data (for --json)."""
        return asdict(self)


def check_file(path: Path, *, timeout: float = 60, functions=FUNCTIONS) -> list[CheckResult]:
    """Checks each CS50 function of the file at ``path``; returns a result per function."""
    path = Path(path).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return list(pool.map(lambda name: _check_one(path, name, timeout=timeout), functions))


def _check_one(path: Path, name: str, *, timeout: float) -> CheckResult:
    import time

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "result.json"
        command = [sys.executable, "-m", "grader.cs50file", str(path), name, str(out)]
        try:
            done = subprocess.run(command, cwd=path.parent, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, timeout=timeout, text=True, errors="replace")
        except subprocess.TimeoutExpired:
            return CheckResult(name, False, f"timed out: {name} was still running after {timeout:g} s", timeout)
        seconds = time.perf_counter() - start
        if out.exists():
            found = json.loads(out.read_text())
            return CheckResult(name, found["passed"], found["message"], seconds)
        last = (done.stderr or "").strip().splitlines()[-1:] or [""]
        return CheckResult(name, False, f"the file stopped the check (exit code {done.returncode}) {last[0][:200]}".strip(), seconds)


def report(results: list[CheckResult]) -> str:
    """Returns the results as text: a line per function, then each failure's message."""
    lines = [f"{'PASS' if r.passed else 'FAIL'}  {r.function:<9} {r.seconds:5.1f} s" for r in results]
    for r in results:
        if not r.passed:
            lines += ["", f"--- {r.function} ---", r.message]
    lines += ["", f"{sum(r.passed for r in results)} of {len(results)} functions pass"]
    return "\n".join(lines)


def _run(path: str, name: str, out: str) -> None:
    """In the subprocess: loads the file as module ``tictactoe`` and runs one check."""
    import importlib.util

    from grader.kernel import limit

    limit(memory_mb=MEMORY_MB)
    from grader import checks

    def write(passed: bool, message: str) -> None:
        Path(out).write_text(json.dumps({"passed": passed, "message": message}))

    sys.path.insert(0, str(Path(path).parent))
    try:
        spec = importlib.util.spec_from_file_location("tictactoe", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["tictactoe"] = module
        spec.loader.exec_module(module)
    except BaseException as error:  # a syntax error, an exit or a crash while importing
        write(False, f"the file could not be imported: {type(error).__name__}: {error}")
        return
    function = getattr(module, name, None)
    if not callable(function):
        write(False, f"the file defines no function {name}")
        return
    import contextlib
    import io

    from ttt import tictactoe as reference

    # as in the notebooks, a function is graded on its own: minimax runs on the reference
    # helpers (the other checks put the reference helpers in place themselves)
    helpers = {h: getattr(reference, h) for h in FUNCTIONS if h != name} if name == "minimax" else {}
    printed = io.StringIO()
    try:
        with checks.substituted(vars(module), **helpers), contextlib.redirect_stdout(printed):
            summary = getattr(checks, f"check_{name}")(function)
        lines = printed.getvalue().strip().splitlines()
        write(True, summary or (lines[-1] if lines else f"{name}: correct"))
    except BaseException as error:
        write(False, f"{type(error).__name__}: {error}" if not isinstance(error, AssertionError) else str(error))


if __name__ == "__main__":
    _run(*sys.argv[1:4])
