"""Autograde on a Dask cluster: ``ttt-grader autograde --cluster ADDRESS``.

A class too big for one machine is graded by the workers of a Dask distributed cluster
(``pip install 'ttt[cluster]'``), with nothing shared but the network. The instructor's
machine packs the course once per run into a *course bundle* (``nbgrader_config.py``, the
run's snapshot of the lessons and a gradebook holding the lessons and no students) and sends
it to the cluster as one task, which Dask keeps on the workers and
recomputes if it is lost. Each unit (one student's submission of one lesson) is one more
task, ``grade_remote``: it carries the submission's files as bytes, and a worker grades it
with the grading worker's own code (``grader.worker``: ``setup_worker``, ``grade_unit``) in a copy of the
course unpacked from the bundle, exactly as a local worker does, and returns the autograded
notebooks as bytes, with the grades and problems. The instructor's machine stays the one
writer: ``grader.gradebook.commit`` records each result in the gradebook, as for a local run,
so reruns skip what is graded and unchanged.

A worker lost mid-task costs a retry: Dask's scheduler gives the task to another worker, and
grading a unit again gives the same grade. A unit whose workers keep dying (Dask gives up
after ``distributed.scheduler.allowed-failures`` deaths) is graded again alone at the end of
the run, and reported as not graded if it kills its worker then too, as in a local run.

A Dask worker grades one unit at a time per process (start workers with ``--nthreads 1``
and as many processes as cores, ``--nworkers N``).
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import zipfile
from pathlib import Path

from grader.gradebook import Outcome, commit, copy_database
from grader.layout import run_folder, work_folder

INSTALL = "pip install 'ttt[cluster]'"
WAIT_FOR_WORKERS = 120  # seconds a run waits for the cluster's first worker


def _distributed():
    """Returns the ``distributed`` module, or raises RuntimeError saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise RuntimeError(f"--cluster needs Dask's distributed scheduler: {INSTALL}") from None
    return distributed


# -- on the instructor's machine ---------------------------------------------------------------


def slim_gradebook(source: Path, target: Path) -> None:
    """Copies the gradebook at ``source`` to ``target`` with its lessons (assignments,
    notebooks, cells) and without its students, their submissions and grades."""
    import warnings

    from nbgrader import api

    copy_database(source, target)
    with warnings.catch_warnings(), api.Gradebook(f"sqlite:///{target}") as gb:
        warnings.simplefilter("ignore")  # nbgrader's own SQLAlchemy warnings
        for model in (api.Grade, api.Comment, api.SubmittedNotebook, api.SubmittedAssignment, api.Student):
            gb.db.query(model).delete(synchronize_session=False)
        gb.db.commit()
    db = sqlite3.connect(target)
    db.execute("VACUUM")  # the rows are gone, and now the space they took
    db.close()


def course_bundle(course: Path, coursedir) -> bytes:
    """Returns what a worker needs of the course to grade it, as a zip file's bytes: its
    ``nbgrader_config.py``, the run's snapshot of the lessons (``.ttt-grader/run/``, taken by
    ``autograde`` when the run starts) and a gradebook with the lessons and no students."""
    root = Path(coursedir.root)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle, tempfile.TemporaryDirectory() as scratch:
        if (root / "nbgrader_config.py").is_file():
            bundle.write(root / "nbgrader_config.py", "nbgrader_config.py")
        for path in sorted(run_folder(root).rglob("*")):
            if path.is_file():
                bundle.write(path, str(path.relative_to(root)))
        slim_gradebook(Path(coursedir.db_url.removeprefix("sqlite:///")), Path(scratch) / "gradebook.db")
        bundle.write(Path(scratch) / "gradebook.db", "gradebook.db")
    return buffer.getvalue()


def submission_files(coursedir, student: str, lesson: str) -> dict[str, bytes]:
    """Returns {path inside the submission folder: bytes} of a student's submission."""
    folder = Path(coursedir.format_path(coursedir.submitted_directory, student, lesson))
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".ipynb_checkpoints" not in p.parts}


def _write_files(folder: Path, files: dict[str, bytes]) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)


def _keep(data: bytes) -> bytes:
    """A task whose result is its argument: Dask keeps the course bundle on the workers."""
    return data


def _version() -> str:
    from importlib.metadata import version

    return version("ttt")


