"""Check my work: a student's own lesson notebook graded as the instructor's autograde grades it.

``ttt-grader check LESSON.ipynb`` (and nbgrader's Validate button, through ``validate_hook``) runs
the hidden checks on a student's notebook without an instructor: the lesson is found from the
notebook's nbgrader cells (or its file name), a one-student temporary course is made from the
lessons' source (``grader.course.make_course``, or the instructor's course with ``--course``) and
released with nbgrader, the notebook is placed as that student's submission, and
``grader.autograde.autograde`` grades it: the same sandbox, kernel, re-check and scores as the
instructor's run. What each test cell says is what the feedback says (``LabelTests`` and
``HideTestCode``, nbgrader's ``ClearHiddenTests``): passes, or the check's message with its board.

The notebook is checked as last saved. An instructor turns the self-check off for a course with
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
VISIBLE_ONLY = "Only the visible tests ran: the hidden tests (run when your notebook is graded) did not. "


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
    from grader.course_ops import release
    from grader.course import course_config

    started = time.monotonic()
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as error:  # noqa: BLE001  (invalid JSON, not a notebook: said in one line)
        raise NotALesson(f"{path.name} could not be read as a notebook ({type(error).__name__}: "
                         f"{str(error).splitlines()[0][:160] if str(error) else 'unreadable'})") from None
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
        release(root, lessons=[lesson], setup=False)
        submitted = root / "submitted" / STUDENT / lesson
        submitted.mkdir(parents=True)
        shutil.copyfile(path, submitted / f"{lesson}.ipynb")
        outcomes = autograde(root, jobs=1, progress=False, timeout=timeout, sandbox=sandbox)
        outcome = next((o for o in outcomes if o.lesson == lesson), None)
        if outcome is None or outcome.error:
            raise RuntimeError(f"the check could not grade {path.name}: "
                               f"{outcome.error if outcome else 'nothing was graded'}")
        result = Result(lesson, str(path), score=outcome.score or 0.0, max_score=outcome.max_score or 0.0,
                        problems=list(outcome.problems))
        result.cells = _verdicts(root, lesson)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result.seconds = round(time.monotonic() - started, 1)
    return result


def _verdicts(root: Path, lesson: str) -> list[CellCheck]:
    """Each test cell's score (the gradebook's) and what the feedback says of it (the autograded
    notebook through the feedback's own preprocessors)."""
    import nbformat
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import ClearHiddenTests

    from grader.nbconfig import grading_config
    from grader.cells import is_test_cell
    from grader.preprocessors import HideTestCode, LabelTests, graded_function

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
    failed = [c.function for c in result.cells if not c.passed]
    by_hand = result.max_score - sum(c.points for c in result.cells)
    lines += ["", f"Score if graded now: {result.score:g} / {result.max_score:g}"
              + (f" ({by_hand:g} of them for written answers, graded by hand, not counted here)" if by_hand > 0 else "")
              + (f". Failing: {', '.join(failed)}." if failed else ". Every function passes.")]
    return "\n".join(lines)


# -- from inside JupyterLab --------------------------------------------------------------------------

HIDDEN_FAILED = "HiddenTestsFailed"  # the error a test cell shows in Validate when its hidden tests fail
NOT_RUN = "HiddenTestsNotRun"  # ... when the hidden tests could not run (turned off, no sandbox)


def _run_check(path: Path, *, cwd: Path | None = None) -> tuple[int, str, str]:
    """Runs ``ttt-grader check --json`` on a notebook in a process of its own (grading forks
    workers and starts kernels: never inside a Jupyter server or a student's kernel); returns
    (exit status, stdout, stderr)."""
    import subprocess

    command, env = _check_command(path)
    done = subprocess.run(command, env=env, cwd=cwd or path.parent, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def _check_command(path: Path) -> tuple[list[str], dict[str, str]]:
    """The command and environment of ``ttt-grader check --json`` on `path`, run apart from nbgrader's
    own run (its ``NBGRADER_*`` variables left out: the check is a grading run of its own)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NBGRADER_")}
    return [sys.executable, "-m", "grader", "check", "--json", str(path)], env


def _why_not(stderr: str) -> str:
    """The one line ``ttt-grader check`` said when it could not check (its prefix left out)."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return (lines[-1].removeprefix("ttt-grader check: ") if lines else "the check could not run").strip()


_PENDING: dict[int, tuple] = {}  # Validate's runs under way: id(their last cell) -> (check process, folder, test cells)
_LAST = {"ttt": "the hidden tests' verdicts are added here"}  # the metadata of the cell that collects them


def validate_start(notebook, **_) -> None:
    """nbclient's ``on_notebook_start`` hook for nbgrader's Validate (the button, ``nbgrader validate``):
    starts the hidden tests on the notebook as Validate read it, as the instructor's grading runs
    them (``ttt-grader check``, in a process of its own, while Validate runs the visible tests),
    and adds an empty last cell to Validate's copy of the notebook (not to the file), where
    ``validate_finish`` collects them. Does nothing outside Validate. Set in the students'
    ``nbgrader_config.py`` (``grader/student_lab/nbgrader_config.py``)."""
    import subprocess

    import nbformat

    from grader.cells import is_test_cell

    if os.environ.get("NBGRADER_EXECUTION") != "validate":
        return
    tests = [c for c in notebook.cells if is_test_cell(c)]
    if not tests:
        return
    work = Path(tempfile.mkdtemp(prefix="ttt-validate-"))
    path = work / "notebook.ipynb"
    nbformat.write(notebook, path)  # as Validate read it from disk (its outputs already cleared)
    with open(work / "out", "w") as out, open(work / "err", "w") as err:
        command, env = _check_command(path)
        process = subprocess.Popen(command, env=env, cwd=Path.cwd(), stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    last = nbformat.v4.new_raw_cell("", metadata=dict(_LAST))
    notebook.cells.append(last)
    _PENDING[id(last)] = (process, work, tests)


def validate_finish(cell, **_) -> None:
    """nbclient's ``on_cell_start`` hook for Validate: at the cell ``validate_start`` added (every
    test cell has run), waits for the hidden tests and gives each test cell whose hidden tests fail
    an error saying what they found, so Validate lists it as failed. When they could not run
    (turned off for the course, no sandbox) a test cell says that only the visible tests ran, so
    Validate never says "Success" for the visible tests alone."""
    pending = _PENDING.pop(id(cell), None)
    if pending is None:
        return
    process, work, tests = pending
    try:
        status = process.wait()
        out, err = (work / "out").read_text(), (work / "err").read_text()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    try:
        verdicts = {c["cell"]: c for c in json.loads(out)["cells"]} if status in (0, 1) else None
    except (ValueError, KeyError, TypeError):
        verdicts = None
    if verdicts is None:
        if not any(_failed(c) for c in tests):  # a cell that failed already: Validate says "failed" anyway
            _add_error(tests[-1], NOT_RUN, VISIBLE_ONLY + _why_not(err) + ".")
        return
    for test in tests:
        verdict = verdicts.get(test.metadata["nbgrader"]["grade_id"])
        if verdict and not verdict["passed"] and not _failed(test):
            _add_error(test, HIDDEN_FAILED, "the hidden tests (as your notebook will be graded) fail:\n"
                       + verdict["message"])


def _failed(cell) -> bool:
    return any(o.get("output_type") == "error" for o in cell.get("outputs", []))


def _add_error(cell, ename: str, evalue: str) -> None:
    """Gives a test cell an error output, its long lines wrapped (``nbgrader validate`` cuts lines at 90 characters)."""
    import textwrap

    import nbformat

    width = 80 - len(ename) - 2
    evalue = "\n".join(line if len(line) <= width else
                       textwrap.fill(line, width, subsequent_indent=line[:len(line) - len(line.lstrip())] + "  ")
                       for line in evalue.splitlines())
    cell.outputs.append(nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"]))


def check_my_work(path: str | Path | None = None) -> None:
    """Runs the hidden tests on this notebook as last saved (save it first: Ctrl+S), as the
    instructor's grading runs them, and prints what they say. In a lesson:
    ``from grader.selfcheck import check_my_work; check_my_work()``. The notebook is the one this
    kernel runs (``__session__``, set by Jupyter), or ``path``. While nbgrader runs the notebook
    (grading, Validate) it does nothing: those run the hidden tests themselves."""
    if os.environ.get("NBGRADER_EXECUTION"):
        print("(check_my_work does nothing while nbgrader runs the notebook)")
        return
    if path is None:
        path = _this_notebook()
        if path is None:
            print("check_my_work: cannot tell which notebook this is; give its file name, as in check_my_work('04-minimax.ipynb') for lesson 4")
            return
    path = Path(path).resolve()
    print(f"Checking {path.name} as last saved, with the hidden tests (this takes a minute or so) ...", flush=True)
    status, out, err = _run_check(path)
    if status not in (0, 1):
        print(f"The hidden tests did not run: {_why_not(err)}.")
        return
    try:
        data = json.loads(out)
        result = Result(**{k: v for k, v in data.items() if k not in ("cells", "passed")},
                        cells=[CellCheck(**c) for c in data["cells"]])
    except (ValueError, KeyError, TypeError):
        print(f"The hidden tests did not run: {_why_not(err or out)}.")
        return
    print(report(result))


def _this_notebook() -> Path | None:
    """The notebook this kernel runs, as Jupyter told the kernel (``__session__``), if it is there."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        session = shell.user_ns.get("__session__") if shell is not None else None
    except ImportError:
        session = None
    session = session or os.environ.get("JPY_SESSION_NAME")
    if not session:
        return None
    for candidate in (Path(session), Path.cwd() / Path(session).name):
        if candidate.suffix == ".ipynb" and candidate.is_file():
            return candidate
    return None
