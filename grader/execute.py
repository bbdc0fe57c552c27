"""``SafeExecute``: nbgrader's Execute preprocessor, hardened for hostile submissions.

It runs a notebook in the grading kernel (``grader.kernel``, memory-capped) and adds what
stock nbgrader lacks when a submission misbehaves:

- a kernel that dies in a cell (``os._exit``, a crash, out of memory) or hangs past the cell
  timeout without answering the interrupt is replaced by a fresh one; the cells that ran
  before (test cells apart) are run again, quietly, so only the cells that depend on the
  broken one lose marks.
  The broken cell gets an error output that says what happened (a test cell with an error
  scores zero). After ``restart_limit`` restarts the remaining cells get an error output
  instead of running.
- output is capped per cell while it streams in (``max_output_bytes``), so a cell that
  prints without end cannot fill the grader's memory; nbgrader's LimitOutput trims further.
- a notebook's cells may run ``notebook_timeout`` seconds in all (wall time): a cell still running
  then is stopped, and the cells after it are not run (error ``NotebookTimeLimit``), so a
  notebook whose every cell sleeps just under the cell limit cannot hold a worker for long.
- a spare kernel is started while a notebook runs, so the next notebook does not wait for one.
- the cells after the last test cell are not run (``run_after_last_test``): they cannot change
  a score, and in the lessons they are the demonstrations (plots, tournaments, widgets).
- with ``checks_apart``, the hidden checks are left to the re-check (``grader.recheck``): the
  kernel's environment says so (``grader.kernel.APART_ENV``).
"""

from __future__ import annotations

import atexit
import os
import time

from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbformat import v4
from nbgrader.preprocessors import Execute
from nbgrader.utils import is_grade, is_solution
from traitlets import Bool, Integer, List, Unicode

from grader.kernel import APART_ENV, DEFAULT_MEMORY_MB, KERNEL_NAME

_SPARES: dict[str, AsyncKernelManager] = {}  # kernel name -> a started kernel nobody uses yet
MORE_TO_COME = [True]  # set to [False] by a worker before its last notebook: no spare then


def error_output(ename: str, evalue: str):
    """Returns an nbformat error output whose traceback is just ``ename: evalue``."""
    return v4.new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


NOTEBOOK_LIMIT = "NotebookTimeLimit"  # the error of cells stopped or skipped at the notebook's limit


def timeout_message(seconds: int) -> str:
    """Returns what a student is told about a cell stopped at the time limit."""
    return f"This cell timed out: it was still running after {seconds} seconds (the time limit for a cell) and was stopped."


def notebook_limit_message(seconds: int, *, ran: bool) -> str:
    """Returns what a student is told about a cell stopped or skipped at the notebook's limit."""
    return (f"The notebook ran past its time limit ({seconds} seconds in all): this cell was "
            + ("stopped." if ran else "not run."))


def _stop_spares() -> None:
    for name in list(_SPARES):
        km = _SPARES.pop(name)
        try:
            run_sync(km.shutdown_kernel)(now=True)
        except Exception:
            pass


atexit.register(_stop_spares)


