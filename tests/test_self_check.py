"""A student's self-check: ``ttt-grader check LESSON.ipynb`` (and the lessons' "Check my work" button) runs the hidden tests.

A released lesson 2 is filled in with the lesson's own solutions, once as they are and once with a
slip only the hidden tests catch (``winner`` never looks at the middle column; no visible test
has a line there): plain nbgrader Validate says "Success" for the slip (the trouble this fixes),
``ttt-grader check`` fails it naming ``winner`` with the check's message and board, and passes the
correct notebook, saying its steps on stderr when asked (``TTT_CHECK_PROGRESS``); Validate in the
students' lab (``grader/student_lab/``, what ``make lab`` uses) runs the visible tests only, and
says so instead of "Success"; running a lesson's last cell starts nothing. A course that turns
the self-check off says so. Everything runs for real: nbgrader, the sandbox, kernels.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from lesson_code import Bug, notebook  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
STUDENT_LAB = REPO / "grader" / "student_lab"
LESSON = "02-who-won"
# winner never looks at the middle column (no visible test has a line there)
SLIP = Bug("winner-misses-the-middle-column", LESSON, "winner", ("for j in range(3)]", "for j in (0, 2)]"))

pytestmark = pytest.mark.slow


def filled(release: Path, bug: Bug | None = None) -> nbformat.NotebookNode:
    """The released lesson with every answer cell holding the lesson's solution (with `bug` planted),
    and a sentence in each written answer."""
    nb = nbformat.read(release, as_version=4)
    solutions = {c.metadata["nbgrader"]["grade_id"]: c.source for c in notebook(LESSON).cells
                 if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"}
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in solutions:
            source = bug.plant(solutions[grade_id]) if bug else solutions[grade_id]
            cell.source = "\n".join(line for line in source.splitlines() if "### " not in line)
        elif cell.cell_type == "markdown" and cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = "Products 18 and 50 are 3 x 3 x 2 and 5 x 5 x 2: two of a player's marks and an empty square."
    return nb


@pytest.fixture(scope="module")
def lessons(tmp_path_factory) -> dict[str, Path]:
    """{'correct': path, 'slip': path}: the two filled-in copies of the released lesson, in a folder of their own."""
    from grader.course_ops import release

    assert SLIP.applies(), "the slip no longer applies to the lesson's winner: choose another"
    course = tmp_path_factory.mktemp("course")
    release(course, lessons=[LESSON])
    released = course / "release" / LESSON / f"{LESSON}.ipynb"
    paths = {}
    for name, bug in (("correct", None), ("slip", SLIP)):
        folder = tmp_path_factory.mktemp(name)
        paths[name] = folder / f"{LESSON}.ipynb"
        nbformat.write(filled(released, bug), paths[name])
    return paths


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_CONFIG", "NBGRADER_"))}
    return {**env, **extra}


def ttt_grader(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=cwd, env=_env(**env), capture_output=True,
                          text=True, timeout=900)


def nbgrader_validate(path: Path, *, config_dir: Path) -> subprocess.CompletedProcess:
    """``nbgrader validate`` as plain nbgrader runs it."""
    env = {"JUPYTER_CONFIG_DIR": str(config_dir)}
    return subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "validate", path.name], cwd=path.parent,
                          env=_env(**env), capture_output=True, text=True, timeout=900)


def test_plain_validate_says_success_for_the_slip(lessons, tmp_path):
    """The slip passes every visible test: nbgrader alone says "Success" (what the self-check is for)."""
    done = nbgrader_validate(lessons["slip"], config_dir=tmp_path)
    assert "Success! Your notebook passes all the tests." in done.stdout, done.stdout + done.stderr


def test_check_fails_the_slip_naming_winner_with_its_board(lessons):
    done = ttt_grader("check", str(lessons["slip"]), cwd=lessons["slip"].parent)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "FAIL  winner" in out and "Failing: winner." in out
    for function in ("terminal", "utility", "rk_board", "poss_win"):
        assert f"PASS  {function}" in out, out
    assert "hidden tests: winner(board): wrong winner" in out
    assert "   ---+---+---" in out and "as a list:" in out  # the board, drawn
    assert "Traceback" not in out + done.stderr and "check_winner" not in out  # the hidden code stays hidden


def test_check_passes_the_correct_notebook_and_json_says_so(lessons):
    from grader.selfcheck import PROGRESS, STEPS

    done = ttt_grader("check", str(lessons["correct"]), cwd=lessons["correct"].parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout and "Every function passes." in done.stdout
    assert '{"step"' not in done.stderr  # progress lines only when asked for
    done = ttt_grader("check", "--json", str(lessons["correct"]), cwd=lessons["correct"].parent, **{PROGRESS: "1"})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["passed"] is True and result["lesson"] == LESSON
    functions = ["winner", "terminal", "utility", "rk_board", "poss_win"]
    assert [c["function"] for c in result["cells"]] == functions
    assert result["score"] == sum(c["points"] for c in result["cells"]) == 9
    steps = [json.loads(line) for line in done.stderr.splitlines() if line.startswith('{"step"')]
    assert steps[0]["step"] == "prepare" and list(steps[0]["functions"].values()) == functions
    assert [s["step"] for s in steps if s["step"] != "run"] == ["prepare", "verdict"] and set(STEPS) >= {"prepare", "run", "verdict"}
    ran = [steps[0]["functions"][s["cell"]] for s in steps if s["step"] == "run" and "cell" in s]
    assert ran == functions, steps  # each test cell, in order, as the grading reaches it


def test_check_finds_the_lesson_from_its_cells_under_another_name(lessons, tmp_path):
    renamed = tmp_path / "my homework.ipynb"
    renamed.write_bytes(lessons["slip"].read_bytes())
    done = ttt_grader("check", "--json", str(renamed), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["lesson"] == LESSON
    assert [c["function"] for c in result["cells"] if not c["passed"]] == ["winner"]


def test_validate_in_the_students_lab_runs_the_visible_tests_and_says_the_hidden_did_not_run(lessons):
    """The students' lab answers Validate from ``python -m grader.validate`` (nbgrader's
    Validator, in a process of its own): the slip passes the visible tests, and the answer says
    that the hidden tests did not run and how to run them, never nbgrader's "Success"."""
    from grader.validate import validate_answer

    done = subprocess.run([sys.executable, "-m", "grader.validate", str(lessons["slip"])],
                          cwd=lessons["slip"].parent, env=_env(JUPYTER_CONFIG_PATH=str(STUDENT_LAB)),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.splitlines()[-1])
    assert results == {}, results  # nothing failed: what nbgrader would call "Success"
    answer = validate_answer(results, lessons["slip"].name)
    said = json.dumps(answer)
    assert "Success" not in said
    (shown,) = answer["value"]["failed"]  # nbgrader's dialog shows a failing cell's error as HTML: the note is one
    assert "passes the visible tests" in shown["error"] and "ttt-visible-only" in shown["error"]
    assert "The hidden tests, which your grade also counts, did not run" in shown["error"]
    assert "Check my work" in shown["error"] and f"ttt-grader check {LESSON}.ipynb" in shown["error"]


