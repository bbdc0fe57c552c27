"""Autograde a class in parallel into nbgrader's standard gradebook, one writer only.

Each unit of work is one student's submission of one lesson. Worker processes (``--jobs``)
grade units with nbgrader's own ``Autograde`` converter (through ``NbGraderAPI``), each into a
private copy of the gradebook and a private staging folder inside ``DIR/.ttt-grader/work/``,
so they never write the course's files. The main process is the only writer: for every unit a
worker finishes it copies the grades into ``DIR/gradebook.db`` with nbgrader's ``Gradebook``
API, then moves the autograded notebook into ``DIR/autograded/`` and only
then records the unit as done in ``DIR/.ttt-grader/graded/``. A run killed at any point loses
at most the units in flight; the next run grades those again and skips the rest (unless the
submission or the lesson changed, or ``force`` is given), so running it twice changes nothing.

Broken submissions are graded rather than dropped: a notebook that is not valid JSON, or is
missing, is replaced in the staging copy by the lesson's blank release notebook with a note at
the top saying why, so its tests score zero and the feedback says what happened; a lone
notebook under another name is graded under the lesson's name. What nbgrader or the kernel
reports (restored test cells, duplicate cell ids, dead or hung kernels, truncated output,
use of the reference solution) is collected into each unit's ``problems``.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import multiprocessing
import os
import re
import shutil
import sqlite3
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

from grader.nbconfig import STATE, grading_config
from grader.course import CELL_TIMEOUT

BLANK_NOTE = "**Not graded as submitted.**"
# jupyter_client's words when a kernel does not answer its first request: on a loaded machine
# the kernel can be slow to start, so the unit is graded again rather than graded blank
KERNEL_NOT_STARTED = ("Kernel died before replying to kernel_info", "Kernel didn't respond")
SERIOUS = {"KernelDied", "CellTimeoutError", "NotebookTimeLimit", "KernelNotRun", "MemoryError",
           "SyntaxError", "IndentationError", "SystemExit", "RecursionError"}
LOG_PROBLEMS = [  # nbgrader's warnings, and what they mean for the instructor
    (r"Missing grade cell (\S+)", "test cell {0} was deleted; nbgrader restored it from the source"),
    (r"Attribute '(cell_type|locked|points)' for cell (\S+) has changed", "cell {1}: its {0} was changed; nbgrader put it back"),
    (r"Cell with id '(\S+)' exists multiple times", "cell id {0} appears more than once; the copies are graded as ordinary cells"),
    (r"Cell '(\S+)' does not exist in the database", "cell {0} is not in the lesson; graded as an ordinary cell"),
]


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


# -- the course --------------------------------------------------------------------------------


def coursedir_of(course: Path, config=None):
    """Returns nbgrader's CourseDirectory for the course (its standard layout and gradebook)."""
    from nbgrader.coursedir import CourseDirectory

    return CourseDirectory(config=config if config is not None else grading_config(course))


def lesson_notebooks(course: Path, coursedir=None) -> dict[str, list[str]]:
    """Returns {lesson: [notebook names]} from the course's source folder."""
    coursedir = coursedir or coursedir_of(course)
    source = Path(coursedir.root) / coursedir.source_directory
    return {d.name: sorted(p.stem for p in d.glob("*.ipynb"))
            for d in sorted(source.iterdir()) if d.is_dir() and any(d.glob("*.ipynb"))} if source.is_dir() else {}


def submitted_units(course: Path, coursedir=None) -> list[tuple[str, str]]:
    """Returns the (student, lesson) pairs that have a submission folder, sorted."""
    coursedir = coursedir or coursedir_of(course)
    submitted = Path(coursedir.root) / coursedir.submitted_directory
    lessons = lesson_notebooks(course, coursedir)
    if not submitted.is_dir():
        return []
    return sorted((s.name, l.name) for s in submitted.iterdir() if s.is_dir()
                  for l in s.iterdir() if l.is_dir() and l.name in lessons)


def released(course: Path, coursedir=None) -> dict[str, list[str]]:
    """Returns {lesson: [notebook names]} of a course that has been released; raises
    FileNotFoundError saying to run ``ttt-grader release`` when it has no lessons or gradebook."""
    coursedir = coursedir or coursedir_of(course)
    lessons = lesson_notebooks(course, coursedir)
    if not lessons or not Path(coursedir.db_url.removeprefix("sqlite:///")).exists():
        raise FileNotFoundError(f"{Path(course).resolve()} has no released lessons: run `ttt-grader release` first")
    return lessons