def connect(address):
    """Returns a Dask Client connected to the scheduler at ``address`` (or to a Dask cluster
    object, such as dask-jobqueue's SLURMCluster) once a worker has joined; raises RuntimeError
    saying what is wrong when it cannot."""
    distributed = _distributed()
    try:
        client = distributed.Client(address, set_as_default=False)  # waits distributed.comm.timeouts.connect
    except (OSError, TimeoutError, ValueError) as error:
        raise RuntimeError(f"could not reach the Dask scheduler at {address}: {error}") from None
    try:
        client.wait_for_workers(1, timeout=WAIT_FOR_WORKERS)
    except (TimeoutError, OSError):
        client.close()
        raise RuntimeError(f"no Dask worker joined the scheduler at {address} within {WAIT_FOR_WORKERS} s "
                           "(start some with `dask worker ADDRESS --nthreads 1`)") from None
    ours = _version()
    try:
        theirs = client.run(_version)
    except Exception as error:  # a worker without ttt cannot even unpickle the function
        client.close()
        raise RuntimeError(f"the Dask workers at {address} cannot run ttt-grader ({type(error).__name__}: {error}); "
                           f"install this package on them: {INSTALL}") from None
    wrong = sorted(f"{worker} has {v}" for worker, v in theirs.items() if v != ours)
    if wrong:
        client.close()
        raise RuntimeError(f"the Dask workers must run ttt {ours}, as here: {'; '.join(wrong)}")
    return client


KILLED = ("the Dask workers grading this submission kept dying (by a cell that killed the grader's process?), "
          "again when it was graded alone; it was not graded")


def run_on_cluster(address, course: Path, coursedir, todo: list[tuple[str, str]], *, progress: bool,
                   settings) -> list[Outcome]:
    """Grades the units ``todo`` on the Dask cluster at ``address`` with the run's ``settings``
    (``grader.nbconfig.Settings``), committing each result as it comes back; returns their outcomes. A unit whose workers kept dying until Dask gave up on it is
    graded again at the end, alone on the cluster."""
    from tqdm import tqdm

    distributed = _distributed()
    from distributed.scheduler import KilledWorker

    landing = work_folder(course) / "cluster"  # results wait here to be committed
    client = connect(address)
    outcomes: list[Outcome] = []
    units = {}  # future -> (student, lesson)
    bar = tqdm(total=len(todo), desc="autograde", unit="notebook", disable=not progress, file=sys.stderr)
    try:
        bundle = client.submit(_keep, course_bundle(course, coursedir), pure=False)

        def send(unit: tuple[str, str]):
            future = client.submit(grade_remote, bundle, *unit, submission_files(coursedir, *unit), settings, pure=False)
            units[future] = unit
            return future

        def take(future, *, retried: bool = False) -> bool:
            """Commits a unit's result; returns True instead, the first time, for a unit whose
            workers kept dying (it is graded again alone)."""
            student, lesson = units.pop(future)
            try:
                unit = future.result()
                if unit.get("notebooks") is not None:
                    unit["out"] = str(landing / student / lesson)
                    _write_files(Path(unit["out"]), unit.pop("notebooks"))
                outcome = commit(course, coursedir, unit)
            except KilledWorker:  # a unit that shared a worker with one that kills it dies too
                if not retried:
                    return True
                outcome = Outcome(student, lesson, error=KILLED)
            except Exception as error:
                outcome = Outcome(student, lesson, error=f"{type(error).__name__}: {error}")
            future.release()
            outcomes.append(outcome)
            bar.update()
            bar.set_postfix_str(f"{student}/{lesson}", refresh=False)
            return False

        waiting = iter(todo)
        ahead = max(8, 4 * sum(client.nthreads().values()))  # units sent ahead of the workers, not the whole class
        running = distributed.as_completed([send(unit) for _, unit in zip(range(ahead), waiting)], loop=client.loop)
        again = []
        for future in running:
            unit = units[future]
            if take(future):
                again.append(unit)
            for unit in [unit for _, unit in zip(range(1), waiting)]:
                running.add(send(unit))
        for unit in again:
            take(send(unit), retried=True)
        for done in [client.submit(_finish, workers=[worker], allow_other_workers=False, pure=False)
                     for worker in client.nthreads()]:  # no kernel is left waiting on the workers
            try:
                done.result(timeout=60)
            except Exception:  # a worker gone meanwhile: nothing to stop there
                pass
    finally:  # Ctrl-C too: what is recorded stays, the units in flight are dropped
        bar.close()
        client.cancel(list(units))
        client.close()
        shutil.rmtree(landing, ignore_errors=True)
    return outcomes


# -- on a Dask worker -------------------------------------------------------------------------

_LOCK = threading.Lock()  # one unit at a time per process: the grading worker's state is global
_COURSES: dict[str, Path] = {}  # bundle digest -> its course folder here, the latest last
_ready_for = None  # what setup_worker was last run for in this process


def _course_from(bundle: bytes) -> Path:
    """Returns this worker's copy of the course in ``bundle``, unpacking it on first use (the
    copies of runs before the last two are removed)."""
    digest = hashlib.sha256(bundle).hexdigest()[:16]
    if digest not in _COURSES:
        try:
            from distributed import get_worker

            scratch = get_worker().local_directory
        except (ImportError, ValueError):
            scratch = tempfile.gettempdir()
        folder = Path(tempfile.mkdtemp(prefix=f"ttt-grader-{digest}-", dir=scratch)) / "course"
        with zipfile.ZipFile(io.BytesIO(bundle)) as archive:
            archive.extractall(folder)
        _COURSES[digest] = folder
        while len(_COURSES) > 2:
            shutil.rmtree(_COURSES.pop(next(iter(_COURSES))).parent, ignore_errors=True)
    return _COURSES[digest]


