"""One slip, one function: a realistic slip planted in one graded function of a lesson fails that
function's test cells, visible tests and hidden tests alike, and every other test cell of the
lesson passes, though the other functions call the slipped one (lesson 1's result calls player
and actions, lesson 2's terminal and utility call winner, lesson 6's evaluate calls line_score and
depth_limited_move calls evaluate).

Each lesson runs once, in one kernel (nbclient), as the instructor's notebook: its real cells, hidden
tests included, top to bottom (the "check my work" cell left out, demonstrations shrunk as while
graded); then, for each slip, the solution cell with the slip planted, every test cell of the
lesson again, and the solution cell as written, to put it back. The slips in a function another
one calls are checked in the grader's re-check too (lessons 1, 2 and 6), the submission's
functions in their sandbox: the visible tests there.
"""

from __future__ import annotations

import copy
import re

import nbformat
import pytest

from lesson_code import BUGS, LESSONS, is_grade, is_solution, notebook
from notebook_runs import errors, execute, in_parallel

pytestmark = pytest.mark.slow

# For each lesson: (the slip, the test cells it must fail). Every graded function has one at least.
SLIPS = {
    "01-boards-and-moves": [("player-counts-only-x", {"player-tests"}),
                            ("actions-transposed-used-by-result", {"actions-tests"}),
                            ("result-changes-its-input", {"result-tests"})],
    "02-who-won": [("winner-returns-the-player-to-move", {"winner-tests"}),
                   ("winner-without-the-anti-diagonal", {"winner-tests"}),
                   ("terminal-notices-only-x-wins", {"terminal-tests"}),
                   ("utility-o-wins-1", {"utility-tests"}),
                   ("rk-board-swaps-x-and-o", {"rk-board-tests"}),
                   ("poss-win-rows-only", {"poss-win-tests"})],
    "03-rule-based-players": [("win-block-never-blocks", {"win-block-tests"})],
    "04-minimax": [("minimax-max-of-max", {"minimax-tests"}),
                   ("minimax-no-none-when-over", {"minimax-tests"})],
    "05-alpha-beta": [("alphabeta-min-from-0", {"alphabeta-correct", "alphabeta-prunes"}),
                      ("alphabeta-cuts-off-only-on-strict", {"alphabeta-prunes"})],
    "06-heuristics-and-depth-limits": [("line-score-15-for-two", {"line-score-tests"}),
                                       ("evaluate-adds-o", {"evaluate-tests"}),
                                       ("depth-limited-root-searches-at-depth", {"depth-limited-tests"})],
}


def _bug(name: str):
    return next(b for b in BUGS if b.name == name)


def _grade_id(cell) -> str:
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")


def _graded_functions(lesson: str) -> set[str]:
    """Return the functions whose solution is written in `lesson`: the names its solution cells define with a stub."""
    import ast

    names = set()
    for cell in notebook(lesson).cells:
        if cell.cell_type == "code" and is_solution(cell):
            for node in ast.parse(cell.source).body:
                if isinstance(node, ast.FunctionDef) and "### BEGIN SOLUTION" in ast.get_source_segment(cell.source, node):
                    names.add(node.name)
    return names


def test_every_graded_function_of_every_lesson_has_a_slip():
    parts = {"max_value", "min_value", "value"}  # the parts of minimax, alphabeta and depth_limited_move
    for lesson in LESSONS:
        slipped = {_bug(name).function for name, _ in SLIPS[lesson]}
        assert _graded_functions(lesson) - parts == slipped, lesson
        tests = {_grade_id(c) for c in notebook(lesson).cells if is_grade(c) and not is_solution(c) and c.cell_type == "code"}
        for name, failing in SLIPS[lesson]:
            assert _bug(name).applies() and _bug(name).lesson == lesson and failing <= tests, name


def _tagged(cell, **tags):
    """Return a new code cell (an id of its own) with `cell`'s source and metadata, tagged with `tags`."""
    return nbformat.v4.new_code_cell(cell.source, metadata={**copy.deepcopy(cell.metadata), "slip": tags})


def slipped_notebook(lesson: str) -> nbformat.NotebookNode:
    """Return `lesson`'s source notebook, as written, then once more for each slip of `SLIPS`: the slipped
    solution cell, every test cell, and the solution cell as written."""
    nb = notebook(lesson)
    cells = [c for c in nb.cells if not (c.cell_type == "code" and "check_my_work" in c.source)]
    runs = [_tagged(c, slip="", grade_id=_grade_id(c)) if is_grade(c) and c.cell_type == "code" else c for c in cells]
    tests = [c for c in cells if c.cell_type == "code" and is_grade(c) and not is_solution(c)]
    for name, _ in SLIPS[lesson]:
        bug = _bug(name)
        slipped = [c for c in cells if c.cell_type == "code" and is_solution(c) and bug.plant(c.source) != c.source]
        assert slipped, name
        for cell in slipped:
            runs.append(nbformat.v4.new_code_cell(bug.plant(cell.source)))
        runs += [_tagged(c, slip=name, grade_id=_grade_id(c)) for c in tests]
        runs += [nbformat.v4.new_code_cell(c.source) for c in slipped]
    nb.cells = runs
    return nb


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, nbformat.NotebookNode]:
    """Return {lesson: its slipped notebook as run}, two lessons at a time, as while graded (NBGRADER_EXECUTION)."""
    base = tmp_path_factory.mktemp("slips")

    def run(lesson):
        source = base / f"{lesson}.ipynb"
        nbformat.write(slipped_notebook(lesson), source)
        return lesson, execute(source, base / f"{lesson}.ran.ipynb", timeout=600, env={"NBGRADER_EXECUTION": "autograde"})

    return dict(in_parallel(run, sorted(LESSONS, key=lambda lesson: lesson not in ("02-who-won", "04-minimax"))))


