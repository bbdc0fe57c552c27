"""``SafeExecute``: nbgrader's Execute preprocessor, hardened for hostile submissions.

It runs a notebook in the grading kernel (``grader.kernel``; inside the unit's sandbox,
``grader.sandbox``, when ``sandboxed`` is set) and adds what stock nbgrader lacks when a
submission misbehaves:

- time limits in CPU seconds, not wall time: a cell may use ``timeout`` CPU seconds (summed
  over the kernel and every process it starts), a notebook ``notebook_timeout`` in all. Wall
  time only stops a notebook whose cells chose to wait (slept, or waited on something that
  never comes) ``stall_timeout`` seconds in all, however short each wait: the wall time of a
  running cell less its CPU time and the time its processes waited for a core. A busy machine
  makes a cell slow, never failed.
  A stopped cell is interrupted; one that does not stop then is ended with its kernel.
- a kernel that dies in a cell (``os._exit``, a crash, out of memory) or is ended is replaced by
  a fresh one; the cells that ran before (test cells apart) are run again, quietly, so only the
  cells that depend on the broken one lose marks. The broken cell gets an error output that
  says what happened (a test cell with an error scores zero). After ``restart_limit`` restarts
  the remaining cells get an error output instead of running.
- output is capped per cell while it streams in (``max_output_bytes``), so a cell that
  prints without end cannot fill the grader's memory; nbgrader's LimitOutput trims further.
- in a sandbox, the kernel's channels are unix sockets in a folder private to the kernel
  (jupyter_client's ``ipc`` transport): no other kernel's connection file or port is reachable.
- a spare kernel is started while a notebook runs, so the next notebook does not wait for one
  (not in a sandbox: a sandboxed kernel sees only its own unit, known when it starts).
- the cells after the last test cell are not run (``run_after_last_test``): they cannot change
  a score, and in the lessons they are the demonstrations (plots, tournaments, widgets).
- with ``checks_apart``, the hidden checks are left to the re-check (``grader.recheck``): the
  kernel's environment says so (``grader.kernel.APART_ENV``).
"""

from __future__ import annotations

import atexit
import functools
import os
import signal
import threading
import time
from pathlib import Path

import zmq
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbformat import v4
from nbgrader.preprocessors import Execute
from nbgrader.utils import is_grade
from traitlets import Bool, Integer, List, Unicode

from grader.cells import is_test_cell
from grader.course import MEMORY_MB
from grader.kernel import APART_ENV, KERNEL_NAME

_SPARES: dict[str, AsyncKernelManager] = {}  # kernel name -> a started kernel nobody uses yet


def error_output(ename: str, evalue: str):
    """Returns an nbformat error output whose traceback is just ``ename: evalue``."""
    return v4.new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


NOTEBOOK_LIMIT = "NotebookTimeLimit"  # the error of cells stopped or skipped at the notebook's limit
STALL_SECONDS = 60  # wall seconds a notebook's cells may choose to wait (sleep, or wait for what never comes), in all
MAX_MESSAGE_BYTES = 4 * 2**20  # the largest message the grader takes from a kernel
MAX_MESSAGES_WAITING = 32  # messages from a kernel that may wait to be read (a flood beyond is dropped)
GRACE_CPU, GRACE_STALL = 15.0, 30.0  # what an interrupted cell may still use before its kernel is ended


def timeout_message(seconds: float) -> str:
    """Returns what a student is told about a cell stopped at its CPU-time limit."""
    return (f"This cell timed out: it used more than {seconds:g} seconds of CPU time (the time limit for a cell) "
            "and was stopped.")


def stall_message(seconds: float, *, ran: bool) -> str:
    """Returns what a student is told about a cell stopped, or not run, because the notebook's cells
    had waited without computing (slept, or waited for something that never came) for `seconds` in all."""
    return (f"The notebook's cells spent {seconds:g} seconds waiting without computing (sleeping, or waiting for "
            "something that never came), the most a notebook may: this cell was " + ("stopped." if ran else "not run."))


def waited_note(where: str) -> str:
    """Returns the note for the instructor (the autograde summary's suspicious list) on a unit ended
    because its code waited without computing for the whole allowance: rarely a slip (a sleep left
    in), often code that holds a grading worker on purpose, computing a little now and then."""
    return (f"{where} waited without computing for the unit's whole allowance: a sleep left in the code, or code "
            "that holds a grading worker on purpose (computing a little now and then); graded on what finished")


