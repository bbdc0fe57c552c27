"""The grading kernel: an IPython kernel started under resource limits.

``python -m grader.kernel --memory-mb N -f CONNECTION_FILE`` caps the kernel's address space
(``RLIMIT_AS``), the size of files it may write (``RLIMIT_FSIZE``), the processes its user may
run (``RLIMIT_NPROC``; root is exempt from that one) and core dumps, then runs ipykernel in the
same process, so student code that allocates without end gets a ``MemoryError`` instead of
taking the grading machine down. Where the grader asks for it (environment variables, set by
``grader.autograde`` for its workers):

- ``TTT_GRADER_KERNELS=DIR``: the kernel works in a private folder of its own, ``DIR/kernel-PID``
  (its current folder and ``TMPDIR``), which the grader removes when the kernel is done;
- ``TTT_GRADER_READ_ONLY=PATH[:PATH...]``: those folders (the course) are read-only for the
  kernel and every process it starts (a private mount namespace, Linux only; as root, or
  through a user namespace where the system allows one). Where neither is possible the kernel
  runs without it, and ``read_only_enforced`` says so;
- ``TTT_GRADER_CHECKS_APART=1``: the hidden checks are left to the re-check that follows the
  notebook (``grader.checks.display``, ``grader.recheck``).

Every process a kernel starts inherits ``TTT_GRADER_KERNEL=PID`` in its environment, so the
grader can find and stop them all, detached ones included. This is not a sandbox: the kernel
still runs as the grading user (``grader.sandbox`` is the sandbox; docs/grading-pipeline.md).
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import sys
from pathlib import Path

from grader.course import MEMORY_MB
from grader.processes import every_pid

KERNEL_NAME = "ttt-grading"
MAX_FILE_MB = 256  # the largest file a kernel may write
MORE_PROCESSES = 256  # processes a kernel's user may start beyond those it runs already (RLIMIT_NPROC)
KERNELS_ENV, READ_ONLY_ENV, KERNEL_ENV = "TTT_GRADER_KERNELS", "TTT_GRADER_READ_ONLY", "TTT_GRADER_KERNEL"
CUT_SHORT = "\n... output cut short by the grader ...\n"  # where a cell's (or a test's) output was cut
APART_ENV = "TTT_GRADER_CHECKS_APART"  # "1": the hidden checks run in the re-check, not in the kernel
PRELOAD = ("ttt.tictactoe", "ttt.draw", "grader.checks")  # what every lesson imports; pure Python


def write_kernelspec(root: Path, *, memory_mb: int = MEMORY_MB, sandboxed: bool = False) -> Path:
    """Writes the grading kernel's spec under ``root/kernels/``; returns ``root``, the
    directory to put first on ``JUPYTER_PATH`` so that Jupyter finds the kernel by name.
    ``sandboxed``: the kernel starts inside a sandbox of its own (``grader.sandbox``), which sees
    the folder of its connection file (its unix sockets) and its notebook's folder, nothing else."""
    folder = Path(root) / "kernels" / KERNEL_NAME
    folder.mkdir(parents=True, exist_ok=True)
    kernel = [sys.executable, "-m", "grader.kernel", "--memory-mb", str(int(memory_mb)), "-f", "{connection_file}"]
    if sandboxed:
        kernel = [sys.executable, "-m", "grader.sandbox", "kernel", "{connection_file}", "--memory-mb", str(int(memory_mb)),
                  "--", *kernel]
    spec = {
        "argv": kernel,
        "display_name": f"Python 3 (grading{', sandboxed' if sandboxed else ''}, {int(memory_mb)} MB)",
        "language": "python",
        # one thread per numeric library: students are graded in parallel already, and a
        # thread pool per core would eat the address-space cap on a machine with many cores
        "env": {"MALLOC_ARENA_MAX": "2", "PYDEVD_DISABLE_FILE_VALIDATION": "1", "OMP_NUM_THREADS": "1",
                "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
        "metadata": {"debugger": False},
        # a signal would reach the sandbox's outer process and end it: interrupts come as messages
        "interrupt_mode": "message",
    }
    (folder / "kernel.json").write_text(json.dumps(spec, indent=1))
    return Path(root)


def use_kernelspecs(root: Path) -> None:
    """Puts ``root`` first on ``JUPYTER_PATH`` for this process and the processes it starts."""
    paths = [str(root)] + [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    os.environ["JUPYTER_PATH"] = os.pathsep.join(dict.fromkeys(paths))


def _processes_of_this_user() -> int:
    uid = os.getuid()
    count = 0
    for pid in every_pid():
        try:
            count += os.stat(f"/proc/{pid}").st_uid == uid
        except OSError:
            pass
    return count


def limit(*, memory_mb: int) -> None:
    """Caps this process: address space ``memory_mb`` MB, files MAX_FILE_MB MB, no core dumps,
    and its user's processes to those running now plus MORE_PROCESSES (a fork bomb stops there)."""
    import resource

    caps = [(resource.RLIMIT_AS, memory_mb * 2**20), (resource.RLIMIT_FSIZE, MAX_FILE_MB * 2**20), (resource.RLIMIT_CORE, 0)]
    if hasattr(resource, "RLIMIT_NPROC"):
        caps.append((resource.RLIMIT_NPROC, _processes_of_this_user() + MORE_PROCESSES))
    for which, soft in caps:
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(which, (soft, soft if hard == resource.RLIM_INFINITY else hard))


def private_folder(kernels: str) -> Path:
    """Makes ``kernels/kernel-PID`` this kernel's current folder and TMPDIR; returns it."""
    folder = Path(kernels) / f"kernel-{os.getpid()}"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chdir(folder)
    for name in ("TMPDIR", "TEMP", "TMP"):
        os.environ[name] = str(folder)
    return folder


read_only_enforced = False  # set by read_only() when the folders were made read-only


def read_only(paths: list[str]) -> bool:
    """Makes ``paths`` read-only for this process and its children, in a mount namespace of
    their own (Linux; root, or an unprivileged user namespace). Returns whether it could; it
    must run while the process has one thread."""
    global read_only_enforced
    if not sys.platform.startswith("linux") or not paths:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    newns, newuser = 0x00020000, 0x10000000
    rec, private, bind, remount, rdonly = 0x4000, 0x40000, 0x1000, 0x20, 0x1
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(newns) != 0:
        if libc.unshare(newuser | newns) != 0:
            return False
        try:  # stay who we are inside the user namespace
            Path("/proc/self/setgroups").write_text("deny")
            Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
            Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
        except OSError:
            return False
    if libc.mount(None, b"/", None, rec | private, None) != 0:
        return False
    for path in paths:
        target = os.fsencode(os.path.realpath(path))
        if libc.mount(target, target, None, bind | rec, None) != 0 or \
                libc.mount(None, target, None, remount | bind | rdonly, None) != 0:
            return False
    read_only_enforced = True
    return True


MAX_OUTPUT_BYTES = 1_000_000  # what a cell may print (its stdout and stderr each); SafeExecute keeps as much
OUTPUT_PIECE = 2**18  # the largest output message a kernel sends: a big print goes in pieces


def cap_output(most: int = MAX_OUTPUT_BYTES, piece: int = OUTPUT_PIECE) -> None:
    """Caps what each cell prints: past `most` characters a stream drops the rest (saying so once),
    and a big write goes out in messages of at most `piece` characters, so the grader never has to
    take one huge message (200 MB printed without a newline) or a flood of them. The grader's
    own limits on messages (``grader.execute``) hold even where a cell undoes this."""
    from ipykernel.iostream import OutStream

    write = OutStream.write

    def capped(self, text):
        if not isinstance(text, str):
            return write(self, text)
        cell = (self.parent_header or {}).get("msg_id")
        if getattr(self, "_ttt_cell", None) != cell:
            self._ttt_cell, self._ttt_sent = cell, 0
        room = most - self._ttt_sent
        self._ttt_sent += len(text)
        if room <= 0:
            return len(text)
        kept = text[:room] + (CUT_SHORT if len(text) > room else "")
        if len(kept) <= piece:
            write(self, kept)
            return len(text)
        for start in range(0, len(kept), piece):
            write(self, kept[start:start + piece])
            self.flush()
        return len(text)

    OutStream.write = capped


def main(argv: list[str] | None = None) -> None:
    """Starts an IPython kernel under the limits given on the command line."""
    args = list(sys.argv[1:] if argv is None else argv)
    launched_in = os.getcwd()
    memory_mb = MEMORY_MB
    if "--memory-mb" in args:
        at = args.index("--memory-mb")
        memory_mb = int(args[at + 1])
        del args[at:at + 2]
    limit(memory_mb=memory_mb)
    if os.environ.get(KERNELS_ENV):
        try:
            private_folder(os.environ[KERNELS_ENV])
        except OSError:  # in a sandbox the grader's scratch folder is out of sight: its own /tmp serves
            pass
    read_only([p for p in os.environ.get(READ_ONLY_ENV, "").split(os.pathsep) if p])
    os.environ[KERNEL_ENV] = str(os.getpid())  # inherited by every process the kernel starts
    if not os.environ.get("TTT_GRADER_KERNEL_STDERR"):  # the kernel's own log and banner, not the cells' output
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.close(devnull)
    for name in PRELOAD:  # imported here, before the first cell asks (hidden in a spare kernel)
        try:
            importlib.import_module(name)
        except Exception:
            pass
    if sys.path and sys.path[0] in ("", launched_in, os.getcwd()):  # as ipykernel_launcher: not the launch folder
        del sys.path[0]
    from ipykernel import kernelapp

    cap_output()
    sys.argv = [sys.argv[0], *args]
    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
