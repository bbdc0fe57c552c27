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
students' JupyterLab (``grader/student_lab/``) this module's server extension answers it from a
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


def _say(step: str, **details) -> None:
    """Says on stderr that a step of the check starts (a JSON object, one line), when PROGRESS is set."""
    if os.environ.get(PROGRESS):
        print(json.dumps({"step": step, **details}), file=sys.stderr, flush=True)


def _functions(source: Path) -> dict[str, str]:
    """{grade id: the function it grades} of a lesson's test cells, in order."""
    import nbformat

    from grader.cells import is_test_cell
    from grader.preprocessors import graded_function

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


def check_my_work(path: str | Path | None = None):
    """The lesson's last cell: a "Check my work" button (an ipywidget). Pressed, it runs the hidden
    tests on this notebook as last saved, as the instructor's grading runs them (``ttt-grader check``,
    in a process of its own: the kernel stays free), showing each step and the time it has taken,
    with a Stop button; then the verdict, each function's PASS or FAIL with the check's message and
    board. Running the cell (Run All, grading, Validate) only shows the button; where no widget can
    show (a terminal, ``nbconvert --execute``) the cell's output is one line saying how to check.
    The notebook is the one this kernel runs (``__session__``, set by Jupyter), or ``path``."""
    return CheckButton(path)


def _progress_line(event: dict, functions: dict[str, str]) -> str:
    """What the check is doing, in words, from the last step it said (PROGRESS)."""
    step, cell = event.get("step"), event.get("cell")
    if step == "run" and cell in functions:
        names = list(functions)
        then = f", then {STEPS['recheck']}" if names.index(cell) == len(names) - 1 else ""
        return (f"{STEPS['run']}: the tests of {functions[cell]} ({names.index(cell) + 1} of {len(names)})"
                f"{then}")
    return STEPS.get(step, step or "starting the check")


class CheckButton:
    """The "Check my work" widget: a button, a Stop button, a progress line, the verdict."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else None
        self.process = None
        self._widget = None

    def __repr__(self) -> str:  # where no widget shows: one line saying how
        path = self.path or _this_notebook()
        name = path.name if path else "LESSON.ipynb"
        return "To check your work with the hidden tests, " + HOW_TO_CHECK.format(name=name) + "."

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        if bundle:
            bundle["text/plain"] = repr(self)
        return bundle

    @property
    def widget(self):
        if self._widget is None:
            import ipywidgets as w

            self.button = w.Button(description="Check my work", button_style="primary", icon="check",
                                   tooltip="run the hidden tests on this notebook as last saved")
            self.stop_button = w.Button(description="Stop", icon="stop", layout=w.Layout(display="none"))
            self.status = w.HTML("Press <b>Check my work</b> to run the hidden tests on this notebook as your "
                                 "grading will (running this cell does not). Save first (Ctrl+S): the check "
                                 "reads the notebook as last saved.")
            self.verdict = w.HTML()
            self.button.on_click(lambda _: self.start())
            self.stop_button.on_click(lambda _: self.stop())
            self._widget = w.VBox([w.HBox([self.button, self.stop_button]), self.status, self.verdict],
                                  layout=w.Layout(width="100%"))
            self._widget.add_class("ttt-check-my-work")
        return self._widget

    def _show(self, status: str | None = None, verdict: str | None = None) -> None:
        if status is not None:
            self.status.value = status
        if verdict is not None:
            self.verdict.value = verdict

    def start(self) -> None:
        """Starts the check in a process of its own and follows it in a thread."""
        import subprocess
        import threading

        if self.process is not None and self.process.poll() is None:
            return
        path = self.path or _this_notebook()
        if path is None:
            self._show("Cannot tell which notebook this is: run <code>check_my_work('04-minimax.ipynb')</code> "
                       "with its file name (lesson 4's, for example).", "")
            return
        path = Path(path).resolve()
        command, env = _check_command(path)
        self.process = subprocess.Popen(command, env=env, cwd=path.parent, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        start_new_session=True)
        self.button.disabled, self.stop_button.layout.display = True, None
        self._show(f"Checking {html_escape(path.name)} as last saved ...", "")
        threading.Thread(target=self._follow, args=(self.process, path.name), daemon=True).start()

    def _follow(self, process, name: str) -> None:
        """Shows the check's steps with the time taken, every second, then its verdict. Both of the
        check's pipes are read as it writes them (a verdict longer than a pipe holds never blocks it)."""
        import threading

        started, said, err, out, functions = time.monotonic(), ["starting"], [], [], {}

        def read_steps() -> None:
            for line in process.stderr:
                err.append(line)
                if line.startswith('{"step"'):
                    try:
                        event = json.loads(line)
                    except ValueError:
                        continue
                    functions.update(event.get("functions", {}))
                    said[0] = _progress_line(event, functions)

        readers = [threading.Thread(target=read_steps, daemon=True),
                   threading.Thread(target=lambda: out.append(process.stdout.read()), daemon=True)]
        for reader in readers:
            reader.start()
        while process.poll() is None:
            minutes, seconds = divmod(int(time.monotonic() - started), 60)
            if getattr(process, "stopped", False):
                self._show(f"Stopping the check ({minutes}:{seconds:02d}) ...")
            else:
                self._show(f"Checking {html_escape(name)} with the hidden tests: <b>{html_escape(said[0])}</b> "
                           f"({minutes}:{seconds:02d} so far)")
            time.sleep(1)
        for reader in readers:
            reader.join(timeout=5)
        out = "".join(out)
        self.button.disabled, self.stop_button.layout.display = False, "none"
        elapsed = round(time.monotonic() - started)
        if getattr(process, "stopped", False):
            self._show(f"Stopped after {elapsed} s: the hidden tests did not finish.", "")
            return
        try:
            result = read_result(out) if process.returncode in (0, 1) else None
        except ValueError:
            result = None
        if result is None:
            self._show(f"The hidden tests did not run: {html_escape(_why_not(''.join(err) or out))}.", "")
            return
        self._show(f"Checked {html_escape(name)} as last saved, with the hidden tests, in {elapsed} s.",
                   verdict_html(result))

    def stop(self) -> None:
        """Stops the check and returns at once: Ctrl-C to it (it stops the processes it started, its
        sandboxes with them); if it has not ended STOP_GRACE seconds later, it and every process it
        started are killed. The kernel is never held up meanwhile."""
        import signal
        import threading

        process = self.process
        if process is None or process.poll() is not None:
            return
        process.stopped = True
        try:
            os.killpg(process.pid, signal.SIGINT)
        except ProcessLookupError:
            return
        threading.Thread(target=_end_in_time, args=(process, STOP_GRACE), daemon=True).start()