def _listed(names: list[str], most: int = 12) -> str:
    shown = ", ".join(names[:most])
    return shown + (f", ... ({len(names) - most} more)" if len(names) > most else "")


def chosen_lessons(names: list[str] | None, known: list[str]) -> list[str] | None:
    """Returns ``names`` with each one a known lesson (a unique prefix such as ``01`` names
    the lesson it starts); raises ValueError naming the lessons for one that is not."""
    if not names:
        return names
    chosen = []
    for name in names:
        matches = [name] if name in known else [k for k in known if k.startswith(name)]
        if len(matches) != 1:
            raise ValueError(f"unknown lesson {name!r}; the lessons are: {', '.join(known)}")
        chosen.append(matches[0])
    return chosen


def chosen_students(names: list[str] | None, course: Path, coursedir) -> list[str] | None:
    """Returns ``names`` if each student has a submission; raises ValueError naming the
    students who have one for a student who has none."""
    if not names:
        return names
    submitted = Path(coursedir.root) / coursedir.submitted_directory
    known = sorted({s for s, _ in submitted_units(course, coursedir)})
    for name in names:
        if name not in known:
            raise ValueError(f"no submissions from student {name!r} in {submitted}; "
                             f"students: {_listed(known) if known else '(none: run `ttt-grader collect PATH` first)'}")
    return names


def fingerprint(course: Path, student: str, lesson: str, coursedir=None) -> str:
    """Returns a hash of a submission's files and of its lesson's source notebooks."""
    coursedir = coursedir or coursedir_of(course)
    return _digest(coursedir.format_path(coursedir.submitted_directory, student, lesson),
                   coursedir.format_path(coursedir.source_directory, ".", lesson))


def _digest(*folders) -> str:
    """Returns a hash of the files in ``folders`` (names and contents)."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file() and ".ipynb_checkpoints" not in path.parts:
                digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _marker(course: Path, student: str, lesson: str) -> Path:
    return Path(course) / STATE / "graded" / student / f"{lesson}.json"


# -- workers -----------------------------------------------------------------------------------

_WORKER: dict = {}


def _die_with_parent() -> None:
    """Asks Linux to kill this process when its parent dies (a killed grader leaves no workers);
    Ctrl-C is left to the parent, which stops the workers by exiting."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except OSError:
            pass


def copy_database(source: Path, target: Path) -> None:
    """Copies an sqlite database consistently (sqlite's backup API), even while it is in use."""
    with sqlite3.connect(f"{Path(source).resolve().as_uri()}?mode=ro", uri=True) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    src.close()
    dst.close()


def _init_worker(course: str, timeout: int | None, memory_mb: int | None, notebook_timeout: int | None,
                 sandbox: bool = True) -> None:
    """Sets up a pool worker (it dies with its parent), then as ``setup_worker``."""
    _die_with_parent()
    setup_worker(course, timeout, memory_mb, notebook_timeout, sandbox)