def _verdicts(nb) -> dict[tuple[str, str], str]:
    """Return {(slip, grade id): the error it raised ('' if it passed)} for the tagged test cells of a run."""
    failed = {k: f"{name}: {message}" for k, name, message in errors(nb)}
    return {(c.metadata["slip"]["slip"], c.metadata["slip"]["grade_id"]): failed.get(k, "")
            for k, c in enumerate(nb.cells) if "slip" in c.metadata}


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_slip_fails_only_the_test_cells_of_its_function(runs, lesson):
    verdicts = _verdicts(runs[lesson])
    untagged = [(k, name, message[:300]) for k, name, message in errors(runs[lesson]) if "slip" not in runs[lesson].cells[k].metadata]
    assert untagged == [], f"{lesson}: a cell other than a test cell failed"
    as_written = {grade_id: error for (slip, grade_id), error in verdicts.items() if slip == ""}
    assert as_written and all(error == "" for error in as_written.values()), as_written
    for name, failing in SLIPS[lesson]:
        function = _bug(name).function
        mine = {grade_id: error for (slip, grade_id), error in verdicts.items() if slip == name}
        assert set(mine) == set(as_written), name
        assert {grade_id for grade_id, error in mine.items() if error} == failing, (name, {g: e[:400] for g, e in mine.items() if e})
        for grade_id in failing:
            assert f"{function}(" in mine[grade_id].split("\n")[0], (name, grade_id, mine[grade_id][:400])


def test_a_slip_in_winner_is_told_in_winner_s_cell_and_terminal_s_says_who_stood_in(runs):
    """The case that showed the problem: winner returns the player to move. Its own cell says so; utility's,
    which calls it, passes; its hidden test says it ran with the CS50 winner."""
    nb = runs["02-who-won"]
    verdicts = _verdicts(nb)
    assert verdicts["winner-returns-the-player-to-move", "winner-tests"].startswith("CheckFailed: winner(board): X has the top row")
    utility = next(c for c in nb.cells if c.metadata.get("slip") == {"slip": "winner-returns-the-player-to-move", "grade_id": "utility-tests"})
    printed = "".join(o.get("text", "") for o in utility.outputs if o.output_type == "stream")
    assert "✓ utility passes the visible tests" in printed and "with the CS50 winner in place of yours" in printed, printed


# --- the same in the grader's re-check: the test cells here, the submission's functions in its sandbox --------

RE_CHECKED = [("01-boards-and-moves", "player-counts-only-x"), ("01-boards-and-moves", "actions-transposed-used-by-result"),
              ("02-who-won", "winner-returns-the-player-to-move"), ("06-heuristics-and-depth-limits", "line-score-15-for-two"),
              ("06-heuristics-and-depth-limits", "evaluate-adds-o")]  # a slip in a function another one calls


def _visible_only(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    for cell in nb.cells:
        if cell.cell_type == "code" and is_grade(cell):
            cell.source = re.sub(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS\n?", "", cell.source, flags=re.S)
    return nb


@pytest.mark.parametrize("lesson, name", RE_CHECKED, ids=[name for _, name in RE_CHECKED])
def test_in_the_re_check_a_slip_fails_only_the_visible_tests_of_its_function(lesson, name, tmp_path):
    """The grader's re-check runs the test cells here, the submission's functions in its sandbox: the
    stand-ins are put in place in the sandbox, and the slip fails only its function's visible tests.
    The hidden tests are left out here: they put the stand-ins in place the same way (and run in the
    kernel above); through the sandbox, a call at a time, they take minutes a lesson on a busy machine."""
    from grader.recheck import run, student_launcher

    failing = dict(SLIPS[lesson])[name]
    source = tmp_path / "lesson" / f"{lesson}.ipynb"
    source.parent.mkdir()
    nbformat.write(_visible_only(notebook(lesson)), source)
    submitted = _visible_only(notebook(lesson))
    for cell in submitted.cells:
        if cell.cell_type == "code" and is_solution(cell):
            cell.source = _bug(name).plant(cell.source)
    path = tmp_path / "submitted" / f"{lesson}.ipynb"
    path.parent.mkdir()
    nbformat.write(submitted, path)
    verdicts, _ = run(path, lesson=source, timeout=120, launcher=student_launcher(under=tmp_path))
    lost = {grade_id: verdict.message for grade_id, verdict in verdicts.items() if not verdict.passed}
    assert set(lost) == failing, (name, {g: m[:400] for g, m in lost.items()})
    function = _bug(name).function
    assert all(message.split("\n")[0].startswith(f"CheckFailed: {function}(") for message in lost.values()), lost