STOP_GRACE = 15  # seconds a stopped check has to end its processes itself


def _end_in_time(process, grace: float) -> None:
    """Waits `grace` seconds for the check `process` to end, then kills it and everything it started."""
    import subprocess

    import psutil

    try:
        process.wait(timeout=grace)
        return
    except subprocess.TimeoutExpired:
        pass
    try:
        left = psutil.Process(process.pid).children(recursive=True)
    except psutil.Error:
        left = []
    process.kill()  # nothing once it has ended and been reaped
    for each in left:
        try:
            each.kill()
        except psutil.Error:
            pass


def html_escape(text: str) -> str:
    import html

    return html.escape(str(text))


def verdict_html(result: Result) -> str:
    """The check's verdict as the widget shows it: the sentence first, then a line per function,
    then each failure's message with its board."""
    mark = {True: "<span style='color:#1a7f37'>✔ PASS</span>", False: "<span style='color:#cf222e'>✘ FAIL</span>"}
    rows = "".join(f"<tr><td>{mark[c.passed]}</td><td><code>{html_escape(c.function)}</code></td>"
                   f"<td>{c.points:g} point{'s' if c.points != 1 else ''}</td></tr>" for c in result.cells)
    failures = "".join(f"<p><b>{html_escape(c.function)}</b> fails:</p><pre style='line-height:1.25'>"
                       f"{html_escape(c.message)}</pre>" for c in result.cells if not c.passed)
    problems = "".join(f"<li>{html_escape(p)}</li>" for p in result.problems)
    return (f"<div class='ttt-check-verdict'><p><b>{html_escape(summary(result))}</b></p><table>{rows}</table>"
            f"{failures}{f'<p>Also:</p><ul>{problems}</ul>' if problems else ''}</div>")


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


# -- nbgrader's Validate, answered without blocking the server ----------------------------------------