def setup_worker(course: str, timeout: int | None, memory_mb: int | None, notebook_timeout: int | None,
                 sandbox: bool = True) -> None:
    """Sets up this process to grade units: its staging folder, its own copy of the gradebook,
    nbgrader's API reading the lessons from the run's snapshot. The process adopts the processes
    its kernels leave behind (a subreaper, on Linux), so that it can stop them when each unit ends."""
    from multiprocessing.util import Finalize

    from nbgrader.apps import NbGraderAPI

    import tempfile

    from grader.kernel import KERNELS_ENV

    _prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    os.environ[WORKER_ENV] = str(os.getpid())
    if os.environ.get(KERNELS_ENV):  # jupyter_client's connection files too: in the run's scratch folder
        tempfile.tempdir = os.path.join(os.environ[KERNELS_ENV], f"tmp-{os.getpid()}")
        os.makedirs(tempfile.tempdir, exist_ok=True)
    Finalize(None, _stop_kernels, args=(True,), exitpriority=10)
    warnings.filterwarnings("ignore", module="nbgrader")  # nbgrader's own SQLAlchemy warnings
    course_path = Path(course)
    work = course_path / STATE / "work" / str(os.getpid())
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    config = grading_config(course_path, timeout=timeout, memory_mb=memory_mb, notebook_timeout=notebook_timeout)
    config.SafeExecute.checks_apart = True  # the re-check that follows each notebook runs them
    config.SafeExecute.sandboxed = sandbox
    config.CourseDirectory.source_directory = str(Path(STATE) / "run" / "source")
    config.CourseDirectory.release_directory = str(Path(STATE) / "run" / "release")
    master = coursedir_of(course_path, config)
    copy_database(Path(master.db_url.removeprefix("sqlite:///")), work / "gradebook.db")
    relative = work.relative_to(course_path)
    config.CourseDirectory.submitted_directory = str(relative / "submitted")
    config.CourseDirectory.autograded_directory = str(relative / "autograded")
    config.CourseDirectory.db_url = f"sqlite:///{work / 'gradebook.db'}"
    coursedir = coursedir_of(course_path, config)
    _WORKER.update(course=course_path, master=master, coursedir=coursedir, work=work, sandbox=sandbox,
                   memory_mb=int(config.SafeExecute.memory_mb) if "memory_mb" in config.SafeExecute else None,
                   api=NbGraderAPI(coursedir=coursedir, config=config),
                   cell_timeout=float(config.Execute.timeout if "timeout" in config.Execute else CELL_TIMEOUT))


def _prctl(option: int, value: int) -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
        except (OSError, AttributeError):
            pass


# -- the processes kernels leave behind ---------------------------------------------------------

WORKER_ENV, RUN_ENV = "TTT_GRADER_WORKER", "TTT_GRADER_RUN"


def _processes() -> list[tuple[int, int, dict[str, str]]]:
    """Returns (pid, parent pid, grader variables of its environment) for each process we may see."""
    found = []
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            raw = Path(entry.path, "environ").read_bytes()
        except (OSError, ValueError):
            continue
        env = dict(v.split("=", 1) for v in raw.decode(errors="replace").split("\0") if v.startswith("TTT_GRADER_"))
        found.append((int(entry.name), ppid, env))
    return found


def stop_processes(match) -> list[int]:
    """Kills (SIGKILL) every process for which ``match(pid, parent pid, environment)`` holds,
    reaps those that are this process's children; returns their ids."""
    import signal

    me = os.getpid()
    killed = [(pid, ppid) for pid, ppid, env in _processes() if pid != me and match(pid, ppid, env)]
    for pid, _ in killed:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for pid, ppid in killed:
        if ppid == me:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
    return [pid for pid, _ in killed]


def _stop_kernels(spare_too: bool = False) -> None:
    """Stops every process this worker's kernels started (detached ones included: they carry
    the kernel's variables, and orphans come back to this subreaper), and the kernels
    themselves but the spare one (``spare_too``: that as well), and removes their private folders."""
    import tempfile

    from grader import execute
    from grader.kernel import KERNEL_ENV, KERNELS_ENV

    if spare_too:
        execute._stop_spares()
    spare = {str(km.provisioner.pid) for km in execute._SPARES.values() if getattr(km, "provisioner", None)}
    me = str(os.getpid())
    stop_processes(lambda pid, ppid, env: str(pid) not in spare and env.get(KERNEL_ENV) not in spare
                   and (env.get(WORKER_ENV) == me or str(ppid) == me))
    for folder in Path(tempfile.gettempdir()).glob("unit-*"):  # this worker's re-check copies, their sandboxes gone
        shutil.rmtree(folder, ignore_errors=True)
    kernels = os.environ.get(KERNELS_ENV)
    if kernels:
        for folder in Path(kernels).glob("kernel-*"):
            if folder.name.removeprefix("kernel-") not in spare and not _alive(folder.name.removeprefix("kernel-")):
                shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
        return True
    except (OSError, ValueError):
        return False


def _blank(path: Path, release: Path, why: str) -> None:
    """Writes the lesson's blank release notebook at ``path``, with a note saying why."""
    import nbformat

    nb = nbformat.read(release, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(
        f"{BLANK_NOTE} {why}. The lesson's blank notebook was graded in its place, so its tests score zero."))
    nbformat.write(nb, path)


