"""``Recheck``, the re-check as a step of nbgrader's autograde pipeline, on a fixture notebook as
``SafeExecute`` leaves it (the cells run, their outputs in place): each test cell's verdict goes
into its outputs, so that nbgrader's own scoring (``determine_grade``, what ``SaveAutoGrades``
calls) gives full points or none, and what the instructor should hear goes into the notebook's
metadata. The submission's functions run in a real student server, in the sandbox where the
machine has one."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from nbgrader.utils import determine_grade
from traitlets.config import Config

from grader.preprocessors import RECHECK_REPORT, Recheck
from ttt.limits import over_limit

pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parent.parent / "data" / "preprocessors" / "recheck"


def sandboxed() -> bool:
    from grader.sandbox import available

    return available() is None


def recheck(tmp_path, *, lessons: str | None = None, timeout: float = 3.0, sandbox: bool | None = None):
    """Runs Recheck over the fixture submission (copied into its own folder, as nbgrader's
    autograded folder holds it); returns the notebook, the cells by grade id and the report."""
    folder = tmp_path / "autograded" / "student" / "lesson"
    folder.mkdir(parents=True)
    shutil.copy(DATA / "submission.ipynb", folder / "lesson.ipynb")
    nb = nbformat.read(folder / "lesson.ipynb", as_version=4)
    config = Config()
    config.Recheck.lessons = str(DATA / "lessons") if lessons is None else lessons
    config.Recheck.timeout = timeout
    config.Recheck.sandboxed = sandboxed() if sandbox is None else sandbox
    resources = {"nbgrader": {"assignment": "lesson", "notebook": "lesson", "student": "student"},
                 "metadata": {"path": str(folder)}}
    nb, _ = Recheck(config=config).preprocess(nb, resources)
    cells = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}
    return nb, cells, nb.metadata.get(RECHECK_REPORT)


def score(cell) -> float:
    return determine_grade(cell)[0]


@pytest.fixture(scope="module")
def rechecked(tmp_path_factory):
    return recheck(tmp_path_factory.mktemp("recheck"))


def test_an_honest_cell_keeps_its_outputs_and_its_points(rechecked):
    _, cells, report = rechecked
    assert score(cells["honest"]) == 1
    assert [o.get("text") for o in cells["honest"].outputs] == ["double is right\n"]
    assert not any("honest" in line for line in report["suspicious"] + report["problems"])


def test_a_cell_that_passed_in_the_kernel_and_fails_apart_scores_zero_and_says_why(rechecked):
    _, cells, report = rechecked
    cheat = cells["cheat"]
    assert score(cheat) == 0
    errors = [o for o in cheat.outputs if o.output_type == "error"]
    assert [e.ename for e in errors] == ["AssertionError"]
    assert any(o.output_type == "stream" and "Re-checked apart" in o.text for o in cheat.outputs)
    assert any(line.startswith("cell cheat passed in the notebook but fails when re-checked apart") for line in report["suspicious"])
    assert any("lying about its value" in line for line in report["suspicious"])


def test_a_cell_out_of_cpu_time_scores_zero_as_a_problem_not_as_suspicious(rechecked):
    _, cells, report = rechecked
    assert score(cells["loops"]) == 0
    assert [o.ename for o in cells["loops"].outputs if o.output_type == "error"] == ["TimeoutError"]
    assert "test cell loops timed out: " + over_limit("it", 3) in report["problems"]
    assert not any("loops" in line for line in report["suspicious"])


def test_a_cell_that_failed_in_the_kernel_stays_failed_whatever_the_re_check_finds(rechecked):
    _, cells, report = rechecked
    failed = cells["failed_in_kernel"]
    assert score(failed) == 0
    assert [(o.output_type, o.get("ename")) for o in failed.outputs] == [("error", "AssertionError")]
    assert not any("failed_in_kernel" in line for line in report["suspicious"])


def test_the_report_says_nothing_failed(rechecked):
    _, _, report = rechecked
    assert report["unserved"] == "" and report["failed"] == ""


def test_without_lessons_to_check_against_the_notebook_passes_through_untouched(tmp_path):
    before = nbformat.read(DATA / "submission.ipynb", as_version=4)
    nb, _, report = recheck(tmp_path, lessons="")
    assert report is None
    assert [c.get("outputs") for c in nb.cells] == [c.get("outputs") for c in before.cells]


def test_a_sandbox_that_cannot_start_is_reported_and_changes_no_output(tmp_path, monkeypatch):
    import grader.recheck

    def refused(*args, **kwargs):
        def launch(argv, *, cwd, **popen_kwargs):
            raise OSError("no sandbox on this machine today")
        return launch

    monkeypatch.setattr(grader.recheck, "student_launcher", refused)
    before = nbformat.read(DATA / "submission.ipynb", as_version=4)
    nb, _, report = recheck(tmp_path, sandbox=True)
    assert "no sandbox on this machine today" in report["unserved"]
    assert [c.get("outputs") for c in nb.cells] == [c.get("outputs") for c in before.cells]


def test_a_failing_hidden_test_scores_zero_without_calling_the_submission_suspicious(rechecked):
    _, cells, report = rechecked
    hidden = cells["hidden"]
    assert score(hidden) == 0
    assert [(o.ename, o.evalue) for o in hidden.outputs if o.output_type == "error"] == [("AssertionError", "a hidden test")]
    assert not any("Re-checked apart" in o.get("text", "") for o in hidden.outputs)
    assert not any("hidden" in line for line in report["suspicious"])
