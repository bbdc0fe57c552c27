"""A grading worker: a process that grades one submission of one lesson at a time, on this
machine (a pool worker of ``grader.autograde``) or on a Dask worker (``grader.cluster``) alike.

``grading_environment`` is the run's environment, set once in the process that starts the
workers: the kernels' private folders, the course read-only, the run's mark on every process it
starts, the grading kernelspec. ``setup_worker`` gives a worker its staging folder, its own copy
of the gradebook and nbgrader's API reading the lessons from the run's snapshot; ``grade_unit``
stages a submission (``grader.stage``), has nbgrader autograde it (the notebook runs in the
sandboxed kernel, then ``grader.preprocessors.Recheck`` re-checks it, then nbgrader scores it
once), reads what went wrong from the autograded notebooks and stops every process the unit
started. The results go back to the one writer, ``grader.gradebook``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import warnings
from pathlib import Path

from grader.course import CELL_TIMEOUT
from grader.layout import STATE, coursedir_of, in_flight, run_folder, work_folder
from grader.processes import RUN_ENV, WORKER_ENV, alive, die_with_parent, stop_processes, subreaper
from grader.recheck import UNIT_SCRATCH, unit_scratch_prefix

RUN_SCRATCH = "ttt-grader-run-"  # a grading run's scratch folder: ttt-grader-run-PID-..., PID the run's main process

# jupyter_client's words when a kernel does not answer its first request: on a loaded machine
# the kernel can be slow to start, so the unit is graded again rather than graded blank
KERNEL_NOT_STARTED = ("Kernel died before replying to kernel_info", "Kernel didn't respond")
SERIOUS = {"KernelDied", "CellTimeoutError", "NotebookTimeLimit", "KernelNotRun", "MemoryError",
           "SyntaxError", "IndentationError", "SystemExit", "RecursionError"}


# -- the run's environment ---------------------------------------------------------------------


def grading_environment(course: Path, *, scratch: Path, run: str, memory_mb: int, sandbox: bool) -> dict:
    """Sets this process's environment for grading ``course`` (inherited by the workers it starts
    and their kernels): kernels in private folders under ``scratch``, the course read-only, ``run``
    marking every process of the run, the grading kernelspec (in the sandbox unless ``sandbox`` is
    False, its memory capped at ``memory_mb``). Returns what it replaced, for
    ``restore_environment``."""
    from grader.kernel import KERNELS_ENV, READ_ONLY_ENV, use_kernelspecs, write_kernelspec

    wanted = {KERNELS_ENV: str(scratch), READ_ONLY_ENV: str(course), RUN_ENV: run,
              "JUPYTER_RUNTIME_DIR": str(Path(scratch) / "runtime")}
    saved = {name: os.environ.get(name) for name in [*wanted, "JUPYTER_PATH"]}
    os.environ.update(wanted)
    use_kernelspecs(write_kernelspec(Path(course) / STATE / "jupyter", memory_mb=memory_mb, sandboxed=sandbox))
    return saved


def run_scratch() -> Path:
    """Makes a grading run's scratch folder in the temporary folder (the kernels' private folders,
    the workers' temporary files and the re-check's copies of unit folders go inside), named
    ``ttt-grader-run-PID-...`` after this process, so that a later run can tell a dead run's
    leftovers (``remove_dead_scratch``)."""
    folder = Path(tempfile.mkdtemp(prefix=f"{RUN_SCRATCH}{os.getpid()}-"))
    folder.chmod(0o711)  # others may pass through (a sandbox binds folders inside), never list it
    return folder


def remove_dead_scratch(where: Path | None = None) -> list[Path]:
    """Removes (``grader.sandbox.remove_folder``) the scratch folders of grading runs and re-checks whose process is gone (killed,
    so they could not remove them) from ``where`` (default: the temporary folder, and /tmp and /var/tmp,
    where kernels' folders go when its path is too long: ``grader.execute.kernel_folder``); returns them.
    A folder whose process still runs is left alone; as an ordinary user, so is another user's."""
    names = re.compile(rf"^(?:{re.escape(RUN_SCRATCH)}|{re.escape(UNIT_SCRATCH)})(\d+)-")
    removed = []
    # a kernel's folder goes to /tmp or /var/tmp when the temporary folder's path is too long for its sockets
    places = [where] if where else dict.fromkeys([tempfile.gettempdir(), "/tmp", "/var/tmp"])
    for place in places:
        if not os.path.isdir(place):
            continue
        removed += _remove_dead_in(place, names)
    return removed


def _remove_dead_in(place, names: re.Pattern) -> list[Path]:
    """``remove_dead_scratch`` in one folder."""
    from grader.sandbox import remove_folder

    removed = []
    with os.scandir(place) as entries:
        for entry in entries:
            found = names.match(entry.name)
            if not found or alive(found.group(1)) or not entry.is_dir(follow_symlinks=False):
                continue
            if os.geteuid() != 0 and entry.stat(follow_symlinks=False).st_uid != os.geteuid():
                continue
            with contextlib.suppress(OSError):  # what could not go now, a later run tries again
                remove_folder(Path(entry.path))
            removed.append(Path(entry.path))
    return removed


def restore_environment(saved: dict) -> None:
    """Puts back the environment ``grading_environment`` replaced."""
    for name, value in saved.items():
        os.environ.pop(name, None) if value is None else os.environ.__setitem__(name, value)


# -- setting up ---------------------------------------------------------------------------------

_WORKER: dict = {}  # this process's grading state, set by setup_worker


def init_pool_worker(course: str, settings) -> None:
    """Sets up a pool worker: it dies with its parent, leaves Ctrl-C to it (the parent stops
    the workers by exiting), ends at once on SIGTERM and SIGHUP (not by the parent's handler,
    which it inherits), then ``setup_worker``."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    die_with_parent()
    setup_worker(course, settings)


def setup_worker(course: str, settings) -> None:
    """Sets up this process to grade units: its staging folder, its own copy of the gradebook,
    nbgrader's API reading the lessons from the run's snapshot, the re-check in nbgrader's
    pipeline, as ``settings`` (``grader.nbconfig.Settings``) say over the course's own. The
    process adopts the processes its kernels leave behind (a subreaper, on Linux), so that it can
    stop them when each unit ends."""
    from multiprocessing.util import Finalize

    from nbgrader.apps import NbGraderAPI

    from grader.gradebook import copy_database
    from grader.kernel import KERNELS_ENV
    from grader.nbconfig import grading_config

    subreaper()
    os.environ[WORKER_ENV] = str(os.getpid())
    if os.environ.get(KERNELS_ENV):  # jupyter_client's connection files too: in the run's scratch folder
        tempfile.tempdir = os.path.join(os.environ[KERNELS_ENV], f"tmp-{os.getpid()}")
        os.makedirs(tempfile.tempdir, exist_ok=True)
    Finalize(None, _stop_kernels, args=(True,), exitpriority=10)
    warnings.filterwarnings("ignore", module="nbgrader")  # nbgrader's own SQLAlchemy warnings
    course_path = Path(course)
    work = work_folder(course_path) / str(os.getpid())
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    config = grading_config(course_path, settings)
    snapshot = run_folder(course_path)
    config.CourseDirectory.source_directory = str(snapshot.relative_to(course_path) / "source")
    config.CourseDirectory.release_directory = str(snapshot.relative_to(course_path) / "release")
    master = coursedir_of(course_path, config)
    copy_database(Path(master.db_url.removeprefix("sqlite:///")), work / "gradebook.db")
    relative = work.relative_to(course_path)
    config.CourseDirectory.submitted_directory = str(relative / "submitted")
    config.CourseDirectory.autograded_directory = str(relative / "autograded")
    config.CourseDirectory.db_url = f"sqlite:///{work / 'gradebook.db'}"
    # the hidden checks run in the re-check only, apart from the notebook, against the run's own lessons
    config.SafeExecute.checks_apart = True
    config.SafeExecute.sandboxed = settings.sandbox
    config.Recheck.lessons = str(snapshot / "source")
    config.Recheck.timeout = float(config.Execute.timeout if "timeout" in config.Execute else CELL_TIMEOUT)
    config.Recheck.memory_mb = int(config.SafeExecute.memory_mb) if "memory_mb" in config.SafeExecute else 0
    config.Recheck.sandboxed = settings.sandbox
    if "stall_timeout" in config.SafeExecute:  # the unit's allowance of chosen waits, in the re-check as in the kernel
        config.Recheck.stall_timeout = float(config.SafeExecute.stall_timeout)
    coursedir = coursedir_of(course_path, config)
    _WORKER.update(course=course_path, master=master, coursedir=coursedir,
                   api=NbGraderAPI(coursedir=coursedir, config=config))


# -- grading one unit ---------------------------------------------------------------------------


def grade_unit(student: str, lesson: str, *, last: bool = False) -> dict:
    """Grades one submission in this worker (``last``: no kernel is started ahead for a next
    one); returns its grades, problems, output folder and the fingerprint of what was graded,
    or an ``error`` saying why it could not be graded (then the next run grades it again).
    Every process its kernels and its re-check started is stopped before it returns."""
    from grader.gradebook import read_grades
    from grader.stage import stage

    w = _WORKER
    coursedir, api = w["coursedir"], w["api"]
    api.config.SafeExecute.more_to_come = not last
    flight = in_flight(w["course"]) / f"{os.getpid()}.json"
    flight.write_text(json.dumps([student, lesson]))
    staged = Path(coursedir.format_path(coursedir.submitted_directory, student, lesson))
    out = Path(coursedir.format_path(coursedir.autograded_directory, student, lesson))
    unit = {"student": student, "lesson": lesson}
    shutil.rmtree(out, ignore_errors=True)
    try:
        problems, unit["fingerprint"] = stage(w["course"], student, lesson, into=staged, coursedir=w["master"])
        result = api.autograde(lesson, student, force=True, create=True)
        for _ in range(2):  # a kernel that did not start is the machine's trouble, never the submission's
            if not _no_kernel(result):
                break
            shutil.rmtree(out, ignore_errors=True)
            result = api.autograde(lesson, student, force=True, create=True)
        if _no_kernel(result):
            # still no kernel: the unit fails, to be graded on the next run; a blank grade would be a lost one
            return {**unit, "error": f"the grading kernel did not start, three times ({_failure(result)}); run autograde again"}
        if not result["success"]:
            why = f"nbgrader could not grade the submission ({_failure(result)})"
            problems, _ = stage(w["course"], student, lesson, into=staged, coursedir=w["master"], blank_all=why)
            shutil.rmtree(out, ignore_errors=True)
            result = api.autograde(lesson, student, force=True, create=True)
            if not result["success"]:
                return {**unit, "error": why}
        report = read_report(out)
        if report["unserved"]:  # the machine could not start a sandbox: graded again by the next run, never failed
            return {**unit, "error": f"the sandbox could not be started ({report['unserved'][-200:]}); run autograde again"}
        if report["failed"]:
            return {**unit, "error": f"the re-check failed ({report['failed']}); run autograde again"}
    finally:
        _stop_kernels()
        flight.unlink(missing_ok=True)
    return {**unit, "problems": list(dict.fromkeys(problems + report["problems"])),
            "grades": read_grades(coursedir.db_url, lesson, student), "suspicious": report["suspicious"], "out": str(out)}


def read_report(folder: Path) -> dict:
    """Reads each autograded notebook in ``folder`` once: what went wrong while it ran (serious
    errors, cells that timed out, output cut short) and what the re-check left in its metadata
    (``grader.preprocessors.Recheck``), which is taken out of the notebook. Returns
    {"problems", "suspicious": [lines], "unserved", "failed": text}."""
    import nbformat
    from nbgrader.utils import is_grade

    from grader.execute import NOTEBOOK_LIMIT, waited_note
    from grader.preprocessors import RECHECK_REPORT
    from grader.remote import STALLED_WORDS

    report = {"problems": [], "suspicious": [], "unserved": "", "failed": ""}
    for path in sorted(Path(folder).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for index, cell in enumerate(nb.cells):
            where = cell.metadata.get("nbgrader", {}).get("grade_id") or f"#{index}"
            for output in cell.get("outputs") or []:  # a markdown cell may carry "outputs": null
                if output.output_type == "error" and output.ename in SERIOUS:
                    message = (output.evalue or "").strip().splitlines()[:1]
                    if output.ename == "CellTimeoutError":
                        scored = "scored zero: it timed out" if is_grade(cell) else "timed out"
                        report["problems"].append(f"cell {where} {scored}" + (f" ({message[0][:160]})" if message else ""))
                    else:
                        report["problems"].append(f"cell {where}: {output.ename}" + (f": {message[0][:160]}" if message else ""))
                    stopped = (output.evalue or "").strip().endswith("stopped.")  # the cell it ended in, not those after
                    if output.ename == NOTEBOOK_LIMIT and STALLED_WORDS in (output.evalue or "") and stopped:
                        report["suspicious"].append(waited_note(f"cell {where}"))
                elif output.output_type == "stream" and "output truncated" in output.text.lower():
                    report["problems"].append(f"cell {where}: output truncated")
        found = nb.metadata.pop(RECHECK_REPORT, None)
        if found is not None:
            report["problems"] += found.get("problems", [])
            report["suspicious"] += found.get("suspicious", [])
            report["unserved"] = report["unserved"] or found.get("unserved", "")
            report["failed"] = report["failed"] or found.get("failed", "")
            nbformat.write(nb, path)
    report["problems"] = list(dict.fromkeys(report["problems"]))
    report["suspicious"] = list(dict.fromkeys(report["suspicious"]))
    return report


def _failure(result: dict) -> str:
    """Returns the last exception nbgrader logged, as one line."""
    text = (result.get("log") or "") + "\n" + (result.get("error") or "")
    found = [m.group(0).strip() for m in re.finditer(r"^\s*[\w.]*(Error|Exception|Exit)\b:?.*$", text, re.M)
             if "NbGraderException" not in m.group(0)]
    return (found[-1] if found else "unknown error")[:200]


def kernel_did_not_start(text: str) -> bool:
    """True if `text` (an error, a log) says a kernel did not answer its first request."""
    return any(words in text for words in KERNEL_NOT_STARTED)


def _no_kernel(result: dict) -> bool:
    """True if nbgrader could not grade because the kernel did not answer its first request."""
    return not result["success"] and kernel_did_not_start(_failure(result))


# -- the processes a unit leaves behind --------------------------------------------------------


def _stop_kernels(spare_too: bool = False) -> None:
    """Stops every process this worker's kernels started (detached ones included: they carry
    the kernel's variables, and orphans come back to this subreaper), and the kernels
    themselves but the spare one (``spare_too``: that as well), and removes their private folders."""
    from grader import execute
    from grader.kernel import KERNEL_ENV, KERNELS_ENV
    from grader.sandbox import remove_folder

    if spare_too:
        execute.stop_spares()
    spare = execute.spare_pids()
    me = str(os.getpid())
    stop_processes(lambda pid, ppid, env: str(pid) not in spare and env.get(KERNEL_ENV) not in spare
                   and (env.get(WORKER_ENV) == me or str(ppid) == me))
    # this worker's re-check copies, their sandboxes gone
    leftovers = list(Path(tempfile.gettempdir()).glob(f"{unit_scratch_prefix()}*"))
    kernels = os.environ.get(KERNELS_ENV)
    if kernels:
        leftovers += [folder for folder in Path(kernels).glob("kernel-*")
                      if folder.name.removeprefix("kernel-") not in spare and not alive(folder.name.removeprefix("kernel-"))]
    for folder in leftovers:
        with contextlib.suppress(OSError):  # whatever the unit's code left in them (grader.sandbox.remove_folder)
            remove_folder(folder)