def stage(course: Path, student: str, lesson: str, *, into: Path, coursedir, blank_all: str = "") -> tuple[list[str], str]:
    """Copies a submission to ``into`` and mends what nbgrader cannot read; returns the problems
    and the fingerprint of what was copied (with the lesson's source), so that a submission
    replaced while it is graded is graded again by the next run."""
    import nbformat

    shutil.rmtree(into, ignore_errors=True)
    shutil.copytree(coursedir.format_path(coursedir.submitted_directory, student, lesson), into,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    release = Path(coursedir.format_path(coursedir.release_directory, ".", lesson))
    source = Path(coursedir.format_path(coursedir.source_directory, ".", lesson))
    staged = _digest(into, source)
    expected = lesson_notebooks(course, coursedir)[lesson]
    extra = sorted(p for p in into.glob("*.ipynb") if p.stem not in expected)
    problems = []
    for name in expected:
        path, blank = into / f"{name}.ipynb", blank_all
        if not blank and not path.exists():
            if len(expected) == 1 and len(extra) == 1:
                problems.append(f"graded {extra[0].name} as {path.name}")
                extra[0].rename(path)
            else:
                blank = f"No notebook named {path.name} was submitted"
        if not blank:
            try:
                nb = nbformat.read(path, as_version=4)
                restored = _restored_cells(nb, release / f"{name}.ipynb")
                if restored:
                    nbformat.write(nb, path)
                problems += restored + _edited_cells(nb, release / f"{name}.ipynb", source / f"{name}.ipynb")
            except Exception as error:  # invalid JSON, not a notebook, unreadable
                blank = f"{path.name} could not be read as a notebook ({type(error).__name__}: {str(error)[:200]})"
        if blank:
            problems.append(blank)
            _blank(path, release / f"{name}.ipynb", blank)
    return problems, staged


def _locked(notebook) -> dict[str, str]:
    """Returns {grade id: source} of a notebook's locked cells."""
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in notebook.cells
            if c.metadata.get("nbgrader", {}).get("locked") and "grade_id" in c.metadata["nbgrader"]}


@functools.lru_cache(maxsize=64)
def _locked_in(path: Path, mtime: float) -> dict[str, str]:
    import nbformat

    return _locked(nbformat.read(path, as_version=4))


_KIND_FLAGS = ("grade", "solution", "locked", "points")  # the nbgrader metadata that says what a cell is


@functools.lru_cache(maxsize=64)
def _locked_cells_in(path: Path, mtime: float) -> dict:
    """Returns {grade id: cell} of a notebook's locked cells (the lesson's text and test cells)."""
    import nbformat

    return {c.metadata["nbgrader"]["grade_id"]: c for c in nbformat.read(path, as_version=4).cells
            if c.metadata.get("nbgrader", {}).get("locked") and "grade_id" in c.metadata["nbgrader"]}


def _restored_cells(nb, release: Path) -> list[str]:
    """Puts back, from the lesson's release, each locked cell whose kind the student changed (a test cell
    made into an answer cell: its nbgrader metadata no longer that of the lesson, which nbgrader refuses
    on its checksum, grading none of the notebook); returns a problem for each. nbgrader then grades the
    restored cell as any other test cell, hidden tests and all."""
    import copy

    given = _locked_cells_in(release, release.stat().st_mtime)
    problems = []
    for index, cell in enumerate(nb.cells):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        original = given.get(meta.get("grade_id"))
        if original is None:
            continue
        wanted = original.metadata["nbgrader"]
        if cell.cell_type == original.cell_type and all(meta.get(k) == wanted.get(k) for k in _KIND_FLAGS):
            continue
        restored = copy.deepcopy(original)
        if "id" in cell:
            restored["id"] = cell["id"]
        nb.cells[index] = restored
        what = "test cell" if wanted.get("grade") and not wanted.get("solution") else "locked cell"
        became = "an answer cell" if meta.get("solution") else "another kind of cell"
        problems.append(f"{what} {wanted['grade_id']} had been made into {became} (its nbgrader metadata changed); "
                        "it was restored from the lesson before grading")
    return problems