def visible_tests(path: str | Path) -> dict:
    """nbgrader's Validate on the notebook at `path` (the visible tests only), as its Validate
    handler runs it (the same configuration, the same answer); run in a process of its own."""
    from jupyter_core.paths import jupyter_config_path
    from nbgrader.apps import NbGrader
    from nbgrader.validator import Validator

    app = NbGrader()
    app.config_file_paths.append([os.getcwd(), *jupyter_config_path()])
    app.load_config_file()
    return Validator(config=app.config).validate(str(path))


# nbgrader's Validate dialog has no message of its own but "Success" and "The following cell failed:"
# (its front end); a failing cell's error is shown as HTML, so the note comes as such an error, with
# a style that hides, in that dialog only, the heading and the (empty) cell above it, and wraps it
_NOTE = ("<style>#validation-message:has(.ttt-visible-only) > div:nth-child(-n+2) {{display: none}}"
         " .ttt-note {{white-space: normal; font-family: var(--jp-ui-font-family); font-size: var(--jp-ui-font-size1)}}"
         "</style><div class='ttt-note'>{}</div>")


def validate_answer(results: dict, name: str) -> dict:
    """What Validate's dialog shows (nbgrader's answer, reshaped): a failing cell's code cut to its
    first lines, so that its error shows without scrolling, and always that the hidden tests did
    not run and how to run them, never nbgrader's "Success" for the visible tests alone."""
    import html
    import re

    note = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(VISIBLE_ONLY.format(name=name)))
    if results.get("type_changed") or results.get("changed"):
        return {"success": True, "value": results}
    failed = results.get("failed") or []
    if not failed:
        passed = f"<p class='ttt-visible-only'><b>Your notebook passes the visible tests.</b></p><p>{note}</p>"
        return {"success": True, "value": {"failed": [{"source": "", "error": _NOTE.format(passed)}]}}
    cells = [{"source": "\n".join(c["source"].splitlines()[:2]) + "\n…", "error": c["error"]} for c in failed]
    cells[-1]["error"] += "\n" + _NOTE.format(note)
    return {"success": True, "value": {"failed": cells}}


def _validate_handler():
    """The Tornado handler of Validate's request: nbgrader's (its path checks, its configuration),
    but the validation runs in a process of its own while the server goes on answering."""
    import asyncio

    from nbgrader.server_extensions.validate_assignment.handlers import ValidateAssignmentHandler
    from tornado import web

    class Validate(ValidateAssignmentHandler):
        @web.authenticated
        async def post(self):
            try:
                path = self.get_argument("path")
            except web.MissingArgumentError:
                path = self.get_json_body()["path"]
            root = Path(self.root_dir).resolve()
            target = (root / path).resolve()
            if not target.is_relative_to(root):
                raise web.HTTPError(403, "Access denied: path outside allowed directory")
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "grader.selfcheck", "validate", str(target), cwd=os.getcwd(),
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            out, err = await process.communicate()
            try:
                answer = validate_answer(json.loads(out.decode().strip().splitlines()[-1]), target.name)
            except (ValueError, IndexError):
                lines = err.decode(errors="replace").strip().splitlines()
                answer = {"success": False, "value": lines[-1] if lines else "Validate could not run"}
            self.finish(json.dumps(answer))

    return Validate


def _jupyter_server_extension_points():
    return [{"module": "grader.selfcheck"}]


def _load_jupyter_server_extension(server) -> None:
    """Jupyter server extension (the students' JupyterLab, ``grader/student_lab/``): nbgrader's
    Validate request answered by ``_validate_handler`` in place of nbgrader's own handler, which
    validates inside the server's event loop (the whole server waits until it is done)."""
    from jupyter_server.utils import url_path_join
    from nbgrader.server_extensions.validate_assignment.handlers import NbGraderVersionHandler

    web_app = server.web_app
    web_app.settings["root_dir"] = server.root_dir
    base = web_app.settings["base_url"]
    web_app.add_handlers(".*$", [(url_path_join(base, "assignments/validate"), _validate_handler()),
                                 (url_path_join(base, "nbgrader_version"), NbGraderVersionHandler)])


if __name__ == "__main__" and sys.argv[1:2] == ["validate"]:  # the Validate handler's process
    import warnings

    warnings.filterwarnings("ignore")
    print(json.dumps(visible_tests(sys.argv[2])))
