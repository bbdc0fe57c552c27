"""Check my work: a student's own lesson notebook graded as the instructor's autograde grades it.

``ttt-grader check LESSON.ipynb`` (and the "Check my work" button of a lesson's last cell,
``check_my_work()``, which runs it in a process of its own) runs the hidden checks on a student's notebook without an instructor: the lesson is found from the
notebook's nbgrader cells (or its file name), a one-student temporary course is made from the
lessons' source (``grader.course.make_course``, or the instructor's course with ``--course``) and
released with nbgrader, the notebook is placed as that student's submission, and
``grader.autograde.autograde`` grades it: the same sandbox, kernel, re-check and scores as the
instructor's run. What each test cell says is what the feedback says (``LabelTests`` and
``HideTestCode``, nbgrader's ``ClearHiddenTests``): passes, or the check's message with its board.

The notebook is checked as last saved. nbgrader's Validate runs the visible tests only: in the
students' JupyterLab (``grader/student_lab/``) ``grader.validate``'s server extension answers it from a
process of its own, so the server goes on answering, and says the hidden tests did not run. An instructor turns the self-check off for a course with
``c.SelfCheck.enabled = False`` in the course's ``nbgrader_config.py``: the lessons released from
that course carry the setting (``metadata.ttt.self_check``), and the check then says it is off.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from grader.course import enabled_in

STUDENT = "me"  # the one student of the temporary course
OFF = ("your instructor has turned the self-check off for this course: only the visible tests (the ones in "
       "the notebook) can be run before grading; the hidden tests run when your notebook is graded")


PROGRESS = "TTT_CHECK_PROGRESS"  # when set, the check says each step on stderr as it starts: a JSON object a line
STEPS = {"prepare": "making a course of the lesson and releasing it",
         "run": "running your notebook (the visible tests)",
         "recheck": "the hidden tests, function by function",
         "verdict": "reading the verdicts"}  # the check's steps, in order


class NotALesson(ValueError):
    """The file is not one of the lessons (or not a notebook at all)."""


class CheckOff(RuntimeError):
    """The instructor has turned the self-check off for the course."""


@dataclass
class CellCheck:
    """One test cell of the lesson: the function it grades, its points, passed or not, and what
    the feedback says about it (the check's message with its board, when it fails)."""

    cell: str
    function: str
    points: float
    passed: bool
    message: str = ""


@dataclass
class Result:
    """A lesson notebook's self-check."""

    lesson: str
    notebook: str
    cells: list[CellCheck] = field(default_factory=list)
    score: float = 0.0
    max_score: float = 0.0
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return bool(self.cells) and all(c.passed for c in self.cells)

    def as_dict(self) -> dict:
        return {**asdict(self), "passed": self.passed}


# -- which lesson ------------------------------------------------------------------------------


def _graded_ids(nb) -> set[str]:
    """The grade ids of a notebook's nbgrader cells (answers and tests)."""
    ids = set()
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if isinstance(meta, dict) and (meta.get("grade") or meta.get("solution")) and meta.get("grade_id"):
            ids.add(meta["grade_id"])
    return ids


def which_lesson(nb, path: Path, sources: dict[str, Path]) -> str:
    """Returns the lesson (of ``sources``: {lesson: source notebook}) that the notebook is: the
    lesson its file name names, if its cells are that lesson's, else the lesson whose answer and
    test cells it holds; raises NotALesson."""
    import nbformat

    ids = _graded_ids(nb)
    if not ids:
        raise NotALesson(f"{path.name} is not one of the lessons: it has no nbgrader answer or test cells "
                         f"(the lessons are {', '.join(sources)})")
    overlap = {}
    for lesson, source in sources.items():
        own = _graded_ids(nbformat.read(source, as_version=4))
        overlap[lesson] = len(ids & own) / max(1, len(own))
    named = [l for l in sources if l in path.stem or path.stem.startswith(l[:3])]
    for lesson in named:
        if overlap[lesson] > 0:
            return lesson
    best = max(overlap, key=overlap.get)
    if overlap[best] == 0:
        raise NotALesson(f"{path.name} is not one of the lessons: none of its nbgrader cells is a lesson's "
                         f"(the lessons are {', '.join(sources)})")
    return best


def _sources(course: Path | None) -> dict[str, Path]:
    """{lesson: source notebook}: the instructor's course's, or the lessons' own (``notebooks/``)."""
    if course is None:
        from grader.course import lesson_path, lesson_names

        return {name: lesson_path(name) for name in lesson_names()}
    source = Path(course) / "source"
    found = {d.name: d / f"{d.name}.ipynb" for d in sorted(source.iterdir()) if (d / f"{d.name}.ipynb").is_file()} \
        if source.is_dir() else {}
    if not found:
        raise FileNotFoundError(f"{Path(course).resolve()} holds no lessons (no source/<lesson>/<lesson>.ipynb)")
    return found


# -- the switch ----------------------------------------------------------------------------------


def student_config():
    """The nbgrader configuration a student's Jupyter reads (nbgrader_config.py on Jupyter's config
    path and in the current folder), as nbgrader's Validate handler loads it."""
    from jupyter_core.paths import jupyter_config_path
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    config = Config()
    for folder in [*reversed(jupyter_config_path()), os.getcwd()]:  # the nearer folder wins, as in nbgrader
        path = Path(folder) / "nbgrader_config.py"
        if path.is_file():
            try:
                config.merge(PyFileConfigLoader(path.name, path=str(path.parent)).load_config())
            except Exception:  # noqa: BLE001  (a broken config is nbgrader's to report)
                continue
    return config


def marked_off(nb) -> bool:
    """Whether a released lesson says its course turned the self-check off (``metadata.ttt.self_check``)."""
    return nb.get("metadata", {}).get("ttt", {}).get("self_check") is False


# -- the check ---------------------------------------------------------------------------------


def check_notebook(path: str | Path, *, course: str | Path | None = None, sandbox: bool = True,
                   timeout: int | None = None) -> Result:
    """Grades the lesson notebook at ``path`` as ``ttt-grader autograde`` would, in a temporary
    one-student course; returns each test cell's verdict. Raises NotALesson (not a lesson, or not
    a notebook), CheckOff (turned off for the course), SandboxUnavailable (no sandbox here, and
    ``sandbox`` is True), RuntimeError (the grading itself failed)."""
    import nbformat

    from grader.autograde import autograde
    from grader.course import course_config

    started = time.monotonic()
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as error:  # noqa: BLE001  (invalid JSON, not a notebook: said in one line)
        from grader.cells import unreadable

        raise NotALesson(unreadable(path.name, error)) from None
    course = Path(course).resolve() if course is not None else None
    sources = _sources(course)
    lesson = which_lesson(nb, path, sources)
    if marked_off(nb) or not enabled_in(student_config()) or (course and not enabled_in(course_config(course))):
        raise CheckOff(OFF)
    if sandbox:
        from grader.sandbox import SandboxUnavailable, available

        why = available()
        if why is not None:
            raise SandboxUnavailable(f"no sandbox can run your code here: {why} Or check without one: "
                                     "ttt-grader check --no-sandbox NOTEBOOK (your code then runs as you, unsandboxed)")
    if os.environ.get(PROGRESS):  # the button's check (CheckButton): it ends with the kernel that started it
        from grader.processes import die_with_parent

        die_with_parent()
        _say("prepare", lesson=lesson, functions=_functions(sources[lesson]))
    work = Path(tempfile.mkdtemp(prefix="ttt-check-"))
    try:
        root = work / "course"
        if course is None:
            from grader.course import make_course

            make_course(root, lessons=[lesson])
        else:
            (root / "source").mkdir(parents=True)
            shutil.copytree(sources[lesson].parent, root / "source" / lesson)
            if (course / "nbgrader_config.py").is_file():
                shutil.copyfile(course / "nbgrader_config.py", root / "nbgrader_config.py")
        _released(root, lesson)
        submitted = root / "submitted" / STUDENT / lesson
        submitted.mkdir(parents=True)
        shutil.copyfile(path, submitted / f"{lesson}.ipynb")
        if os.environ.get(PROGRESS):
            with open(root / "nbgrader_config.py", "a") as config:
                config.write(_PROGRESS_HOOKS)
        _say("run")
        outcomes = autograde(root, jobs=1, progress=False, timeout=timeout, sandbox=sandbox)
        outcome = next((o for o in outcomes if o.lesson == lesson), None)
        if outcome is None or outcome.error:
            raise RuntimeError(f"the check could not grade {path.name}: "
                               f"{outcome.error if outcome else 'nothing was graded'}")
        result = Result(lesson, str(path), score=outcome.score or 0.0, max_score=outcome.max_score or 0.0,
                        problems=list(outcome.problems))
        _say("verdict")
        result.cells = _verdicts(root, lesson)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result.seconds = round(time.monotonic() - started, 1)
    return result


def _released(root: Path, lesson: str) -> None:
    """Releases `lesson` in the temporary course `root` (its ``source/`` and config written), as
    ``ttt-grader release`` would: nbgrader's generate_assignment, which makes the gradebook (and
    asks alembic for its schema in a process of its own, about 4 CPU s in all). What it makes is
    kept in the user's cache folder, under a hash of everything it depends on (the lesson as
    written, the course's config bar its root, nbgrader's version, the grader's configuration and
    preprocessors), and copied from there by the
    next check of the same lesson: a student checks a lesson dozens of times. A cache that cannot
    be read or written is passed by."""
    import hashlib

    import nbgrader

    from grader.course_ops import release

    import grader.nbconfig
    import grader.preprocessors

    config = (root / "nbgrader_config.py").read_text(encoding="utf-8").replace(str(root), "<root>")
    source = (root / "source" / lesson / f"{lesson}.ipynb").read_bytes()
    ours = [Path(module.__file__).read_bytes() for module in (grader.nbconfig, grader.preprocessors)]  # the release's own steps
    key = hashlib.sha256(b"\0".join([source, config.encode(), nbgrader.__version__.encode(), lesson.encode(), *ours])).hexdigest()[:32]
    try:
        import platformdirs

        kept = Path(platformdirs.user_cache_dir("ttt")) / "released" / key
    except Exception:  # noqa: BLE001  (no cache folder: release each time)
        kept = None
    if kept is not None and (kept / "gradebook.db").is_file() and (kept / "release" / lesson / f"{lesson}.ipynb").is_file():
        try:
            shutil.copyfile(kept / "gradebook.db", root / "gradebook.db")
            shutil.copytree(kept / "release", root / "release", dirs_exist_ok=True)
            return
        except OSError:
            shutil.rmtree(root / "release", ignore_errors=True)
            (root / "gradebook.db").unlink(missing_ok=True)
    if kept is not None:
        shutil.rmtree(kept, ignore_errors=True)  # a kept release that lost a file: made again
    release(root, lessons=[lesson], setup=False)
    if kept is None:
        return
    making = None
    try:  # made apart, then moved into place whole: a check running beside this one sees all of it or none
        kept.parent.mkdir(parents=True, exist_ok=True)
        making = Path(tempfile.mkdtemp(prefix=".making-", dir=kept.parent))
        shutil.copyfile(root / "gradebook.db", making / "gradebook.db")
        shutil.copytree(root / "release", making / "release")
        os.rename(making, kept)
    except OSError:  # no room, no right to write, or another check kept it first
        if making is not None:
            shutil.rmtree(making, ignore_errors=True)


def prepare() -> list[str]:
    """Releases every lesson that comes with ttt into the user's cache folder (`_released`), as the
    first check of each would: ``make lab`` runs it, so that a student's first check of a lesson is
    as quick as the later ones. Returns the lessons; a lesson kept already is only looked at."""
    from grader.course import lesson_names, make_course

    for lesson in lesson_names():
        work = Path(tempfile.mkdtemp(prefix="ttt-check-"))
        try:
            make_course(work / "course", lessons=[lesson])
            _released(work / "course", lesson)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return lesson_names()


def _say(step: str, **details) -> None:
    """Says on stderr that a step of the check starts (a JSON object, one line), when PROGRESS is set."""
    if os.environ.get(PROGRESS):
        print(json.dumps({"step": step, **details}), file=sys.stderr, flush=True)


def _functions(source: Path) -> dict[str, str]:
    """{grade id: the function it grades} of a lesson's test cells, in order."""
    import nbformat

    from grader.cells import is_test_cell
    from grader.feedback import graded_function

    cells = nbformat.read(source, as_version=4).cells
    return {c.metadata["nbgrader"]["grade_id"]: graded_function(c) or c.metadata["nbgrader"]["grade_id"]
            for c in cells if is_test_cell(c)}


# nbclient's hook in the temporary course's config: the grading says which test cell it runs
_PROGRESS_HOOKS = """
from grader.selfcheck import _test_cell_starts
c.Execute.on_cell_start = _test_cell_starts
"""


def _test_cell_starts(cell, **_) -> None:
    """nbclient's ``on_cell_start``: a test cell's visible tests start (the hidden ones follow, in the re-check)."""
    from grader.cells import is_test_cell

    if is_test_cell(cell):
        _say("run", cell=cell.metadata["nbgrader"]["grade_id"])


def _verdicts(root: Path, lesson: str) -> list[CellCheck]:
    """Each test cell's score (the gradebook's) and what the feedback says of it (the autograded
    notebook through the feedback's own preprocessors)."""
    import nbformat
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import ClearHiddenTests

    from grader.nbconfig import grading_config
    from grader.cells import is_test_cell
    from grader.feedback import HideTestCode, LabelTests, graded_function

    config = grading_config(root)
    nb = nbformat.read(root / "autograded" / STUDENT / lesson / f"{lesson}.ipynb", as_version=4)
    source = nbformat.read(root / "source" / lesson / f"{lesson}.ipynb", as_version=4)
    names = {c.metadata["nbgrader"]["grade_id"]: graded_function(c) for c in source.cells if is_test_cell(c)}
    resources: dict = {}
    for preprocessor in (LabelTests, HideTestCode, ClearHiddenTests):
        nb, resources = preprocessor(config=config).preprocess(nb, resources)
    found = []
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for cell in nb.cells:
            if not is_test_cell(cell):
                continue
            grade_id = cell.metadata["nbgrader"]["grade_id"]
            grade = gb.find_grade(grade_id, lesson, lesson, STUDENT)
            points = float(grade.max_score or 0)
            passed = (grade.score or 0) >= points
            found.append(CellCheck(grade_id, names.get(grade_id) or grade_id, points, passed,
                                   "" if passed else _said(cell)))
    return found


def _said(cell) -> str:
    """What a failing test cell's outputs say, as the feedback shows them (the heading left out)."""
    parts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text.rstrip("\n"))
        elif output.output_type == "error":  # the checks' own messages say what and why: no type's name before them
            said_by_checks = output.ename in ("CheckFailed", "NotImplementedError")
            parts.append(output.evalue if said_by_checks else f"{output.ename}: {output.evalue}")
    return "\n".join(p for p in parts if p).strip() or "it failed (no message)"