def _edited_cells(nb, release: Path, source: Path) -> list[str]:
    """Returns a problem for each locked cell of the release that the student changed (a cell
    that matches the source version, hidden tests and all, counts as unchanged)."""
    given = _locked(nb)
    original = _locked_in(source, source.stat().st_mtime)
    return [f"locked cell {grade_id} was edited; nbgrader restored it from the source"
            for grade_id, text in _locked_in(release, release.stat().st_mtime).items()
            if grade_id in given and given[grade_id] not in (text, original.get(grade_id))]


def _notebook_problems(folder: Path) -> list[str]:
    """Returns what went wrong while the autograded notebooks in ``folder`` ran."""
    import nbformat
    from nbgrader.utils import is_grade

    problems = []
    for path in sorted(folder.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for index, cell in enumerate(nb.cells):
            where = cell.metadata.get("nbgrader", {}).get("grade_id") or f"#{index}"
            for output in cell.get("outputs", []):
                if output.output_type == "error" and output.ename in SERIOUS:
                    message = (output.evalue or "").strip().splitlines()[:1]
                    if output.ename == "CellTimeoutError":
                        scored = "scored zero: it timed out" if is_grade(cell) else "timed out"
                        problems.append(f"cell {where} {scored}" + (f" ({message[0][:160]})" if message else ""))
                    else:
                        problems.append(f"cell {where}: {output.ename}" + (f": {message[0][:160]}" if message else ""))
                elif output.output_type == "stream" and "output truncated" in output.text.lower():
                    problems.append(f"cell {where}: output truncated")
    return list(dict.fromkeys(problems))


def _log_problems(log: str) -> list[str]:
    problems = []
    for line in log.splitlines():
        for pattern, text in LOG_PROBLEMS:
            match = re.search(pattern, line)
            if match:
                problems.append(text.format(*(g.strip("'") for g in match.groups())))
                break
    return list(dict.fromkeys(problems))


def _read_grades(db_url: str, lesson: str, student: str) -> dict:
    """Returns a submission's autograder results from a gradebook, as plain data."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gb:
        submission = gb.find_submission(lesson, student)
        return {"timestamp": submission.timestamp.isoformat() if submission.timestamp else None,
                "notebooks": {nb.name: {"penalty": nb.late_submission_penalty,
                                        "grades": {g.name: g.auto_score for g in nb.grades},
                                        "comments": {c.name: c.auto_comment for c in nb.comments}}
                              for nb in submission.notebooks}}


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


SANDBOXED = True  # autograde runs student code in the unit's sandbox unless told not to (--no-sandbox)


def grade_unit(student: str, lesson: str, *, last: bool = False) -> dict:
    """Grades one submission in this worker (``last``: no kernel is started ahead for a next
    one); returns its grades, problems, output folder and the fingerprint of what was graded.
    Every process its kernels started is stopped before it returns."""
    from grader import execute
    from grader.recheck import recheck_unit, student_launcher

    execute.MORE_TO_COME[0] = not last
    w = _WORKER
    coursedir, api = w["coursedir"], w["api"]
    flight = _in_flight(w["course"], os.getpid())
    flight.write_text(json.dumps([student, lesson]))
    staged = Path(coursedir.format_path(coursedir.submitted_directory, student, lesson))
    out = Path(coursedir.format_path(coursedir.autograded_directory, student, lesson))
    shutil.rmtree(out, ignore_errors=True)
    try:
        problems, print_ = stage(w["course"], student, lesson, into=staged, coursedir=w["master"])
        result = api.autograde(lesson, student, force=True, create=True)
        for _ in range(2):  # a kernel that did not start is the machine's trouble, never the submission's
            if not _no_kernel(result):
                break
            shutil.rmtree(out, ignore_errors=True)
            result = api.autograde(lesson, student, force=True, create=True)
        if _no_kernel(result):
            # still no kernel: the unit fails, to be graded on the next run; a blank grade would be a lost one
            return {"student": student, "lesson": lesson, "fingerprint": print_,
                    "error": f"the grading kernel did not start, three times ({_failure(result)}); run autograde again"}
        if not result["success"]:
            failure = _failure(result)
            why = f"nbgrader could not grade the submission ({failure})"
            problems, _ = stage(w["course"], student, lesson, into=staged, coursedir=w["master"], blank_all=why)
            shutil.rmtree(out, ignore_errors=True)
            result = api.autograde(lesson, student, force=True, create=True)
            if not result["success"]:
                return {"student": student, "lesson": lesson, "error": why, "fingerprint": print_}
        # The re-check runs the student's functions again, so it is inside the unit: any process
        # it starts is stopped with the kernels'. It writes its outputs into the test cells first.
        lessons = Path(coursedir.format_path(coursedir.source_directory, ".", lesson))  # the run's own copy
        try:
            grades, suspicious, out_of_time, unserved = recheck_unit(
                out, _read_grades(coursedir.db_url, lesson, student), lessons=lessons, timeout=w["cell_timeout"],
                launcher=student_launcher(memory_mb=w["memory_mb"]) if w["sandbox"] else None)
        except BaseException as error:  # noqa: BLE001  (the grader's own trouble: this unit fails, as plain text)
            if isinstance(error, KeyboardInterrupt) and not hasattr(error, "remote_type"):
                raise
            return {"student": student, "lesson": lesson, "fingerprint": print_,
                    "error": f"the re-check failed ({type(error).__name__}: {str(error)[:300]}); run autograde again"}
        if unserved:  # the machine could not start a sandbox: graded again by the next run, never failed
            return {"student": student, "lesson": lesson, "fingerprint": print_,
                    "error": f"the sandbox could not be started ({'; '.join(out_of_time)[-200:]}); run autograde again"}
        problems += _log_problems(result.get("log", "")) + _notebook_problems(out) + out_of_time
    finally:
        _stop_kernels()
        flight.unlink(missing_ok=True)
    return {"student": student, "lesson": lesson, "problems": list(dict.fromkeys(problems)),
            "grades": grades, "suspicious": suspicious, "out": str(out),
            "fingerprint": print_}


def _in_flight(course: Path, pid: int) -> Path:
    """The file that names the unit a worker is grading (left behind if the worker dies)."""
    folder = Path(course) / STATE / "work" / "in-flight"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{pid}.json"


# -- the one writer ----------------------------------------------------------------------------


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
    marker = _marker(course, student, lesson)
    marker.parent.mkdir(parents=True, exist_ok=True)
    tmp = marker.with_suffix(".tmp")
    tmp.write_text(json.dumps({"fingerprint": unit.get("fingerprint"), **asdict(outcome)}))
    os.replace(tmp, marker)
    return outcome


def failed_units(course: Path) -> set[tuple[str, str]]:
    """Returns the (student, lesson) pairs whose last grading failed (their gradebook score, if
    any, is from an earlier run)."""
    failed = set()
    for marker in (Path(course) / STATE / "graded").glob("*/*.json"):
        try:
            if json.loads(marker.read_text()).get("error"):
                failed.add((marker.parent.name, marker.stem))
        except ValueError:
            pass
    return failed


def _previous(course: Path, student: str, lesson: str, coursedir) -> Outcome | None:
    """The outcome of an earlier run, if it graded the submission and lesson as they are now."""
    marker = _marker(course, student, lesson)
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


class GradingBusy(RuntimeError):
    """Another ``autograde`` is running on the same course."""


def autograde(course: Path, *, jobs: int = 1, students: list[str] | None = None,
              lessons: list[str] | None = None, force: bool = False, timeout: int | None = None,
              memory_mb: int | None = None, notebook_timeout: int | None = None,
              progress: bool = True, cluster: str | None = None, sandbox: bool = True) -> list[Outcome]:
    """Grades every submission of the course (or those of ``students`` / ``lessons``) with
    ``jobs`` workers, or on the Dask cluster whose scheduler is at ``cluster``
    (``grader.cluster``); returns one Outcome per (student, lesson), sorted.

    The lessons are read from a snapshot taken when the run starts (``.ttt-grader/run/``). Every
    run of student code (the notebook's kernel, the re-check's student server) is in the unit's
    sandbox (``grader.sandbox``); where none can be had, grading refuses (SandboxUnavailable)
    unless ``sandbox`` is False, the instructor's explicit choice (then the kernels see the
    course read-only where the system allows it and work in private folders outside it). Every
    process a unit starts is stopped when it ends; nothing of the run is left in the temporary
    folder."""
    import tempfile
    import uuid

    from grader.execute import SafeExecute
    from grader.kernel import KERNELS_ENV, READ_ONLY_ENV, use_kernelspecs, write_kernelspec

    course = Path(course).resolve()
    if sandbox:
        from grader.sandbox import SandboxUnavailable, available

        why = available()
        if why is not None:
            raise SandboxUnavailable(f"{why} Student code is graded only inside a sandbox; to grade without one "
                                     "(unsafe: submissions can then read and change the course and each other's "
                                     "grades), pass --no-sandbox.")
    config = grading_config(course, timeout=timeout, memory_mb=memory_mb, notebook_timeout=notebook_timeout)
    coursedir = coursedir_of(course, config)
    lessons = chosen_lessons(lessons, list(released(course, coursedir)))
    students = chosen_students(students, course, coursedir)
    state = course / STATE
    state.mkdir(exist_ok=True)
    lock = open(state / "lock", "w")
    try:
        fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a POSIX lock: workers do not inherit it
    except OSError:
        raise GradingBusy(f"another autograde is running on {course}") from None
    # sandboxes a killed run left behind (their worker is gone; bwrap, dropping its capabilities,
    # loses the death signal its launcher asked for): stopped before this run begins
    stop_processes(lambda pid, ppid, env: ppid == 1 and env.get(RUN_ENV) and env.get(WORKER_ENV)
                   and not _alive(env[WORKER_ENV]))
    scratch = Path(tempfile.mkdtemp(prefix="ttt-grader-"))
    scratch.chmod(0o711)  # others may pass through (a sandbox binds folders inside), never list it
    token = uuid.uuid4().hex
    saved_env = {k: os.environ.get(k) for k in (KERNELS_ENV, READ_ONLY_ENV, RUN_ENV, "JUPYTER_RUNTIME_DIR")}
    os.environ.update({KERNELS_ENV: str(scratch), READ_ONLY_ENV: str(course), RUN_ENV: token,
                       "JUPYTER_RUNTIME_DIR": str(scratch / "runtime")})
    try:
        for folder in ("work", "run"):
            shutil.rmtree(state / folder, ignore_errors=True)
        for step in ("source", "release"):  # the run's own copy of the lessons
            shutil.copytree(Path(coursedir.root) / getattr(coursedir, f"{step}_directory"), state / "run" / step)
        use_kernelspecs(write_kernelspec(state / "jupyter", memory_mb=SafeExecute(config=config).memory_mb,
                                         sandboxed=sandbox))
        units = [(s, l) for s, l in submitted_units(course, coursedir)
                 if (not students or s in students) and (not lessons or l in lessons)]
        outcomes, todo = [], []
        for student, lesson in units:
            before = None if force else _previous(course, student, lesson, coursedir)
            (outcomes.append(before) if before else todo.append((student, lesson)))
        # later lessons first (in this course they take longest), so that the workers end together
        todo.sort(key=lambda unit: unit[0])
        todo.sort(key=lambda unit: unit[1], reverse=True)
        if todo and cluster:
            from grader.cluster import run_on_cluster

            outcomes += run_on_cluster(cluster, course, coursedir, todo, progress=progress,
                                       initargs=(timeout, memory_mb, notebook_timeout, sandbox))
        elif todo:
            outcomes += _run(course, coursedir, todo, jobs=jobs, progress=progress,
                             initargs=(str(course), timeout, memory_mb, notebook_timeout, sandbox))
        # (a re-check of the graded functions after the run would take the outcomes here)
        for folder in ("work", "run"):
            shutil.rmtree(state / folder, ignore_errors=True)
    finally:
        stop_processes(lambda pid, ppid, env: env.get(RUN_ENV) == token)  # whatever a dead worker left
        shutil.rmtree(scratch, ignore_errors=True)
        for name, value in saved_env.items():
            os.environ.pop(name, None) if value is None else os.environ.__setitem__(name, value)
        lock.close()
    return sorted(outcomes, key=lambda o: (o.student, o.lesson))


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
    flights = Path(course) / STATE / "work" / "in-flight"
    shutil.rmtree(flights, ignore_errors=True)
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method),
                               initializer=_init_worker, initargs=initargs)
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
    except BaseException:  # Ctrl-C: what is recorded stays; the units in flight are dropped
        pool.shutdown(wait=False, cancel_futures=True)
        for worker in multiprocessing.active_children():
            worker.terminate()
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
    return "\n".join(lines)