def notebook_limit_message(seconds: float, *, ran: bool) -> str:
    """Returns what a student is told about a cell stopped or skipped at the notebook's limit."""
    return (f"The notebook ran past its time limit ({seconds:g} seconds of CPU time in all): this cell was "
            + ("stopped." if ran else "not run."))


SOCKET_ROOM = 107  # bytes a unix socket's path may hold (sun_path, less its closing NUL)


def kernel_folder() -> Path:
    """Makes a sandboxed kernel's private folder (its connection file, its unix sockets ``kernel-N``)
    in the temporary folder, or, where a socket's path there would be too long (a long TMPDIR), in
    /tmp or /var/tmp, named as a re-check's copies are (``grader.recheck.unit_scratch_prefix``) so
    that a later run removes it if this process is killed. Raises OSError where no place is short enough."""
    import tempfile

    from grader.recheck import unit_scratch_prefix

    tried = []
    for base, prefix in ((None, "k-"), ("/tmp", unit_scratch_prefix()), ("/var/tmp", unit_scratch_prefix())):
        folder = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
        if len(os.fsencode(folder / "kernel-9999")) <= SOCKET_ROOM:
            return folder
        folder.rmdir()
        tried.append(str(folder.parent))
    raise OSError(f"no folder has a path short enough for a kernel's sockets ({SOCKET_ROOM} bytes): "
                  f"tried {', '.join(tried)}; set TMPDIR to a shorter one")


def stop_spares() -> None:
    """Shuts down the spare kernels this process started ahead (its grading is over)."""
    for name in list(_SPARES):
        km = _SPARES.pop(name)
        try:
            run_sync(km.shutdown_kernel)(now=True)
        except Exception:
            pass


def spare_pids() -> set[str]:
    """The process ids of the spare kernels this process keeps ahead, as text."""
    return {str(km.provisioner.pid) for km in _SPARES.values() if getattr(km, "provisioner", None)}


atexit.register(stop_spares)