# -- what the student reads ------------------------------------------------------------------------


def report(result: Result) -> str:
    """The check as text: a line per test cell (PASS/FAIL, function, points), then each failure's message."""
    lines = [f"{Path(result.notebook).name}: lesson {result.lesson}, checked as last saved, with the hidden tests "
             f"the instructor's grading runs ({result.seconds:g} s)", ""]
    width = max((len(c.function) for c in result.cells), default=8)
    for c in result.cells:
        lines.append(f"{'PASS' if c.passed else 'FAIL'}  {c.function:<{width}}  {c.points:g} point{'s' if c.points != 1 else ''}")
    for c in result.cells:
        if not c.passed:
            lines += ["", f"--- {c.function} ---", c.message]
    if result.problems:
        lines += ["", "Also:"] + [f"  {p}" for p in result.problems]
    lines += ["", summary(result)]
    return "\n".join(lines)


def summary(result: Result) -> str:
    """The check's verdict in a sentence: the score if graded now, and the functions that fail."""
    failed = [c.function for c in result.cells if not c.passed]
    by_hand = result.max_score - sum(c.points for c in result.cells)
    return (f"Score if graded now: {result.score:g} / {result.max_score:g}"
            + (f" ({by_hand:g} of them for written answers, graded by hand, not counted here)" if by_hand > 0 else "")
            + (f". Failing: {', '.join(failed)}." if failed else
               ". Every function passes." if result.cells else ". No test cell was graded."))




