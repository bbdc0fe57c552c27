"""A busy machine for the tests that must hold under load: processes that each burn a core."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from typing import Iterator


@contextlib.contextmanager
def cpu_burners(per_core: int = 4, *, count: int | None = None) -> Iterator[list[subprocess.Popen]]:
    """Inside the block, `per_core` processes per core (or `count` in all) spin without end beside
    the test; they are killed when it ends, however it ends."""
    started = []
    try:
        for _ in range(count if count is not None else per_core * (os.cpu_count() or 1)):
            started.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        yield started
    finally:
        for process in started:
            process.kill()
            process.wait()