class SafeExecute(Execute):
    """nbgrader's Execute with CPU-time limits, kernel restarts, output capped as it streams in, a sandbox."""

    kernel_name = Unicode(KERNEL_NAME, help="Kernel to grade in (default: the memory-capped grading kernel).").tag(config=True)
    extra_arguments = List(["--HistoryManager.hist_file=:memory:"], help=Execute.extra_arguments.help).tag(config=True)
    max_output_bytes = Integer(200_000, help="Most output kept per cell while it runs (characters).").tag(config=True)
    restart_limit = Integer(3, help="Kernel restarts allowed per notebook before giving up.").tag(config=True)
    raise_on_iopub_timeout = Bool(False, help="A cell's last output that comes late, or not at all (a flood the grader "
                                  "dropped), is no error: the cell's reply has come.").tag(config=True)
    iopub_timeout = Integer(30, help="Seconds to wait for a cell's last output after its reply.").tag(config=True)
    startup_timeout = Integer(300, help="Seconds a kernel may take to start: on a busy machine it can take minutes, "
                              "which is never the submission's fault.").tag(config=True)
    spare_kernel = Bool(True, help="Start the next notebook's kernel while this one runs (not in a sandbox).").tag(config=True)
    more_to_come = Bool(True, help="Whether another notebook follows in this process: a spare kernel is started "
                        "only then (a grading worker sets it False for its last unit).").tag(config=True)
    shutdown_kernel = Unicode("immediate", help="How to stop a kernel after its notebook: it is thrown away, so at once.").tag(config=True)
    memory_mb = Integer(MEMORY_MB, help="Memory cap of the grading kernel (MB).").tag(config=True)
    notebook_timeout = Integer(0, help="CPU seconds a whole notebook's cells may use; 0: no limit.").tag(config=True)
    stall_timeout = Integer(STALL_SECONDS, help="Wall seconds a notebook's cells may spend waiting without computing "
                            "(sleeping, or waiting on something; not waiting for a core), in all: then the running cell "
                            "is stopped and the rest not run. A working cell is never stopped by the clock.").tag(config=True)
    run_after_last_test = Bool(False, help="Also run the cells after the last test cell (they cannot change a score).").tag(config=True)
    checks_apart = Bool(False, help="Leave the hidden checks to the re-check, which runs them apart from the notebook "
                        "(ttt-grader sets this: only where a re-check follows).").tag(config=True)
    sandboxed = Bool(False, help="Run the kernel in the unit's sandbox (grader.sandbox): its channels over unix sockets "
                     "in a private folder (ttt-grader sets this with the sandboxed kernelspec).").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        """Runs every code cell, recovering from dead or stopped kernels; returns (nb, resources)."""
        if km is None and self.spare_kernel and not self.sandboxed:
            km = self._take_spare()
        NotebookClient.__init__(self, nb, km)
        self.owns_km = True  # a spare kernel is ours to shut down, like one started here
        self.reset_execution_trackers()
        self._check_assign_resources(resources)
        self._done: list[int] = []
        self._restarts = 0
        self._broken = ""
        self._output_bytes: dict[int, int] = {}
        self._cpu_used = 0.0  # CPU seconds the notebook's cells have used so far
        self._idle = 0.0  # wall seconds its cells have spent idle (sleeping, waiting) so far
        self._last_test = len(nb.cells) if self.run_after_last_test else max(
            (i for i, c in enumerate(nb.cells) if c.cell_type == "code" and is_grade(c)), default=-1)
        try:
            with self.setup_kernel(**self._launch()):
                if self.spare_kernel and not self.sandboxed and self.more_to_come:
                    self._start_spare()
                reply = self.wait_for_reply(self.kc.kernel_info())
                self.nb.metadata["language_info"] = reply["content"]["language_info"]
                for index, cell in enumerate(self.nb.cells):
                    self.preprocess_cell(cell, resources, index)
        finally:
            self._forget_run_folders()
        self.set_widgets_metadata()
        return self.nb, self.resources

    def preprocess_cell(self, cell, resources, index):
        """Runs one cell under its CPU-time limit; a kernel that dies or is ended in it is replaced.
        Returns (cell, resources)."""
        if cell.cell_type != "code" or not cell.source.strip() or index > self._last_test:
            return cell, resources
        if self._broken:
            cell.outputs = [error_output("KernelNotRun", self._broken)]
            return cell, resources
        if self._left() == 0:
            cell.outputs = [error_output(NOTEBOOK_LIMIT, notebook_limit_message(self.notebook_timeout, ran=False))]
            return cell, resources
        self._output_bytes[index] = 0
        limit, at_notebook_limit = self._cell_limit()
        stopped = ""
        source = cell.source
        try:
            if self.checks_apart and is_test_cell(cell):
                cell.source = self._without_hidden_tests(cell)  # they run in the re-check: the kernel never sees them
            with self._watched(limit) as watch:
                cell = self.execute_cell(cell, index, store_history=True)
            stopped = watch.stopped
        except DeadKernelError:
            stopped = watch.stopped
            if not stopped:
                cell.outputs.append(error_output(
                    "KernelDied", "the kernel stopped while running this cell (os._exit, a crash, "
                    "or it ran out of memory); a fresh kernel ran the cells above again for the rest."))
                self._recover("the kernel died again")
                return cell, resources
            killed = True
        else:
            killed = False
        finally:
            cell.source = source
            self._cpu_used += watch.used
            self._idle += watch.idle
        if stopped:  # interrupted (the kernel left a KeyboardInterrupt), or ended: say plainly why
            cell.outputs = [o for o in cell.outputs if not (o.output_type == "error" and o.ename == "KeyboardInterrupt")]
            if stopped == "stall" or at_notebook_limit:  # the notebook's own limit: the cells after it are not run
                said = stall_message(self.stall_timeout, ran=True) if stopped == "stall" else \
                    notebook_limit_message(self.notebook_timeout, ran=True)
                cell.outputs.append(error_output(NOTEBOOK_LIMIT, said))
                self._broken = said.replace("was stopped.", "was not run.")
                return cell, resources
            cell.outputs.append(error_output("CellTimeoutError", timeout_message(limit) + (
                " It did not stop when interrupted: a fresh kernel ran the cells above again for the rest." if killed else "")))
            if killed:
                self._recover("a cell was stopped again")
        elif not is_test_cell(cell):
            self._done.append(index)  # run again after a restart (test cells only check: not them)
        return cell, resources

    def output(self, outs, msg, display_id, cell_index):
        """Appends an output unless the cell has already printed more than max_output_bytes."""
        if msg["msg_type"] in ("stream", "display_data", "execute_result") and self.max_output_bytes >= 0:
            content = msg["content"]
            size = len(content.get("text", "")) + sum(len(str(v)) for v in content.get("data", {}).values())
            used = self._output_bytes.get(cell_index, 0)
            self._output_bytes[cell_index] = used + size
            if used + size > self.max_output_bytes:
                if used <= self.max_output_bytes:
                    outs.append(v4.new_output("stream", name="stdout", text=(
                        f"\n... output truncated by the grader: more than {self.max_output_bytes} bytes ...\n")))
                return None
        return super().output(outs, msg, display_id, cell_index)

    def _without_hidden_tests(self, cell) -> str:
        """Returns a test cell's source with its hidden tests taken out (nbgrader's own ClearHiddenTests)."""
        import copy

        from nbgrader.preprocessors import ClearHiddenTests

        bare = copy.deepcopy(cell)
        ClearHiddenTests(config=self.config)._remove_hidden_test_region(bare)
        return bare.source

    # -- limits ----------------------------------------------------------------------------

    def _left(self) -> float | None:
        """CPU seconds the notebook may still use (0 when its limit is up), None without a limit."""
        return None if self.notebook_timeout <= 0 else max(0.0, self.notebook_timeout - self._cpu_used)

    def _cell_limit(self) -> tuple[float | None, bool]:
        """The next cell's CPU limit, and whether it is the notebook's limit (which comes first)."""
        cell = float(self.timeout) if self.timeout and self.timeout > 0 else None
        left = self._left()
        if left is None or (cell is not None and cell <= left):
            return cell, False
        return left, True

    def _get_timeout(self, cell):
        """No wall-clock limit: the watchdog (``_watched``) stops a cell by its CPU time or when it stalls."""
        return None

    def _watched(self, cpu_seconds: float | None):
        """A context in which the kernel's process tree is watched: past `cpu_seconds` of CPU, or
        once the notebook's cells have waited ``stall_timeout`` seconds in all, the kernel is
        interrupted, and ended if it does not stop then. The context's ``stopped`` says why ("cpu", "stall" or "")."""
        from grader.sandbox import Tree

        return _Watch(Tree(self.km.provisioner.pid), cpu_seconds, max(0.0, self.stall_timeout - self._idle))

    # -- kernels ---------------------------------------------------------------------------

    async def _async_quietly(self, code: str):
        msg_id = await ensure_async(self.kc.execute(code, silent=True, store_history=False, allow_stdin=False))
        return await self.async_wait_for_reply(msg_id)

    _quietly = run_sync(_async_quietly)

    def _recover(self, why: str) -> None:
        """Replaces the kernel and quietly runs again the cells that ran well before (each under
        its CPU limit, as the first time)."""
        self._restarts += 1
        if self._restarts > self.restart_limit:
            self._broken = f"not run: {why} after {self.restart_limit} restarts"
            return
        self._cleanup_kernel()
        self.km = self.create_kernel_manager()
        self.start_new_kernel(**self._launch())
        self.start_new_kernel_client()
        try:
            for index in self._done:
                with self._watched(self._cell_limit()[0]) as watch:
                    self._quietly(self.nb.cells[index].source)
                if watch.stopped:
                    raise DeadKernelError(f"cell {index} was stopped again")
        except DeadKernelError:
            self._broken = f"not run: {why} while the cells above were run again"

    def create_kernel_manager(self):
        """Returns a kernel manager; in a sandbox, one whose channels are unix sockets in a
        folder of the kernel's own (the only folder of the grader's the sandbox binds)."""
        km = super().create_kernel_manager()
        km.client = functools.partial(_bounded_client, km.client)
        if self.sandboxed:
            folder = kernel_folder()
            self._run_folders.append(folder)
            km.transport = "ipc"
            km.ip = str(folder / "kernel")
            km.connection_file = str(folder / "kernel.json")
        return km

    @property
    def _run_folders(self) -> list:
        if "_folders" not in self.__dict__:
            self.__dict__["_folders"] = []
        return self.__dict__["_folders"]

    def _forget_run_folders(self) -> None:
        """Removes the kernels' private folders (connection files, sockets, the copy of the unit's folder the
        kernel worked in, whatever its code left there) once the notebook is done."""
        from grader.sandbox import remove_folder

        for folder in self._run_folders:
            try:
                remove_folder(folder)
            except OSError:
                pass
        self._run_folders.clear()

    def _launch(self) -> dict:
        """The keyword arguments a kernel is started with: its environment, when the checks run apart."""
        return {"env": os.environ | {APART_ENV: "1"}} if self.checks_apart else {}

    def _take_spare(self):
        km = _SPARES.pop(self.kernel_name, None)
        if km is not None and run_sync(km.is_alive)():
            return km
        return None

    def _start_spare(self) -> None:
        if self.kernel_name in _SPARES:
            return
        km = self.kernel_manager_class(kernel_name=self.kernel_name, config=self.config)
        try:
            run_sync(km.start_kernel)(extra_arguments=list(self.extra_arguments), **self._launch())
        except Exception as error:  # no spare: the next notebook starts its own kernel
            self.log.warning("Could not start a spare kernel: %s", error)
            return
        _SPARES[self.kernel_name] = km