class SafeExecute(Execute):
    """nbgrader's Execute with kernel restarts, output capped as it streams in, spare kernels."""

    kernel_name = Unicode(KERNEL_NAME, help="Kernel to grade in (default: the memory-capped grading kernel).").tag(config=True)
    extra_arguments = List(["--HistoryManager.hist_file=:memory:"], help=Execute.extra_arguments.help).tag(config=True)
    max_output_bytes = Integer(1_000_000, help="Most output kept per cell while it runs (bytes).").tag(config=True)
    restart_limit = Integer(3, help="Kernel restarts allowed per notebook before giving up.").tag(config=True)
    startup_timeout = Integer(300, help="Seconds a kernel may take to start: on a busy machine it can take minutes, "
                              "which is never the submission's fault.").tag(config=True)
    spare_kernel = Bool(True, help="Start the next notebook's kernel while this one runs.").tag(config=True)
    shutdown_kernel = Unicode("immediate", help="How to stop a kernel after its notebook: it is thrown away, so at once.").tag(config=True)
    memory_mb = Integer(DEFAULT_MEMORY_MB, help="Memory cap of the grading kernel (MB).").tag(config=True)
    notebook_timeout = Integer(0, help="Seconds (wall time) a whole notebook may run; 0: no limit.").tag(config=True)
    run_after_last_test = Bool(False, help="Also run the cells after the last test cell (they cannot change a score).").tag(config=True)
    checks_apart = Bool(False, help="Leave the hidden checks to the re-check, which runs them apart from the notebook "
                        "(ttt-grader sets this: only where a re-check follows).").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        """Runs every code cell, recovering from dead or hung kernels; returns (nb, resources)."""
        if km is None and self.spare_kernel:
            km = self._take_spare()
        NotebookClient.__init__(self, nb, km)
        self.owns_km = True  # a spare kernel is ours to shut down, like one started here
        self.reset_execution_trackers()
        self._check_assign_resources(resources)
        self._done: list[int] = []
        self._restarts = 0
        self._broken = ""
        self._output_bytes: dict[int, int] = {}
        self._ends = None  # set once the kernel is ready: the notebook's limit counts its cells' time
        self._last_test = len(nb.cells) if self.run_after_last_test else max(
            (i for i, c in enumerate(nb.cells) if c.cell_type == "code" and is_grade(c)), default=-1)
        with self.setup_kernel(**self._launch()):
            if self.spare_kernel and MORE_TO_COME[0]:
                self._start_spare()
            reply = self.wait_for_reply(self.kc.kernel_info())
            self.nb.metadata["language_info"] = reply["content"]["language_info"]
            self._ends = time.monotonic() + self.notebook_timeout if self.notebook_timeout > 0 else None  # cells only
            for index, cell in enumerate(self.nb.cells):
                self.preprocess_cell(cell, resources, index)
        self.set_widgets_metadata()
        return self.nb, self.resources

    def preprocess_cell(self, cell, resources, index):
        """Runs one cell; a kernel that dies or hangs in it is replaced. Returns (cell, resources)."""
        if cell.cell_type != "code" or not cell.source.strip() or index > self._last_test:
            return cell, resources
        if self._broken:
            cell.outputs = [error_output("KernelNotRun", self._broken)]
            return cell, resources
        if self._left() == 0:
            cell.outputs = [error_output(NOTEBOOK_LIMIT, notebook_limit_message(self.notebook_timeout, ran=False))]
            return cell, resources
        self._output_bytes[index] = 0
        try:
            cell = self.execute_cell(cell, index, store_history=True)
        except DeadKernelError:
            cell.outputs.append(error_output(
                "KernelDied", "the kernel stopped while running this cell (os._exit, a crash, "
                "or it ran out of memory); a fresh kernel ran the cells above again for the rest."))
            self._recover("the kernel died again")
        except CellTimeoutError:
            if self._left() == 0:
                cell.outputs.append(error_output(NOTEBOOK_LIMIT, notebook_limit_message(self.notebook_timeout, ran=True)))
                self._broken = notebook_limit_message(self.notebook_timeout, ran=False)
                return cell, resources
            cell.outputs.append(error_output(
                "CellTimeoutError", f"This cell timed out: it ran past the time limit ({self.timeout} seconds) and did "
                "not stop when interrupted. A fresh kernel ran the cells above again for the rest."))
            self._recover("the kernel hung again")
        else:
            timed_out = any(o.get("ename") == "CellTimeoutError" for o in cell.outputs if o.output_type == "error")
            if timed_out:  # nbclient leaves a KeyboardInterrupt and an empty CellTimeoutError: say it plainly
                cell.outputs = [o for o in cell.outputs if not (
                    o.output_type == "error" and o.ename in ("KeyboardInterrupt", "CellTimeoutError"))]
                cell.outputs.append(
                    error_output(NOTEBOOK_LIMIT, notebook_limit_message(self.notebook_timeout, ran=True))
                    if self._left() == 0 else error_output("CellTimeoutError", timeout_message(self.timeout)))
            if not timed_out and not (is_grade(cell) and not is_solution(cell)):
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

    def _left(self) -> float | None:
        """Seconds the notebook may still run (0 when its limit is up), None without a limit."""
        return None if self._ends is None else max(0.0, self._ends - time.monotonic())

    def _get_timeout(self, cell):
        """The cell's time limit, cut short where the notebook's limit comes first."""
        timeout = super()._get_timeout(cell)
        left = self._left()
        if left is None:
            return timeout
        return max(1, min(timeout, int(left) + 1) if timeout else int(left) + 1)

    # -- kernels ---------------------------------------------------------------------------

    async def _async_quietly(self, code: str):
        msg_id = await ensure_async(self.kc.execute(code, silent=True, store_history=False, allow_stdin=False))
        return await self.async_wait_for_reply(msg_id)

    _quietly = run_sync(_async_quietly)

    def _recover(self, why: str) -> None:
        """Replaces the kernel and quietly runs again the cells that ran well before."""
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
                if self._quietly(self.nb.cells[index].source) is None:
                    raise CellTimeoutError(f"cell {index} timed out again")
        except (DeadKernelError, CellTimeoutError):
            self._broken = f"not run: {why} while the cells above were run again"

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