# -- from inside JupyterLab --------------------------------------------------------------------------

HOW_TO_CHECK = ("press “Check my work” in the lesson's last cell (in JupyterLab), or run "
                "`ttt-grader check {name}` in a terminal")
VISIBLE_ONLY = ("Validate ran the visible tests only (the ones you see in the notebook). The hidden tests, "
                "which your grade also counts, did not run: to run them, " + HOW_TO_CHECK + ".")


def _check_command(path: Path) -> tuple[list[str], dict[str, str]]:
    """The command and environment of ``ttt-grader check --json`` on `path`, saying its steps on stderr
    (PROGRESS), apart from any nbgrader run (its ``NBGRADER_*`` variables left out)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NBGRADER_")}
    return [sys.executable, "-m", "grader", "check", "--json", str(path)], {**env, PROGRESS: "1"}


def _why_not(stderr: str) -> str:
    """The one line ``ttt-grader check`` said when it could not check (its prefix and progress lines left out)."""
    lines = [line for line in stderr.strip().splitlines() if line.strip() and not line.startswith('{"step"')]
    return (lines[-1].removeprefix("ttt-grader check: ") if lines else "the check could not run").strip()


def read_result(out: str) -> Result:
    """The Result that ``ttt-grader check --json`` printed; raises ValueError if it printed none."""
    try:
        data = json.loads(out)
        return Result(**{k: v for k, v in data.items() if k not in ("cells", "passed")},
                      cells=[CellCheck(**c) for c in data["cells"]])
    except (KeyError, TypeError) as error:
        raise ValueError(f"not a check's result ({error})") from None


IN_A_BROWSER = ("The hidden tests are run by the grader, which cannot run inside a web page (this page runs Python in "
                "your browser). Here, your check is the visible tests in each function's cells: Run → Run All Cells, and "
                "fix the first one that fails. For the hidden tests, hand in the notebook as your course asks (File → "
                "Download saves a copy), or open it in JupyterLab where your course has installed ttt and press Check my "
                "work there.")


class NoCheckHere:
    """What the lesson's last cell shows where no check can run (Python in a browser: Pyodide)."""

    def __repr__(self) -> str:
        return IN_A_BROWSER

    def _repr_html_(self) -> str:
        import html

        return f'<div class="ttt-check-my-work ttt-no-check">{html.escape(IN_A_BROWSER)}</div>'


def check_my_work(path: str | Path | None = None):
    """The lesson's last cell: a "Check my work" button (`grader.check_button.CheckButton`). Pressed, it
    runs the hidden tests on this notebook as last saved, as the instructor's grading runs them
    (``ttt-grader check``, in a process of its own: the kernel stays free). The notebook is the one
    this kernel runs (``__session__``, set by Jupyter), or ``path``. Where Python runs in a browser
    (``sys.platform`` "emscripten"), no process can start and the hidden tests are not on the page:
    the cell says so and what to do instead (`NoCheckHere`)."""
    if sys.platform == "emscripten":
        return NoCheckHere()
    from grader.check_button import CheckButton

    return CheckButton(path)
