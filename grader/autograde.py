"""Autograde a class in parallel into nbgrader's standard gradebook: the run.

Each unit of work is one student's submission of one lesson. Worker processes (``--jobs``, or
the workers of a Dask cluster, ``grader.cluster``) grade units with nbgrader's own ``Autograde``
converter (``grader.worker``), each into a private copy of the gradebook and a private staging
folder inside ``DIR/.ttt-grader/work/``, so they never write the course's files. The main process
is the only writer (``grader.gradebook``): a run killed at any point loses at most the units in
flight; the next run grades those again and skips the rest (unless the submission or the lesson
changed, or ``force`` is given), so running it twice changes nothing. One run at a time: the
course's writer lock is the first thing a run takes, and a second run is refused at once. A run
stopped by a signal says what it finished (``RunStopped``); one killed outright leaves its
scratch folder (``ttt-grader-run-PID-...``), which the next run removes.

Broken submissions are graded rather than dropped (``grader.stage``); what nbgrader, the kernel
or the re-check reports is collected into each unit's ``problems``, and what the re-check found
suspicious into its ``suspicious``.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import shutil
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from grader.gradebook import Outcome, commit, previous, recorded, writer_lock
from grader.layout import (chosen_lessons, chosen_students, coursedir_of, in_flight, released, run_folder,
                           submitted_units, work_folder)
from grader.processes import RUN_ENV, WORKER_ENV, alive, stop_processes
from grader.worker import (grade_unit, grading_environment, init_pool_worker, remove_dead_scratch,
                           restore_environment, run_scratch)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # what stops a run, saying what it finished


class RunStopped(KeyboardInterrupt):
    """A grading run stopped by a signal (``signum``: SIGTERM, SIGINT as Ctrl-C, SIGHUP): ``finished``
    holds the outcomes recorded before it stopped (the gradebook has them), ``unfinished`` the
    (student, lesson) pairs it did not grade (the next run grades them)."""

    def __init__(self, signum: int, finished: list[Outcome] | None = None,
                 unfinished: list[tuple[str, str]] | None = None) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum, self.finished, self.unfinished = signum, finished or [], unfinished or []


def autograde(course: Path, *, jobs: int = 1, students: list[str] | None = None,
              lessons: list[str] | None = None, force: bool = False, timeout: int | None = None,
              memory_mb: int | None = None, notebook_timeout: int | None = None, stall_timeout: int | None = None,
              progress: bool = True, cluster: str | None = None, sandbox: bool = True) -> list[Outcome]:
    """Grades every submission of the course (or those of ``students`` / ``lessons``) with
    ``jobs`` workers, or on the Dask cluster whose scheduler is at ``cluster``
    (``grader.cluster``); returns one Outcome per (student, lesson), sorted. ``timeout``,
    ``notebook_timeout``, ``stall_timeout``, ``memory_mb`` and ``sandbox`` are the run's
    ``grader.nbconfig.Settings``.

    The first thing a run does is take the course's writer lock (``grader.gradebook.writer_lock``):
    a second run on the same course is refused at once (``CourseBusy``), naming the first. Then it
    stops what runs killed earlier left behind and removes their scratch folders
    (``grader.worker.remove_dead_scratch``). The lessons are read from a snapshot taken when the
    run starts (``.ttt-grader/run/``). Every run of student code (the notebook's kernel, the
    re-check's student server) is in the unit's sandbox (``grader.sandbox``); where none can be
    had, grading refuses (SandboxUnavailable) unless ``sandbox`` is False, the instructor's explicit
    choice (then the kernels see the course read-only where the system allows it and work in
    private folders outside it). Every process a unit starts is stopped when it ends; nothing of
    the run is left in the temporary folder.

    SIGTERM, SIGINT (Ctrl-C) or SIGHUP stops the run (in the main thread): its workers, kernels
    and sandboxes are killed, its scratch folders removed, and ``RunStopped`` says what it
    finished and what not (what is recorded stays; a unit being written when the signal came is
    written first)."""
    course = Path(course).resolve()
    if not course.is_dir():
        released(course)  # says to run `ttt-grader release` first
    with writer_lock(course, "autograde"), _stopping():
        return _graded(course, jobs=jobs, students=students, lessons=lessons, force=force, progress=progress,
                       cluster=cluster, sandbox=sandbox, timeout=timeout, memory_mb=memory_mb,
                       notebook_timeout=notebook_timeout, stall_timeout=stall_timeout)


def _graded(course: Path, *, jobs, students, lessons, force, progress, cluster, sandbox, **limits) -> list[Outcome]:
    """The run, under the writer lock (see ``autograde``)."""
    import uuid

    from grader.execute import SafeExecute
    from grader.nbconfig import Settings, grading_config

    if sandbox:
        from grader.sandbox import SandboxUnavailable, available

        why = available()
        if why is not None:
            raise SandboxUnavailable(f"{why} Student code is graded only inside a sandbox; to grade without one "
                                     "(unsafe: submissions can then read and change the course and each other's "
                                     "grades), pass --no-sandbox.")
    settings = Settings(sandbox=sandbox, **limits)
    config = grading_config(course, settings)
    coursedir = coursedir_of(course, config)
    lessons = chosen_lessons(lessons, list(released(course, coursedir)))
    students = chosen_students(students, course, coursedir)
    # sandboxes a killed run left behind (their worker is gone; bwrap, dropping its capabilities,
    # loses the death signal its launcher asked for): stopped before this run begins; then the
    # scratch folders of runs whose process is gone
    stop_processes(lambda pid, ppid, env: ppid == 1 and env.get(RUN_ENV) and env.get(WORKER_ENV)
                   and not alive(env[WORKER_ENV]))
    left = remove_dead_scratch()
    if left:  # said even with -q: it is about the machine, not this run's progress
        print(f"removed what {len(left)} killed run(s) left: {', '.join(str(p) for p in left)}",
              file=sys.stderr)
    started = time.time()
    scratch = run_scratch()
    token = uuid.uuid4().hex
    saved_env = grading_environment(course, scratch=scratch, run=token, sandbox=sandbox,
                                    memory_mb=SafeExecute(config=config).memory_mb)
    outcomes, todo = [], []
    try:
        for folder in (work_folder(course), run_folder(course)):
            shutil.rmtree(folder, ignore_errors=True)
        for step in ("source", "release"):  # the run's own copy of the lessons
            shutil.copytree(Path(coursedir.root) / getattr(coursedir, f"{step}_directory"), run_folder(course) / step)
        units = [(s, l) for s, l in submitted_units(course, coursedir)
                 if (not students or s in students) and (not lessons or l in lessons)]
        for student, lesson in units:
            before = None if force else previous(course, student, lesson, coursedir)
            (outcomes.append(before) if before else todo.append((student, lesson)))
        # later lessons first (in this course they take longest), so that the workers end together
        todo.sort(key=lambda unit: unit[0])
        todo.sort(key=lambda unit: unit[1], reverse=True)
        if todo and cluster:
            from grader.cluster import run_on_cluster

            outcomes += run_on_cluster(cluster, course, coursedir, todo, progress=progress, settings=settings)
        elif todo:
            outcomes += _run(course, coursedir, todo, jobs=jobs, progress=progress, initargs=(str(course), settings))
        for folder in (work_folder(course), run_folder(course)):
            shutil.rmtree(folder, ignore_errors=True)
    except RunStopped as stop:
        finished, unfinished = list(outcomes), []
        with _deferred(drop=True):
            for student, lesson in todo:  # what this run recorded before it stopped, as the done-markers say
                done = recorded(course, student, lesson, since=started)
                (finished.append(done) if done else unfinished.append((student, lesson)))
        raise RunStopped(stop.signum, sorted(finished, key=lambda o: (o.student, o.lesson)), unfinished) from None
    finally:
        with _deferred(drop=True):  # a second signal does not cut the clean-up short
            stop_processes(lambda pid, ppid, env: env.get(RUN_ENV) == token)  # whatever a dead worker left
            with contextlib.suppress(OSError):  # what a unit left there that could not go: the next run tries again
                from grader.sandbox import remove_folder

                remove_folder(scratch)
            remove_dead_scratch()  # its workers' kernel folders in /tmp, when TMPDIR was too long for their sockets
            restore_environment(saved_env)
    return sorted(outcomes, key=lambda o: (o.student, o.lesson))


# -- stopping a run: a signal becomes RunStopped, never in the middle of writing a unit -------

_SIGNALS = {"defer": 0, "pending": None}


def _on_signal(signum, _frame) -> None:
    if _SIGNALS["defer"]:
        _SIGNALS["pending"] = signum
    else:
        raise RunStopped(signum)


@contextlib.contextmanager
def _stopping():
    """Makes STOP_SIGNALS raise RunStopped while the block runs (in the main thread; elsewhere
    signals cannot be caught, and the block runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {signum: signal.signal(signum, _on_signal) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
        _SIGNALS["pending"] = None


@contextlib.contextmanager
def _deferred(drop: bool = False):
    """Holds a stop signal back while the block runs; then raises RunStopped for it (unless ``drop``)."""
    _SIGNALS["defer"] += 1
    try:
        yield
    finally:
        _SIGNALS["defer"] -= 1
        signum = _SIGNALS["pending"]
        if not _SIGNALS["defer"] and signum is not None:
            _SIGNALS["pending"] = None
            if not drop:
                raise RunStopped(signum)


WORKER_KILLED = ("the grading worker was killed while it graded this submission (by a cell that "
                 "killed the grader's process?); it was graded again alone and killed it again")


def _run(course, coursedir, todo, *, jobs, progress, initargs) -> list[Outcome]:
    """Grades ``todo`` with ``jobs`` workers. A worker that dies takes only its unit with it: the
    units in flight are graded again one at a time (the one that kills its worker again is
    reported), the others go on in a new pool. (Time limits count CPU seconds: a unit whose cell
    timed out would time out again on a quiet machine, so it is not graded again.)"""
    from tqdm import tqdm

    bar = tqdm(total=len(todo), desc="autograde", unit="notebook", disable=not progress, file=sys.stderr)
    outcomes = []

    def take(unit: dict) -> None:
        try:
            with _deferred():  # a unit is written whole (gradebook, notebook, done-marker) before a stop
                outcome = commit(course, coursedir, unit)
        except Exception as error:
            outcome = Outcome(unit["student"], unit["lesson"], error=f"{type(error).__name__}: {error}")
        outcomes.append(outcome)
        bar.set_postfix_str(f"{outcome.student}/{outcome.lesson}", refresh=False)
        bar.update()

    def alone(unit: tuple[str, str]) -> None:
        _, suspects, _ = _pass(course, [unit], 1, initargs, take)
        if suspects:
            take({"student": unit[0], "lesson": unit[1], "error": WORKER_KILLED})

    try:
        pending = list(todo)
        while pending:
            finished, suspects, left = _pass(course, pending, jobs, initargs, take)
            for unit in suspects:
                alone(unit)
            if left and not finished and not suspects:  # the pool breaks before grading anything
                for student, lesson in left:
                    take({"student": student, "lesson": lesson, "error": "the grading workers could not start"})
                left = []
            pending = left
    finally:
        bar.close()
    return outcomes


def _pass(course, units, jobs, initargs, take) -> tuple[int, list[tuple[str, str]], list[tuple[str, str]]]:
    """Grades ``units`` in a pool of ``jobs`` workers until they are done or a worker dies,
    handing each result to ``take`` as it comes; returns (how many came, the units in flight
    when a worker died, the units not begun)."""
    from concurrent.futures.process import BrokenProcessPool

    method = "fork" if sys.platform.startswith("linux") else "spawn"
    workers = max(1, min(jobs, len(units)))
    shutil.rmtree(in_flight(course), ignore_errors=True)
    flights = in_flight(course)
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method),
                               initializer=init_pool_worker, initargs=initargs)
    returned = set()
    try:
        final = len(units) - workers  # the last unit each worker is likely to take
        futures = {pool.submit(grade_unit, s, l, last=i >= final): (s, l) for i, (s, l) in enumerate(units)}
        try:
            for future in as_completed(futures):
                student, lesson = futures[future]
                try:
                    result = future.result()
                except BrokenProcessPool:
                    raise
                except Exception as error:
                    result = {"student": student, "lesson": lesson, "error": f"{type(error).__name__}: {error}"}
                returned.add((student, lesson))
                take(result)
        except BrokenProcessPool:
            suspects = []
            for path in sorted(flights.glob("*.json")) if flights.is_dir() else []:
                unit = tuple(json.loads(path.read_text()))
                if unit not in returned and unit not in suspects:
                    suspects.append(unit)
            pool.shutdown(wait=True, cancel_futures=True)
            return len(returned), suspects, [u for u in units if u not in returned and u not in suspects]
    except BaseException:  # stopped (RunStopped): what is recorded stays; the units in flight are dropped
        with _deferred(drop=True):
            workers = multiprocessing.active_children()
            for worker in workers:
                worker.kill()
            for worker in workers:
                worker.join(10)
            pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return len(returned), [], []


def summary(outcomes: list[Outcome]) -> str:
    """Returns a table (a row per student, a column per lesson) and the list of problems."""
    students = sorted({o.student for o in outcomes})
    lessons = sorted({o.lesson for o in outcomes})
    cell = {(o.student, o.lesson): o for o in outcomes}

    def show(o):
        if o is None:
            return "-"
        if o.error:
            return "ERROR"
        return f"{o.score:g}/{o.max_score:g}" + ("*" if o.problems else "") + ("!" if o.suspicious else "")

    rows = [["student", *lessons]] + [[s, *(show(cell.get((s, l))) for l in lessons)] for s in students]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    graded = sum(1 for o in outcomes if not o.error)
    fresh = sum(1 for o in outcomes if not o.error and not o.skipped)
    lines.append(f"\n{graded} of {len(outcomes)} submissions graded ({fresh} now, {graded - fresh} unchanged since an earlier run).")
    cheats = [o for o in outcomes if o.suspicious]
    if cheats:
        lines.append(f"\n! suspicious ({len(cheats)}), graded on what the functions earn when re-checked apart:")
        lines += [f"  {o.student} / {o.lesson}: {text}" for o in cheats for text in o.suspicious]
    trouble = [o for o in outcomes if o.problems or o.error]
    if trouble:
        lines.append("\n* what went wrong where:")
        for o in trouble:
            for text in ([f"NOT GRADED: {o.error}"] if o.error else o.problems):
                lines.append(f"  {o.student} / {o.lesson}: {text}")
    return "\n".join(map(printable, lines))


def printable(text: str) -> str:
    """Returns `text` with every character a terminal would act on (escape sequences, carriage returns,
    bells) written out as in Python (``\\x1b``): what a submission says reaches the instructor's
    terminal as text, never as a screen cleared or a line overwritten."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
