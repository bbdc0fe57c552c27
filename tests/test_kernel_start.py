"""A kernel that does not start is the machine's trouble, never the submission's: real nbgrader
grades with a kernel whose first launch dies before it answers (as a kernel too slow to start on
a loaded machine looks to jupyter_client), and the submission is graded as written, not blank."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import grading_course as gc  # noqa: E402

from grader.autograde import autograde  # noqa: E402

pytestmark = pytest.mark.slow

FLAKY = """
import os, sys
marker, fails = sys.argv[1], int(sys.argv[2])
launches = int(open(marker).read()) if os.path.exists(marker) else 0
with open(marker, "w") as handle:
    handle.write(str(launches + 1))
if launches < fails:
    os._exit(1)  # dies before it answers kernel_info
from grader.kernel import main
main(sys.argv[3:])
"""


def flaky_course(tmp_path: Path, monkeypatch, fails: int) -> tuple[Path, Path]:
    """A tiny course graded in a kernel whose first `fails` launches die; returns (course, launch counter)."""
    course = gc.make_course(tmp_path / "course")
    marker = tmp_path / "launches"
    folder = tmp_path / "jupyter" / "kernels" / "flaky"
    folder.mkdir(parents=True)
    (folder / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-c", FLAKY, str(marker), str(fails), "--memory-mb", "1024", "-f", "{connection_file}"],
        "display_name": "flaky", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    with open(course / "nbgrader_config.py", "a") as config:
        config.write("c.SafeExecute.kernel_name = 'flaky'\nc.SafeExecute.spare_kernel = False\n")
    gc.submit(course, "ada")
    return course, marker


def test_a_kernel_that_dies_before_answering_is_started_again(tmp_path, monkeypatch):
    course, launches = flaky_course(tmp_path, monkeypatch, fails=1)
    [outcome] = autograde(course, progress=False)
    assert int(launches.read_text()) >= 2  # the first kernel died; another one graded
    assert outcome.error == "" and outcome.score == 3, outcome
    assert not any("could not grade" in p for p in outcome.problems), outcome.problems
    assert gc.grades(course)[("ada", "test_player")] == 2


def test_a_kernel_that_does_not_start_three_times_fails_the_unit_not_the_student(tmp_path, monkeypatch):
    course, launches = flaky_course(tmp_path, monkeypatch, fails=3)  # a fourth kernel would start
    [outcome] = autograde(course, progress=False)
    assert int(launches.read_text()) == 3  # tried three times, and nothing was graded blank after
    assert "the grading kernel did not start" in outcome.error and outcome.score is None, outcome
    assert gc.grades(course) == {}
    [again] = autograde(course, progress=False)  # the next run grades it
    assert again.error == "" and again.score == 3, again
