"""The grading kernel: an IPython kernel started under resource limits.

``python -m grader.kernel --memory-mb N -f CONNECTION_FILE`` caps the kernel's address space
(``RLIMIT_AS``), the size of files it may write (``RLIMIT_FSIZE``) and core dumps, then runs
ipykernel in the same process, so student code that allocates without end gets a
``MemoryError`` instead of taking the grading machine down. This is not a sandbox: the
kernel still runs as the grading user (see the README's instructor section).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

KERNEL_NAME = "ttt-grading"
DEFAULT_MEMORY_MB = 2048
MAX_FILE_MB = 256  # the largest file a kernel may write
PRELOAD = ("ttt.tictactoe", "ttt.draw", "grader.checks")  # what every lesson imports; pure Python


def write_kernelspec(root: Path, *, memory_mb: int = DEFAULT_MEMORY_MB) -> Path:
    """Writes the grading kernel's spec under ``root/kernels/``; returns ``root``, the
    directory to put first on ``JUPYTER_PATH`` so that Jupyter finds the kernel by name."""
    folder = Path(root) / "kernels" / KERNEL_NAME
    folder.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "grader.kernel", "--memory-mb", str(int(memory_mb)),
                 "-f", "{connection_file}"],
        "display_name": f"Python 3 (grading, {int(memory_mb)} MB)",
        "language": "python",
        # one thread per numeric library: students are graded in parallel already, and a
        # thread pool per core would eat the address-space cap on a machine with many cores
        "env": {"MALLOC_ARENA_MAX": "2", "PYDEVD_DISABLE_FILE_VALIDATION": "1", "OMP_NUM_THREADS": "1",
                "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
        "metadata": {"debugger": False},
    }
    (folder / "kernel.json").write_text(json.dumps(spec, indent=1))
    return Path(root)


def use_kernelspecs(root: Path) -> None:
    """Puts ``root`` first on ``JUPYTER_PATH`` for this process and the processes it starts."""
    paths = [str(root)] + [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    os.environ["JUPYTER_PATH"] = os.pathsep.join(dict.fromkeys(paths))


def limit(*, memory_mb: int) -> None:
    """Caps this process: address space ``memory_mb`` MB, files MAX_FILE_MB MB, no core dumps."""
    import resource

    caps = [(resource.RLIMIT_AS, memory_mb), (resource.RLIMIT_FSIZE, MAX_FILE_MB), (resource.RLIMIT_CORE, 0)]
    for which, mb in caps:
        _, hard = resource.getrlimit(which)
        soft = mb * 2**20
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(which, (soft, soft if hard == resource.RLIM_INFINITY else hard))


def main(argv: list[str] | None = None) -> None:
    """Starts an IPython kernel under the limits given on the command line."""
    args = list(sys.argv[1:] if argv is None else argv)
    memory_mb = DEFAULT_MEMORY_MB
    if "--memory-mb" in args:
        at = args.index("--memory-mb")
        memory_mb = int(args[at + 1])
        del args[at:at + 2]
    limit(memory_mb=memory_mb)
    if not os.environ.get("TTT_GRADER_KERNEL_STDERR"):  # the kernel's own log, not the cells' output
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
    for name in PRELOAD:  # imported here, before the first cell asks (hidden in a spare kernel)
        try:
            importlib.import_module(name)
        except Exception:
            pass
    if sys.path and sys.path[0] in ("", os.getcwd()):  # as ipykernel_launcher: not the launch folder
        del sys.path[0]
    from ipykernel import kernelapp

    sys.argv = [sys.argv[0], *args]
    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
