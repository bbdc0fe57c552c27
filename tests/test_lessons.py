"""The lessons as nbgrader source notebooks: their form (quick), and real runs (slow): nbgrader
validate, the source notebooks top to bottom in a real kernel with every test passing, and the
released student notebooks with only the stubs' NotImplementedError failing."""

from __future__ import annotations

import re

import nbformat
import pytest

from grader.course import CELL_TIMEOUT, COURSE_ID, lesson_names, lesson_path, make_course
from lesson_code import LESSONS, is_grade, is_solution, notebook
from notebook_runs import errors, execute, in_parallel, nbgrader


def nbgrader_meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


# --- quick: the notebooks' form ------------------------------------------------------------------


def test_the_six_lessons_in_order():
    assert lesson_names() == LESSONS


@pytest.mark.parametrize("lesson", LESSONS)
def test_committed_without_outputs(lesson):
    for cell in notebook(lesson).cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


@pytest.mark.parametrize("lesson", LESSONS)
def test_nbgrader_cells(lesson):
    nb = notebook(lesson)
    nbformat.validate(nb)
    ids = [nbgrader_meta(c)["grade_id"] for c in nb.cells if nbgrader_meta(c)]
    assert len(ids) == len(set(ids)), "grade ids are unique"
    grade_cells = [c for c in nb.cells if is_grade(c)]
    solution_cells = [c for c in nb.cells if is_solution(c)]
    assert grade_cells and solution_cells
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if meta:
            assert meta["schema_version"] == 3
    for cell in grade_cells:
        meta = nbgrader_meta(cell)
        assert meta["points"] > 0 and meta["locked"] and not meta["solution"]
        hidden = cell.source.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
        assert re.search(r"from grader\.checks import (check_\w+)\n_ = \1\(", hidden), hidden  # no value left: nbgrader would read it as a score
    for cell in solution_cells:
        assert cell.source.count("### BEGIN SOLUTION") == cell.source.count("### END SOLUTION") >= 1
    for cell in nb.cells:
        assert "input(" not in cell.source


@pytest.mark.parametrize("lesson", LESSONS)
def test_notebooks_import_named_things_only(lesson):
    for cell in notebook(lesson).cells:
        if cell.cell_type == "code":
            assert "import *" not in cell.source


def test_make_course_writes_the_config_and_the_sources(tmp_path):
    root = make_course(tmp_path / "course", lessons=["02-who-won", "04-minimax"])
    assert root == (tmp_path / "course").resolve()
    config = (root / "nbgrader_config.py").read_text()
    assert f"c.CourseDirectory.course_id = {COURSE_ID!r}" in config
    assert f"c.CourseDirectory.root = {str(root)!r}" in config
    assert f"c.Execute.timeout = {CELL_TIMEOUT}" in config
    assert sorted(p.name for p in (root / "source").iterdir()) == ["02-who-won", "04-minimax"]
    assert (root / "source" / "04-minimax" / "04-minimax.ipynb").read_bytes() == lesson_path("04-minimax").read_bytes()
    make_course(root)  # all lessons, over the same directory
    assert sorted(p.name for p in (root / "source").iterdir()) == LESSONS


def test_make_course_refuses_an_unknown_lesson_before_writing(tmp_path):
    with pytest.raises(ValueError, match="unknown lesson '07-chess'; the lessons are: 01-boards-and-moves"):
        make_course(tmp_path / "course", lessons=["07-chess"])
    assert not (tmp_path / "course").exists()


def test_the_course_config_sets_the_grading_limits(tmp_path):
    from grader.course import NOTEBOOK_TIMEOUT
    from grader.execute import SafeExecute
    from grader.nbconfig import grading_config

    config = grading_config(make_course(tmp_path / "course", lessons=["02-who-won"]))
    assert SafeExecute(config=config).timeout == CELL_TIMEOUT == 120
    assert SafeExecute(config=config).notebook_timeout == NOTEBOOK_TIMEOUT == 600
    assert SafeExecute(config=grading_config(tmp_path / "course", notebook_timeout=9)).notebook_timeout == 9


# --- slow: real runs --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return make_course(tmp_path_factory.mktemp("course"))


@pytest.mark.slow
def test_nbgrader_validate_passes_on_every_source_notebook(course):
    def validate(lesson):
        return lesson, nbgrader(course, "validate", f"source/{lesson}/{lesson}.ipynb").stdout

    for lesson, out in in_parallel(validate, LESSONS):
        assert "Success! Your notebook passes all the tests." in out, f"{lesson}:\n{out}"


@pytest.mark.slow
def test_source_notebooks_run_top_to_bottom_with_every_test_passing(course, tmp_path):
    def run(lesson):
        return lesson, execute(course / "source" / lesson / f"{lesson}.ipynb", tmp_path / f"{lesson}.ipynb")

    for lesson, nb in in_parallel(run, LESSONS):
        assert errors(nb) == [], lesson
        print(f"{lesson}: {nb.metadata['run_seconds']:.1f} s")
        for cell in nb.cells:
            if is_grade(cell):
                text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
                assert "passes the visible tests" in text and "correct on" in text or "calls to result" in text, text


@pytest.mark.slow
def test_released_notebooks_fail_only_on_the_stubs(course, tmp_path):
    for lesson in LESSONS:
        nbgrader(course, "generate_assignment", lesson, "--force")

    def run(lesson):
        released = course / "release" / lesson / f"{lesson}.ipynb"
        return lesson, released, execute(released, tmp_path / f"{lesson}.ipynb")

    for lesson, released, nb in in_parallel(run, LESSONS):
        text = released.read_text()
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text and "import check_" not in text
        assert "raise NotImplementedError()" in text
        found = errors(nb)
        assert found and {name for _, name, _ in found} == {"NotImplementedError"}, (lesson, found)
        failing = {k for k, _, _ in found}
        for k, cell in enumerate(nb.cells):
            if is_grade(cell):
                assert k in failing, f"{lesson}: grade cell {nbgrader_meta(cell)['grade_id']} should fail on the stub"


@pytest.mark.slow
def test_a_visible_test_stops_a_search_that_does_not_end_in_a_real_kernel(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "from grader.checks import returned\nfrom ttt.games.nineboard import NineBoard\n\n"
        "def depth_limited_move(state, depth):\n    while True:\n        pass\n\n"
        "returned(depth_limited_move, NineBoard().initial(), 2, call='depth_limited_move(state, 2)', seconds=1,\n"
        "         slow='does `value` stop when depth reaches 0?')")]
    source = tmp_path / "forever.ipynb"
    nbformat.write(nb, source)
    (found,) = errors(execute(source, tmp_path / "ran.ipynb"))
    assert found[1] == "CheckFailed" and found[2].startswith("depth_limited_move(state, 2): still searching after 1 s of CPU time: does `value` stop")
