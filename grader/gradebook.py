"""The one writer: a grading run's results go into the course's gradebook, its ``autograded/``
folder and the done-markers in the main process only, one unit at a time, in that order.

Workers grade into private gradebooks (``grader.worker``); for every unit one finishes, ``commit``
copies its grades into ``DIR/gradebook.db`` with nbgrader's ``Gradebook`` API, moves the
autograded notebook into ``DIR/autograded/`` and only then records the unit as done. A run killed
at any point loses at most the units in flight; the next run grades those again and skips the
rest (unless the submission or the lesson changed, or ``force`` is given).

One command at a time writes a course's gradebook: ``writer_lock`` is taken by ``autograde`` and
``release`` before anything slow, and a second such command on the same course is refused at once
(``CourseBusy``), naming the one that holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
import sqlite3
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

from grader.layout import STATE, done_marker, fingerprint, graded_folder

LOCK = "lock"  # the writer lock's file in DIR/.ttt-grader/: it says who holds the lock (pid, command, since)


class CourseBusy(RuntimeError):
    """Another command that writes the gradebook (``autograde``, ``release``) is running on the same course."""


@contextlib.contextmanager
def writer_lock(course: Path, command: str):
    """Holds the course's writer lock while the block runs: the first thing a command that writes
    the gradebook does, before anything slow. A second one on the same course is refused at once
    with ``CourseBusy``, naming the process that holds the lock and since when. The lock is the
    operating system's (a POSIX lock on ``DIR/.ttt-grader/lock``): it ends with its process, however
    that ends, so a killed run never leaves the course locked; worker processes do not inherit it."""
    state = Path(course) / STATE
    state.mkdir(parents=True, exist_ok=True)
    fd = os.open(state / LOCK, os.O_RDWR | os.O_CREAT, 0o644)  # never truncated before it is held
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise CourseBusy(_busy(Path(course), command, os.pread(fd, 4096, 0))) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "command": command, "since": time.time(),
                                  "host": socket.gethostname()}).encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the file ends the lock


def _busy(course: Path, command: str, said: bytes) -> str:
    """The refusal of a second command: who holds the lock (as its file says) and what to do."""
    try:
        holder = json.loads(said)
        pid, since = int(holder["pid"]), float(holder["since"])
    except (ValueError, KeyError, TypeError):
        return (f"another ttt-grader command is writing the gradebook of {course} (it is starting): "
                f"wait for it to end, then run `ttt-grader {command}` again")
    minutes = int(max(0.0, time.time() - since) // 60)
    ago = "under a minute ago" if minutes < 1 else f"{minutes} min ago"
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(since))
    host = holder.get("host")
    where = f" on {host}" if host and host != socket.gethostname() else ""
    return (f"`ttt-grader {holder.get('command', '?')}` is already running on {course}: pid {pid}{where}, since "
            f"{when} ({ago}); one command at a time writes a course's gradebook. Wait for it to end, "
            f"or stop it (kill {pid}: it says what it finished, and the next run grades the rest), then run "
            f"`ttt-grader {command}` again")


@dataclass
class Outcome:
    """What became of one student's submission of one lesson."""

    student: str
    lesson: str
    score: float | None = None
    max_score: float | None = None
    problems: list[str] = field(default_factory=list)
    error: str = ""  # set when the unit could not be graded at all
    skipped: bool = False  # graded by an earlier run, unchanged since
    suspicious: list[str] = field(default_factory=list)  # what the re-check apart from the notebook found


def copy_database(source: Path, target: Path) -> None:
    """Copies an sqlite database consistently (sqlite's backup API), even while it is in use."""
    with sqlite3.connect(f"{Path(source).resolve().as_uri()}?mode=ro", uri=True) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    src.close()
    dst.close()


def new_gradebook(db_url: str) -> None:
    """Makes the empty gradebook at ``db_url`` (an sqlite file that is not there yet), as nbgrader's
    ``Gradebook`` makes one on first use: its tables from nbgrader's own schema, then the version
    table stamped with the head of nbgrader's own migrations. nbgrader asks alembic for that head by
    starting the ``alembic`` command (a Python process of its own: about 3 CPU s, most of a
    lesson's release); this asks alembic's API in this process (about 0.1 s). nbgrader opens a
    gradebook that has tables as it is, so everything after is nbgrader's. Any other database, or a
    file that is there already, is left to nbgrader."""
    path = Path(db_url.removeprefix("sqlite:///")) if db_url.startswith("sqlite:///") else None
    if path is None or path.exists():
        return
    import nbgrader.api
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from sqlalchemy import create_engine

    config = Config()
    config.set_main_option("script_location", str(Path(nbgrader.api.__file__).parent / "alembic"))
    engine = create_engine(db_url)
    try:
        with engine.begin() as connection:
            nbgrader.api.Base.metadata.create_all(bind=connection)
            MigrationContext.configure(connection).stamp(ScriptDirectory.from_config(config), "head")
    finally:
        engine.dispose()


