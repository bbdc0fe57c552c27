"""Running notebooks for the lesson tests: real kernels (nbclient), real nbgrader, two at a time.

Each run is a subprocess, so independent notebooks execute in parallel on separate kernels.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterable, TypeVar

import nbformat

from grader.worker import kernel_did_not_start  # a kernel slow to start on a busy machine

T = TypeVar("T")
R = TypeVar("R")
WORKERS = 2  # the test machine's cores

RUN = """
import sys, time, nbformat
from nbclient import NotebookClient
source, target, timeout = sys.argv[1], sys.argv[2], int(sys.argv[4])
nb = nbformat.read(source, as_version=4)
start = time.perf_counter()
NotebookClient(nb, timeout=timeout, interrupt_on_timeout=True, kernel_name="python3", allow_errors=True,
               startup_timeout=600, resources={"metadata": {"path": sys.argv[3]}}).execute()
nb.metadata["run_seconds"] = time.perf_counter() - start
nbformat.write(nb, target)
"""


def in_parallel(function: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """Return [function(item) ...], run `WORKERS` at a time."""
    with ThreadPoolExecutor(WORKERS) as pool:
        return list(pool.map(function, items))


def execute(source: Path, target: Path, *, timeout: int = 120, env: dict | None = None) -> nbformat.NotebookNode:
    """Run notebook `source` top to bottom in a fresh kernel (errors recorded, not raised); save and return it.

    A cell still running after `timeout` seconds is interrupted (its output ends in a
    KeyboardInterrupt) and the run goes on.
    """
    for attempt in range(3):  # a kernel too slow to start on a busy machine is started again
        done = subprocess.run([sys.executable, "-c", RUN, str(source), str(target), str(source.parent), str(timeout)],
                              capture_output=True, text=True, env={**os.environ, **(env or {})})
        if done.returncode == 0 or not kernel_did_not_start(done.stderr):
            break
    if done.returncode != 0:
        raise AssertionError(f"running {source.name} failed (exit code {done.returncode}):\n{done.stderr[-3000:]}")
    return nbformat.read(target, as_version=4)


def cell_seconds(nb: nbformat.NotebookNode) -> list[tuple[int, float]]:
    """Return (cell index, seconds it ran) for each executed code cell, from nbclient's timing metadata."""
    from datetime import datetime

    found = []
    for k, cell in enumerate(nb.cells):
        timing = cell.get("metadata", {}).get("execution", {})
        if "iopub.execute_input" in timing and "shell.execute_reply" in timing:
            start, end = (datetime.fromisoformat(timing[key].replace("Z", "+00:00"))
                          for key in ("iopub.execute_input", "shell.execute_reply"))
            found.append((k, (end - start).total_seconds()))
    return found


def output_texts(nb: nbformat.NotebookNode) -> Iterable[tuple[int, str]]:
    """Yield (cell index, text) for every output of every code cell: tracebacks, streams, plain-text displays."""
    for k, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                yield k, "\n".join(out.traceback)
            elif out.output_type == "stream":
                yield k, out.text
            elif "text/plain" in out.get("data", {}):
                yield k, out.data["text/plain"]


def errors(nb: nbformat.NotebookNode) -> list[tuple[int, str, str]]:
    """Return (cell index, exception name, message) for every error output in `nb`."""
    return [
        (k, out.ename, out.evalue)
        for k, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.output_type == "error"
    ]


def nbgrader(course: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``nbgrader ARGS`` in the course directory; raise with its output if it fails.

    The environment's ``bin`` goes first on PATH: nbgrader runs ``alembic`` from there.
    """
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, capture_output=True, text=True,
                          timeout=timeout, env=env)
    if done.returncode != 0:
        raise AssertionError(f"nbgrader {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def timed(function: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start
