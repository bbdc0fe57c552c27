"""End to end with the real nbgrader: release every lesson, submit, autograde, read the gradebook.

Submissions per lesson, made from the released notebook as a student would:
- "solved": every solution cell filled in with the lesson's own solution;
- "untouched": the release as it is (only the stubs);
- "buggy": the solution with one planted bug, which must lose exactly its grade cells;
and, for lesson 4, "naive": a naive CS50-style solution (deepcopy in result, no pruning), which
must get full marks within nbgrader's default 30-second cell timeout; the test prints its times.

Each lesson is its own course directory, so the autograde runs go two at a time.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader.course import COURSE_ID, make_course
from lesson_code import is_grade, is_solution
from notebook_runs import errors, in_parallel, nbgrader

pytestmark = pytest.mark.slow

NAIVE = Path(__file__).resolve().parent / "data" / "naive_tictactoe.py"

# lesson -> (the planted bug: (old, new) replacements in the solution cells, the grade cells it must lose)
BUGS = {
    "01-boards-and-moves": (
        [("return {(i, j) for i in range(3) for j in range(3) if board[i][j] is EMPTY}",
          "return [(i, j) for i in range(3) for j in range(3) if board[i][j] is EMPTY]")],
        {"actions-tests"},
    ),
    "02-who-won": ([("            return a\n", "            return player(board)\n")], {"winner-tests"}),  # terminal and utility
    # call this winner, which names the player to move: their tests run with the CS50 winner, and pass
    "03-rule-based-players": ([("for mark in (me, them):", "for mark in (me,):")], {"win-block-tests"}),
    "04-minimax": (  # max_value starts from 0, not -infinity: X cannot tell losing from drawing
        [("v = -math.inf", "v = 0")],
        {"minimax-tests"},
    ),
    "05-alpha-beta": ([("if v >= beta:", "if v > beta:"), ("if v <= alpha:", "if v < alpha:")], {"alphabeta-prunes"}),
    "06-heuristics-and-depth-limits": ([("score += 10", "score += 15")], {"line-score-tests"}),
}


def _plant(source: str, replacements: list) -> str:
    for old, new in replacements:
        source = source.replace(old, new)
    return source


def _strip_markers(source: str) -> str:
    return "\n".join(line for line in source.splitlines() if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))


def _submission(released: nbformat.NotebookNode, source: nbformat.NotebookNode, edit=None) -> nbformat.NotebookNode:
    """Return the released notebook with each solution cell filled in from the source notebook."""
    answers = {c.metadata.nbgrader.grade_id: c.source for c in source.cells if is_solution(c)}
    nb = nbformat.from_dict(released)
    for cell in nb.cells:
        if is_solution(cell):
            text = _strip_markers(answers[cell.metadata.nbgrader.grade_id])
            cell.source = edit(text) if edit else text
    return nb


def _naive(released: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Return lesson 4's release with the naive CS50 solution as its one solution cell."""
    nb = nbformat.from_dict(released)
    cells = [c for c in nb.cells if is_solution(c)]
    assert len(cells) == 1
    cells[0].source = NAIVE.read_text()
    return nb


def _submit(course: Path, student: str, lesson: str, nb: nbformat.NotebookNode) -> None:
    folder = course / "submitted" / student / lesson
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{lesson}.ipynb")