def read_grades(db_url: str, lesson: str, student: str) -> dict:
    """Returns a submission's autograder results from a gradebook, as plain data."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gb:
        submission = gb.find_submission(lesson, student)
        return {"timestamp": submission.timestamp.isoformat() if submission.timestamp else None,
                "notebooks": {nb.name: {"penalty": nb.late_submission_penalty,
                                        "grades": {g.name: g.auto_score for g in nb.grades},
                                        "comments": {c.name: c.auto_comment for c in nb.comments}}
                              for nb in submission.notebooks}}


def record(db_url: str, student: str, lesson: str, data: dict) -> tuple[float, float]:
    """Writes one submission's autograder results into the gradebook as nbgrader's
    SaveAutoGrades would (a grade with a manual score still needs review), its grades and
    comments in one transaction; returns its (score, max score)."""
    from datetime import datetime

    from nbgrader.api import Gradebook

    with warnings.catch_warnings(), Gradebook(db_url) as gb:
        warnings.simplefilter("ignore")  # nbgrader's own SQLAlchemy warnings on a new submission
        gb.update_or_create_student(student)
        stamp = {"timestamp": datetime.fromisoformat(data["timestamp"])} if data["timestamp"] else {}
        submission = gb.update_or_create_submission(lesson, student, **stamp)
        for nb in submission.notebooks:
            found = data["notebooks"].get(nb.name, {"penalty": 0, "grades": {}, "comments": {}})
            nb.late_submission_penalty = found["penalty"]
            for grade in nb.grades:
                grade.auto_score = found["grades"].get(grade.name, 0)
                grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
            for comment in nb.comments:
                comment.auto_comment = found["comments"].get(comment.name)
        gb.db.commit()
        submission = gb.find_submission(lesson, student)
        return submission.score, submission.max_score


def commit(course: Path, coursedir, unit: dict) -> Outcome:
    """Records a worker's result: gradebook first, then the notebook, then the done-marker (a
    unit that could not be graded gets a marker saying so: it is graded again by the next run,
    and ``export`` shows it as failed rather than with its earlier score)."""
    student, lesson = unit["student"], unit["lesson"]
    if unit.get("error"):
        outcome = Outcome(student, lesson, error=unit["error"], problems=unit.get("problems", []))
    else:
        score, max_score = record(coursedir.db_url, student, lesson, unit["grades"])
        dest = Path(coursedir.format_path(coursedir.autograded_directory, student, lesson))
        shutil.rmtree(dest, ignore_errors=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.rename(unit["out"], dest)
        outcome = Outcome(student, lesson, score, max_score, unit["problems"], suspicious=unit.get("suspicious", []))
    marker = done_marker(course, student, lesson)
    marker.parent.mkdir(parents=True, exist_ok=True)
    tmp = marker.with_suffix(".tmp")
    tmp.write_text(json.dumps({"fingerprint": unit.get("fingerprint"), **asdict(outcome)}))
    os.replace(tmp, marker)
    return outcome


def failed_units(course: Path) -> set[tuple[str, str]]:
    """Returns the (student, lesson) pairs whose last grading failed (their gradebook score, if
    any, is from an earlier run)."""
    failed = set()
    for marker in graded_folder(course).glob("*/*.json"):
        try:
            if json.loads(marker.read_text()).get("error"):
                failed.add((marker.parent.name, marker.stem))
        except ValueError:
            pass
    return failed


def previous(course: Path, student: str, lesson: str, coursedir) -> Outcome | None:
    """The outcome of an earlier run, if it graded the submission and lesson as they are now."""
    marker = done_marker(course, student, lesson)
    dest = Path(coursedir.format_path(coursedir.autograded_directory, student, lesson))
    if not marker.exists() or not dest.is_dir():
        return None
    try:
        saved = json.loads(marker.read_text())
    except ValueError:
        return None
    if saved.get("error") or saved.pop("fingerprint", None) != fingerprint(course, student, lesson, coursedir):
        return None
    return Outcome(**{**saved, "skipped": True})



def recorded(course: Path, student: str, lesson: str, *, since: float) -> Outcome | None:
    """The outcome a run recorded for a submission at ``since`` (a ``time.time()``) or later, as
    its done-marker says; None if none was recorded since then."""
    marker = done_marker(course, student, lesson)
    try:
        if marker.stat().st_mtime < since:
            return None
        saved = json.loads(marker.read_text())
    except (OSError, ValueError):
        return None
    saved.pop("fingerprint", None)
    return Outcome(**saved)