def grade_remote(bundle: bytes, student: str, lesson: str, files: dict[str, bytes], settings) -> dict:
    """Grades one submission (its files as bytes) of the course in ``bundle`` on this worker,
    as a local worker would, with the run's ``settings``, in the same sandbox (a worker machine
    without one refuses, as ``autograde`` does, unless ``settings.sandbox`` is False); returns grade_unit's result with the autograded folder's files as
    bytes under ``notebooks`` instead of its path."""
    from grader import execute
    from grader.execute import SafeExecute
    from grader.layout import coursedir_of
    from grader.nbconfig import grading_config
    from grader.worker import grade_unit, grading_environment, setup_worker

    global _ready_for
    with _LOCK:
        course = _course_from(bundle)
        config = grading_config(course, settings)
        if settings.sandbox:
            from grader.sandbox import SandboxUnavailable, available

            why = available()
            if why is not None:
                raise SandboxUnavailable(f"this Dask worker cannot grade in a sandbox: {why}")
        if _ready_for != (course, settings):
            execute.stop_spares()  # a spare kernel started for another run has that run's settings
            # as autograde() sets up a local run: kernels in private folders, the course read-only
            # named as a re-check's copies are, so that a later run removes it once this worker is gone
            # (grader.worker.remove_dead_scratch); where its path is too long for the kernels' unix
            # sockets, their folders go to /tmp (grader.execute.kernel_folder)
            from grader.recheck import unit_scratch_prefix

            scratch = Path(tempfile.gettempdir()) / f"{unit_scratch_prefix()}kernels"
            scratch.mkdir(exist_ok=True)
            scratch.chmod(0o711)  # a sandbox's folders inside are bound from here
            grading_environment(course, scratch=scratch, run=course.parent.name, sandbox=settings.sandbox,
                                memory_mb=SafeExecute(config=config).memory_mb)
            setup_worker(str(course), settings)
            _ready_for = (course, settings)
        coursedir = coursedir_of(course, config)
        submitted = Path(coursedir.format_path(coursedir.submitted_directory, student, lesson))
        _write_files(submitted, files)
        try:
            unit = grade_unit(student, lesson)
        finally:
            shutil.rmtree(submitted.parent, ignore_errors=True)
        if unit.get("out"):
            out = Path(unit.pop("out"))
            unit["notebooks"] = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
            shutil.rmtree(out, ignore_errors=True)
        return unit


def _finish() -> None:
    """Stops the spare kernel this worker started for a next unit (the run is over)."""
    from grader import execute

    with _LOCK:
        execute.stop_spares()


# -- a cluster on this machine ------------------------------------------------------------------


class LoopbackCluster:
    """A Dask scheduler and ``workers`` worker processes on 127.0.0.1, started with the ``dask``
    command as on a real cluster (``dask scheduler``, ``dask worker ADDRESS --nthreads 1``), on
    ports of their own, to try ``--cluster`` on one machine (the tests and the benchmark do).
    Every process it starts, and every process those start (grading kernels included), carries
    a mark in its environment, so ``stop`` ends them all. Logs go to ``folder``."""

    MARK = "TTT_GRADER_LOOPBACK_CLUSTER"  # a TTT_GRADER_ variable: grader.processes.stop_processes sees it

    def __init__(self, workers: int, folder: Path):
        import socket
        import subprocess
        import uuid

        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.token = uuid.uuid4().hex
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.address = f"tcp://127.0.0.1:{port}"
        dask = str(Path(sys.executable).with_name("dask"))
        commands = [[dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]]
        commands += [[dask, "worker", self.address, "--host", "127.0.0.1", "--nthreads", "1", "--no-dashboard",
                      "--name", f"worker{i}", "--local-directory", str(self.folder / f"worker{i}"),
                      "--death-timeout", "60"] for i in range(workers)]
        env = {**os.environ, self.MARK: self.token}
        self.processes = []
        try:
            for command in commands:
                log = open(self.folder / f"{command[1]}-{len(self.processes)}.log", "wb")
                self.processes.append(subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                                                       stdin=subprocess.DEVNULL, start_new_session=True))
                log.close()
            client = connect(self.address)
            client.wait_for_workers(workers, timeout=WAIT_FOR_WORKERS)
            client.close()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> list[int]:
        """Stops the scheduler, the workers and everything they started; returns the ids of the
        processes found still running after that (none, when all went well)."""
        import signal
        import subprocess

        from grader.processes import stop_processes

        for process in reversed(self.processes):  # workers first: they leave the scheduler cleanly
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass

        def ours(pid, ppid, env):
            return env.get(self.MARK) == self.token

        stop_processes(ours)  # what did not stop, and the kernels (they run in sessions of their own)
        for process in self.processes:
            process.wait()
        return stop_processes(ours)

    def __enter__(self) -> "LoopbackCluster":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