def test_validate_shows_a_failing_cells_error_before_its_code(lessons, tmp_path):
    """A visible test that fails: Validate's dialog (nbgrader's: the cell's code, then its error)
    gets the code cut to its first lines, so the error shows without scrolling, and the note."""
    from grader.validate import validate_answer

    broken = tmp_path / f"{LESSON}.ipynb"
    nb = nbformat.read(lessons["correct"], as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "terminal":
            cell.source = "def terminal(board):\n    return False"
    nbformat.write(nb, broken)
    done = subprocess.run([sys.executable, "-m", "grader.validate", str(broken)], cwd=tmp_path,
                          env=_env(), capture_output=True, text=True, timeout=600)
    results = json.loads(done.stdout.splitlines()[-1])
    assert len(results["failed"]) == 1, results
    answer = validate_answer(results, broken.name)
    (cell,) = answer["value"]["failed"]
    assert answer["success"] is True and len(cell["source"].splitlines()) <= 3
    assert "X has won, so the game is over" in cell["error"] and "did not run" in cell["error"]


def test_a_course_can_turn_the_self_check_off(lessons, tmp_path):
    """``c.SelfCheck.enabled = False`` in the course's config: its released lessons carry it, and the
    check says plainly that the hidden tests do not run before grading."""
    from grader.course import make_course
    from grader.course_ops import release

    course = make_course(tmp_path / "course", lessons=[LESSON])
    config = course / "nbgrader_config.py"
    assert "c.SelfCheck.enabled = True" in config.read_text()
    config.write_text(config.read_text().replace("c.SelfCheck.enabled = True", "c.SelfCheck.enabled = False"))
    release(course, setup=False)
    released = course / "release" / LESSON / f"{LESSON}.ipynb"
    assert nbformat.read(released, as_version=4).metadata["ttt"] == {"self_check": False}
    mine = tmp_path / "student" / f"{LESSON}.ipynb"
    mine.parent.mkdir()
    nbformat.write(filled(released, SLIP), mine)

    done = ttt_grader("check", str(mine), cwd=mine.parent)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == ("ttt-grader check: your instructor has turned the self-check off for this course: "
                                   "only the visible tests (the ones in the notebook) can be run before grading; "
                                   "the hidden tests run when your notebook is graded")
    # the course's own config says so too, for a notebook released elsewhere
    done = ttt_grader("check", "--course", str(course), str(lessons["slip"]), cwd=tmp_path)
    assert done.returncode == 2 and "turned the self-check off" in done.stderr and "Traceback" not in done.stderr


def test_check_says_in_one_line_what_is_wrong(tmp_path, capsys, monkeypatch):
    from grader import sandbox
    from grader.cli import main

    broken = tmp_path / "02-who-won.ipynb"
    broken.write_text('{"cells": [')
    assert main(["check", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ttt-grader check: 02-who-won.ipynb could not be read as a notebook") and err.count("\n") == 1

    other = tmp_path / "notes.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")])
    nbformat.write(nb, other)
    assert main(["check", str(other)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ttt-grader check: notes.ipynb is not one of the lessons") and err.count("\n") == 1

    lesson = tmp_path / "lesson.ipynb"
    nbformat.write(notebook(LESSON), lesson)  # a lesson's cells (the source's, here): a sandbox is needed
    monkeypatch.setattr(sandbox, "_tool", lambda name: None)  # as on a machine without bubblewrap
    sandbox.available.cache_clear()
    try:
        assert main(["check", str(lesson)]) == 2
    finally:
        sandbox.available.cache_clear()
    err = capsys.readouterr().err
    assert "apt-get install bubblewrap" in err and "--no-sandbox" in err and err.count("\n") == 1, err


def test_make_lab_opens_the_students_configuration():
    """``make lab`` puts grader/student_lab/ first on JUPYTER_CONFIG_PATH (keeping one already set) and
    still passes --allow-root to root; grader/student_lab hides the instructor's panels, keeps Validate."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}  # as typed, not nested
    done = subprocess.run(["make", "--no-print-directory", "-n", "lab"], cwd=REPO, capture_output=True, text=True,
                          timeout=60, env=env)
    command = done.stdout.replace("\\\n", " ")
    assert f'JUPYTER_CONFIG_PATH="{STUDENT_LAB}${{JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}}"' in command, command
    last = next(line for line in reversed(command.splitlines()) if "jupyter lab" in line)
    assert ("--allow-root" in last) == (os.geteuid() == 0), command
    disabled = json.loads((STUDENT_LAB / "labconfig" / "page_config.json").read_text())["disabledExtensions"]
    assert {"@jupyter/nbgrader:create-assignment", "@jupyter/nbgrader:formgrader",
            "@jupyter/nbgrader:course-list"} <= {k for k, v in disabled.items() if v}
    assert "@jupyter/nbgrader:validate-assignment" not in disabled


def test_running_the_last_cell_starts_no_check_and_says_how(lessons, tmp_path):
    """The lesson's own last code cell, run by a kernel as nbconvert runs it (no widget front end):
    its output is one line saying how to check, and no ``ttt-grader check`` process starts."""
    import psutil
    from nbclient import NotebookClient

    source = nbformat.read(lessons["slip"], as_version=4)
    last = [c for c in source.cells if c.cell_type == "code" and "check_my_work()" in c.source][-1]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(last.source)])
    client = NotebookClient(nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(tmp_path)}})
    checks = []

    def watch(**_):  # the kernel's own descendants: a check another test runs meanwhile is not this one's
        for process in psutil.Process(client.km.provisioner.pid).children(recursive=True):
            try:
                line = process.cmdline()
            except psutil.Error:
                continue
            if "check" in line and "grader" in line:
                checks.append(line)

    client.on_cell_executed = watch
    client.execute()
    (output,) = nb.cells[0].outputs
    assert output["data"]["text/plain"] == ("To check your work with the hidden tests, press “Check my work” in the "
                                            "lesson's last cell (in JupyterLab), or run `ttt-grader check "
                                            "LESSON.ipynb` in a terminal.")
    assert "application/vnd.jupyter.widget-view+json" in output["data"]
    assert checks == []


@pytest.mark.slow
def test_prepare_releases_every_lesson_so_that_a_first_check_releases_nothing(lessons, tmp_path, monkeypatch, capsys):
    """``ttt-grader check --prepare`` (make lab runs it) keeps every lesson's release: a student's first check copies it."""
    import grader.course_ops
    from grader.cli import main
    from grader.course import lesson_names
    from grader.selfcheck import check_notebook

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert main(["check", "--prepare"]) == 0
    assert f"{len(lesson_names())} lessons ready" in capsys.readouterr().out
    assert len(list((tmp_path / "cache" / "ttt" / "released").iterdir())) == len(lesson_names())
    with monkeypatch.context() as patched:
        patched.setattr(grader.course_ops, "release", lambda *a, **k: pytest.fail("released again"))
        assert main(["check", "--prepare"]) == 0
        checked = check_notebook(lessons["slip"])
    assert ("winner", False) in [(c.function, c.passed) for c in checked.cells]
    assert main(["check"]) == 2 and "name a lesson notebook" in capsys.readouterr().err


def test_a_lessons_release_is_kept_for_the_next_check_and_made_again_when_broken(lessons, tmp_path, monkeypatch):
    """A check releases its lesson with nbgrader (about 4 CPU s, most of it alembic's own process) and keeps
    what it made in the user's cache folder: the next check of the same lesson copies it and grades the same."""
    import grader.course_ops
    from grader.selfcheck import check_notebook

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = check_notebook(lessons["slip"])
    [kept] = (tmp_path / "cache" / "ttt" / "released").iterdir()
    assert (kept / "gradebook.db").is_file() and (kept / "release" / LESSON / f"{LESSON}.ipynb").is_file()
    verdicts = [(c.function, c.passed, c.points, c.message) for c in first.cells]
    assert ("winner", False) in [v[:2] for v in verdicts] and ("terminal", True) in [v[:2] for v in verdicts]
    with monkeypatch.context() as patched:
        patched.setattr(grader.course_ops, "release", lambda *a, **k: pytest.fail("released again"))
        again = check_notebook(lessons["slip"])
    assert [(c.function, c.passed, c.points, c.message) for c in again.cells] == verdicts
    for path in (kept / "release").rglob("*.ipynb"):
        path.unlink()  # a kept release that lost a file is released again, and kept again
    assert [(c.function, c.passed, c.points, c.message) for c in check_notebook(lessons["slip"]).cells] == verdicts
    assert (kept / "release" / LESSON / f"{LESSON}.ipynb").is_file() and list(kept.parent.iterdir()) == [kept]


def test_in_a_browser_the_check_cell_says_what_to_do_instead(monkeypatch):
    """Under Pyodide (sys.platform "emscripten") no process starts: the last cell says so, with no button and no traceback."""
    from grader import selfcheck

    monkeypatch.setattr(sys, "platform", "emscripten")
    shown = selfcheck.check_my_work()
    assert repr(shown) == selfcheck.IN_A_BROWSER and "visible tests" in repr(shown) and "File → Download" in repr(shown)
    assert shown._repr_html_().startswith('<div class="ttt-check-my-work ttt-no-check">')