@pytest.fixture(scope="module")
def graded(tmp_path_factory, request):
    """Return {(lesson or 'naive'): (course directory, seconds autograde took)} after autograding.

    Only the lessons the selected tests ask about are graded (all of them in a full run).
    """
    base = tmp_path_factory.mktemp("e2e")
    items = [item for item in request.session.items if item.module is request.module]
    wanted = {item.callspec.params["lesson"] for item in items if getattr(item, "callspec", None) and "lesson" in item.callspec.params}
    if any(item.name.startswith("test_a_naive") for item in items):
        wanted.add("04-minimax")
    jobs = []
    for lesson, (replacements, _) in BUGS.items():
        if lesson not in wanted:
            continue
        course = make_course(base / lesson, lessons=[lesson])
        nbgrader(course, "generate_assignment", lesson)
        released = nbformat.read(course / "release" / lesson / f"{lesson}.ipynb", as_version=4)
        source = nbformat.read(course / "source" / lesson / f"{lesson}.ipynb", as_version=4)
        for old, _ in replacements:
            assert any(old in c.source for c in source.cells if is_solution(c)), f"the bug for {lesson} must apply"
        _submit(course, "solved", lesson, _submission(released, source))
        _submit(course, "untouched", lesson, released)
        _submit(course, "buggy", lesson, _submission(released, source, edit=lambda s, r=replacements: _plant(s, r)))
        jobs.append((lesson, course))
        if lesson == "04-minimax":
            naive_course = make_course(base / "naive", lessons=[lesson])
            nbgrader(naive_course, "generate_assignment", lesson)
            _submit(naive_course, "naive", lesson, _naive(released))
            jobs.insert(0, ("naive", naive_course))
    jobs.sort(key=lambda job: job[0] not in ("naive", "04-minimax"))  # the longest first

    def autograde(job):
        name, course = job
        lesson = "04-minimax" if name == "naive" else name
        start = time.perf_counter()
        nbgrader(course, "autograde", lesson, "--create", timeout=900)
        return name, (course, time.perf_counter() - start)

    start = time.perf_counter()
    results = dict(in_parallel(autograde, jobs))
    print(f"\nautograded {len(jobs)} courses (19 submissions), two at a time, in {time.perf_counter() - start:.0f} s")
    return results


def _scores(course: Path, lesson: str, student: str) -> dict[str, tuple[float, float]]:
    """Return grade id -> (score, max score) of the autograded cells of one submission (written answers, graded by hand, left out)."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gb:
        submission = gb.find_submission_notebook(lesson, lesson, student)
        return {g.name: (g.score, g.max_score) for g in submission.grades if g.max_score > 0 and g.cell.cell_type == "code"}


def _autograded(course: Path, lesson: str, student: str) -> nbformat.NotebookNode:
    return nbformat.read(course / "autograded" / student / lesson / f"{lesson}.ipynb", as_version=4)


@pytest.mark.parametrize("lesson", list(BUGS))
def test_solutions_get_full_marks_and_run_without_an_error(graded, lesson):
    course, seconds = graded[lesson]
    scores = _scores(course, lesson, "solved")
    assert scores and all(score == top for score, top in scores.values()), scores
    nb = _autograded(course, lesson, "solved")
    assert errors(nb) == []
    for cell in nb.cells:
        if is_grade(cell) and not is_solution(cell):  # the hidden tests ran: each check printed its summary
            printed = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
            assert re.search(r"correct on|nodes visited", printed), printed
    print(f"{lesson}: autograded 3 submissions in {seconds:.0f} s")


@pytest.mark.parametrize("lesson", list(BUGS))
def test_untouched_release_scores_zero_failing_only_on_the_stubs(graded, lesson):
    course, _ = graded[lesson]
    scores = _scores(course, lesson, "untouched")
    assert scores and all(score == 0 for score, _ in scores.values()), scores
    assert {name for _, name, _ in errors(_autograded(course, lesson, "untouched"))} == {"NotImplementedError"}


@pytest.mark.parametrize("lesson", list(BUGS))
def test_a_planted_bug_loses_exactly_its_cells(graded, lesson):
    course, _ = graded[lesson]
    _, lost = BUGS[lesson]
    scores = _scores(course, lesson, "buggy")
    assert {name for name, (score, top) in scores.items() if score < top} == lost, scores
    assert all(scores[name][0] == 0 for name in lost)
    nb = _autograded(course, lesson, "buggy")
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "error" and out.ename == "CheckFailed":  # a hidden test failed:
                assert len(out.traceback) == 1 and "check_" not in out.traceback[0]  # its message alone
    if lesson == "04-minimax":  # once found only by the hidden check; now a visible test catches it
        (found,) = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
        assert found.ename == "CheckFailed" and found.evalue.startswith("minimax(board): O wins with a fork at (2, 1)")


def test_a_naive_cs50_minimax_gets_full_marks_within_the_default_timeout(graded):
    course, seconds = graded["naive"]
    scores = _scores(course, "04-minimax", "naive")
    assert scores == {"minimax-tests": (10.0, 10.0)}
    nb = _autograded(course, "04-minimax", "naive")
    assert errors(nb) == []
    printed = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "stream")
    check = re.search(r"minimax: correct on .*", printed).group(0)
    assert "not run while the notebook is graded" in printed  # the node count from the empty board: a demonstration
    print(f"\nnaive CS50 minimax: the whole notebook autograded in {seconds:.1f} s; hidden check: {check}")