def _bounded_client(make_client, **kwargs):
    """Returns a kernel client whose sockets take no message bigger than MAX_MESSAGE_BYTES (a bigger
    one, 200 MB printed at once, drops the connection instead of filling the grader's memory) and
    let at most MAX_MESSAGES_WAITING wait to be read (a flood beyond them is dropped): a cell's
    output may be lost that way, nothing else."""
    client = make_client(**kwargs)
    client.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
    client.context.setsockopt(zmq.RCVHWM, MAX_MESSAGES_WAITING)
    return client


class _Watch:
    """Watches a kernel's process tree while a cell runs (a context manager). Past its CPU limit,
    or once the notebook has spent its allowance of waiting (wall time its processes chose to wait:
    slept, or waited on something other than a core; ``grader.processes.ChosenWait``), the kernel
    is interrupted; if the cell still does not end, the kernel is ended (the cell's client then sees
    it dead). ``stopped`` says why ("cpu", "stall" or ""), ``used`` the CPU seconds and ``idle`` the
    seconds of waiting the cell used."""

    POLL = 0.25  # seconds between looks at the kernel's CPU time

    def __init__(self, tree, cpu_seconds: float | None, idle_seconds: float) -> None:
        from grader.processes import ChosenWait

        self.tree, self.cpu_seconds, self.idle_seconds = tree, cpu_seconds, idle_seconds
        self.stopped, self.used, self.idle = "", 0.0, 0.0
        self._waits = ChosenWait(tree)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> "_Watch":
        self._start = self.tree.cpu_seconds()
        self._waits.begin()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()
        if self.tree.alive():
            self.used = max(self.used, self.tree.cpu_seconds() - self._start)
            self.idle = max(self.idle, self._waits.end())
        else:
            self.idle = max(self.idle, self._waits.end(look=False))

    def _watch(self) -> None:
        why = self._until_limit()
        if not why:
            return
        self.stopped = why
        _interrupt(self.tree)
        from grader.sandbox import run_limited

        if run_limited(self.tree, cpu_seconds=GRACE_CPU, stall_seconds=GRACE_STALL, done=self._done.is_set) is not None:
            self.tree.kill()

    def _until_limit(self) -> str:
        """Waits until the cell ends (returns "") or reaches a limit (returns "cpu" or "stall")."""
        while not self._done.wait(self.POLL):
            if not self.tree.alive():
                return ""
            self.used = self.tree.cpu_seconds() - self._start
            if self.cpu_seconds is not None and self.used > self.cpu_seconds:
                return "cpu"
            self.idle = self._waits.look()
            if self.idle >= self.idle_seconds:
                return "stall"
        return ""


def _interrupt(tree) -> None:
    """Sends SIGINT to the kernel process in `tree` (the one running ``grader.kernel`` or ipykernel)."""
    import psutil

    for pid in tree.processes():
        try:
            command = " ".join(psutil.Process(pid).cmdline())
        except psutil.Error:
            continue
        if "grader.kernel" in command or "ipykernel" in command:
            try:
                os.kill(pid, signal.SIGINT)
            except OSError:
                pass
