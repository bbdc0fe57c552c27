"""The re-check apart from the notebook (``grader.recheck``), run directly on small notebooks: the
submission's definitions in a student server, the test cells here. It sees the grading environment
the kernel sees, and it judges the plain values the submission's functions hand to the grader: a
lying subclass arrives as the plain value it holds. Then in ttt-grader, with real nbgrader and
kernels: the hidden checks run in the re-check only, and what they find is what the autograded
notebook and the feedback show."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
import pytest

from grader.autograde import autograde
from grader.checks.display import APART
from grader.course_ops import feedback
from grader.recheck import run, student_launcher

sys.path.insert(0, str(Path(__file__).parent))
import grading_course as gc  # noqa: E402
from ttt.limits import over_limit

pytestmark = pytest.mark.slow


def notebook(tmp_path, definitions: str, tests: dict[str, str]):
    """Writes a submission (one solution cell of `definitions`, then a graded test cell per entry)
    and its lesson's release (the same with the answer left blank); returns their paths."""
    paths = []
    for name, answer in (("submission", definitions), ("release", "# YOUR CODE HERE\nraise NotImplementedError()")):
        cells = [nbformat.v4.new_code_cell(answer, metadata={"nbgrader": {
            "solution": True, "grade": False, "grade_id": "answer", "locked": False, "schema_version": 3}})]
        for grade_id, source in tests.items():
            cells.append(nbformat.v4.new_code_cell(source, metadata={"nbgrader": {
                "solution": False, "grade": True, "grade_id": grade_id, "points": 1, "locked": True, "schema_version": 3}}))
        (tmp_path / name).mkdir(exist_ok=True)
        paths.append(tmp_path / name / "lesson.ipynb")
        nbformat.write(nbformat.v4.new_notebook(cells=cells), paths[-1])
    return paths


def test_the_re_check_sees_the_grading_environment_so_demonstrations_shrink(tmp_path, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)  # the grader's own process need not have it
    path, release = notebook(tmp_path, "import ttt\nif ttt.autograding():\n    SIZE = 'small'\nelse:\n    SIZE = 'whole game tree'\n",
                             {"shrunk": "assert SIZE == 'small', SIZE"})
    verdicts, notes = run(path, lesson=release, timeout=30, launcher=student_launcher(under=tmp_path))
    assert list(verdicts) == ["shrunk"] and verdicts["shrunk"].passed and notes == []


def test_values_the_submission_passes_itself_are_its_own_but_what_reaches_the_grader_is_plain(tmp_path):
    # the lying subclass's __eq__ works inside the sandbox, among the submission's own functions; the
    # grader receives the plain str it holds, so the cheat fails, and the lie is noted
    definitions = ("class Yes(str):\n    def __eq__(self, other):\n        return True\n    __hash__ = str.__hash__\n\n"
                   "def inner():\n    return Yes('X')\n\n"
                   "def honest():\n    return str.__str__(inner()) if inner() == 'X' else 'O'\n\n"
                   "def cheat():\n    return inner()\n")
    path, release = notebook(tmp_path, definitions, {"honest": "assert honest() == 'X'", "cheat": "assert cheat() == 'O'"})
    verdicts, notes = run(path, lesson=release, timeout=30, launcher=student_launcher(under=tmp_path))
    assert verdicts["honest"].passed and verdicts["honest"].message == ""
    assert not verdicts["cheat"].passed and verdicts["cheat"].ename == "AssertionError"
    assert any(note.startswith("cheat returned a Yes (a subclass of str)") for note in notes), notes


# -- in ttt-grader: the hidden checks run in the re-check only ------------------------------------

COUNTED_PLAYER = ("def player(board):\n"
                  "    print('§', end='')  # one mark a call: the re-check keeps what the submission prints\n"
                  "    xs = sum(row.count('X') for row in board)\n"
                  "    return 'X' if xs == sum(row.count('O') for row in board) else 'O'\n")
WRONG_PLAYER = "def player(board):\n    return 'X'"  # right on the empty board, the visible test's
LOOPING_PLAYER = ("def player(board):\n"
                  "    while sum(row.count(None) for row in board) == 1:  # one square left: never returns\n"
                  "        pass\n"
                  "    xs = sum(row.count('X') for row in board)\n"
                  "    return 'X' if xs == sum(row.count('O') for row in board) else 'O'\n")


@pytest.mark.slow
def test_the_hidden_checks_run_once_in_the_re_check_whose_result_the_feedback_shows(tmp_path):
    course = gc.make_course(tmp_path / "course", timeout=10)
    gc.submit(course, "counted", gc.solved(course, player=COUNTED_PLAYER))
    gc.submit(course, "wrong", gc.solved(course, player=WRONG_PLAYER))
    gc.submit(course, "loops", gc.solved(course, player=LOOPING_PLAYER))
    outcomes = {o.student: o for o in autograde(course, jobs=2, progress=False)}
    scores = gc.grades(course)
    assert [scores[(s, "test_player")] for s in ("counted", "wrong", "loops")] == [2, 0, 0]
    assert scores[("loops", "test_count_empty")] == 1  # only the looping function's marks are lost
    # a wrong answer or an endless loop is no cheat; the loop is reported as timed out
    assert outcomes["counted"].suspicious == outcomes["wrong"].suspicious == outcomes["loops"].suspicious == []
    assert outcomes["loops"].problems == ["test cell test_player timed out: " + over_limit("it", 10)]

    def test_cell(student):
        nb = nbformat.read(course / "autograded" / student / gc.LESSON / f"{gc.LESSON}.ipynb", as_version=4)
        return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_player")

    right, wrong = test_cell("counted"), test_cell("wrong")
    assert [o.output_type for o in right.outputs] == ["stream"] and "hidden tests: player: correct on" in right.outputs[0].text
    # the test cell shows the re-check's run, which called player thousands of times (not the kernel's one call)
    assert right.outputs[0].text.count("§") > 4_000
    assert wrong.outputs[-1].output_type == "error" and wrong.outputs[-1].ename == "CheckFailed"
    assert "player(board)" in wrong.outputs[-1].evalue and "board:" in wrong.outputs[-1].evalue  # the board drawn
    assert all(APART not in o.get("text", "") for o in right.outputs + wrong.outputs)
    page = feedback(course, students=["wrong"])[0].read_text()
    assert "player(board)" in page and APART not in page
    looped = test_cell("loops").outputs[-1]
    assert (looped.output_type, looped.ename) == ("error", "TimeoutError")
    assert "still in the call player(board)" in looped.evalue and "as a list: [[" in looped.evalue


def test_a_check_out_of_cpu_time_names_the_call_it_was_making(tmp_path):
    path, release = notebook(tmp_path, "def minimax(board):\n    while True:\n        pass\n",
                             {"loops": "from grader.checks import check_minimax\n_ = check_minimax(minimax)"})
    verdict = run(path, lesson=release, timeout=2, launcher=student_launcher(under=tmp_path))[0]["loops"]
    assert not verdict.passed and verdict.ename == "TimeoutError" and verdict.hidden  # a hidden check's failure
    assert "more than its 2 s of CPU time, still in the call minimax(board)" in verdict.evalue
    assert "board:" in verdict.evalue and "as a list: [[" in verdict.evalue  # the board it was given, drawn


def test_a_function_that_ends_its_process_in_a_lesson_cell_costs_only_its_own_tests(tmp_path):
    # the lesson's own cell calls the student's function on the grader's side; the process it ends is
    # the sandbox's, and the error stays with that statement: the re-check goes on, nothing escapes
    path, release = notebook(tmp_path, "import os\n\nclass Stop(KeyboardInterrupt):\n    pass\n\n"
                                       "def player(board):\n    os._exit(7)\n\ndef stops():\n    raise Stop()\n",
                             {"plays": "assert player([[None] * 3] * 3) == 'X'", "fine": "assert 1 + 1 == 2"})
    lesson = nbformat.read(release, as_version=4)
    lesson.cells.insert(1, nbformat.v4.new_code_cell("probe = player([[None] * 3] * 3)\nother = stops()"))
    nbformat.write(lesson, release)
    verdicts, _ = run(path, lesson=release, timeout=30, launcher=student_launcher(under=tmp_path))
    assert not verdicts["plays"].passed and verdicts["fine"].passed


def test_a_value_that_names_a_module_of_the_package_imports_nothing_here(tmp_path, monkeypatch):
    # a NamedTuple that claims to be one of ttt's (here ttt.__main__'s, which would run the command line)
    # is no value of the protocol: the grader imports nothing on the submission's word
    monkeypatch.delitem(sys.modules, "ttt.__main__", raising=False)
    path, release = notebook(tmp_path, "import collections, sys, types\n"
                                       "fake = types.ModuleType('ttt.__main__')\n"
                                       "fake.P = collections.namedtuple('P', 'a', module='ttt.__main__')\n"
                                       "ok = sys.modules.setdefault('ttt.__main__', fake)\nboom = fake.P(1)\n"
                                       "def player(board):\n    return fake.P(1)\n",
                             {"plays": "assert player([[None] * 3] * 3) == 'X'", "fine": "assert 1 + 1 == 2"})
    verdicts, notes = run(path, lesson=release, timeout=30, launcher=student_launcher(under=tmp_path))
    assert "ttt.__main__" not in sys.modules
    assert not verdicts["plays"].passed and verdicts["fine"].passed
    assert any("sys.modules" in note for note in notes), notes


def test_a_test_cells_source_comes_from_the_lesson_never_from_the_submission(tmp_path):
    # a submission whose copy of a test cell says something else (a copied cell with its grade id,
    # say): the grader runs the lesson's own test, and nothing of the submission on its side
    path, release = notebook(tmp_path, "def player(board):\n    return 'X'\n", {"plays": "assert player(None) == 'X'"})
    submitted = nbformat.read(path, as_version=4)
    submitted.cells[1].source = "import os\nos.environ['TTT_FORGED'] = '1'\nraise AssertionError('forged')"
    nbformat.write(submitted, path)
    verdicts, _ = run(path, lesson=release, timeout=30, launcher=student_launcher(under=tmp_path))
    assert verdicts["plays"].passed and "TTT_FORGED" not in os.environ


COPIES_THE_REFERENCE = '''\
import functools, types
import ttt.games.classic as _rules

def _copy(value, namespace):  # a new function from the reference's own code, made while loading
    function = getattr(value, "__wrapped__", value)
    if not isinstance(function, types.FunctionType) or function.__closure__:
        return value
    copied = types.FunctionType(function.__code__.replace(), namespace, "copied", function.__defaults__)
    return functools.lru_cache(maxsize=None)(copied) if hasattr(value, "cache_info") else copied

def _copies():
    found = {"__builtins__": __builtins__}
    found.update({name: _copy(value, found) for name, value in vars(_rules).items() if not name.startswith("__")})
    return found

_solve = _copies()["solve"]  # an assignment: what the re-check loads

def minimax(board):
    cells = "".join("." if c is None else c for row in board for c in row)
    return None if _solve(cells)[1] is None else divmod(_solve(cells)[1], 3)
'''


@pytest.mark.parametrize("definitions", [
    COPIES_THE_REFERENCE,
    # the reference's private helper, called as it is
    "from ttt.games.classic import _negamax, is_terminal\n\ndef minimax(board):\n"
    "    cells = [c for row in board for c in row]\n"
    "    if is_terminal(''.join('.' if c is None else c for c in cells)):\n"
    "        return None\n"
    "    xs = sum(1 << i for i, c in enumerate(cells) if c == 'X')\n"
    "    os = sum(1 << i for i, c in enumerate(cells) if c == 'O')\n"
    "    square = _negamax(xs, os)[1] if cells.count('X') == cells.count('O') else _negamax(os, xs)[1]\n"
    "    return None if square is None else divmod(square, 3)\n",
], ids=["copied-at-load", "private-helper"])
def test_the_reference_copied_while_loading_or_reached_through_its_helper_is_refused(tmp_path, definitions):
    path, release = notebook(tmp_path, definitions,
                             {"solves": "from grader.checks import check_minimax\n_ = check_minimax(minimax)"})
    verdict = run(path, lesson=release, timeout=30, launcher=student_launcher(under=tmp_path))[0]["solves"]
    assert not verdict.passed and "the reference solution this lesson asks you to write yourself" in verdict.evalue, \
        verdict.evalue


def test_code_that_remakes_functions_or_runs_beside_the_checks_is_noted_for_the_instructor():
    from grader.recheck import _reaching

    def cells(source):
        return [{"source": source, "meta": {"solution": True, "grade_id": "answer"}}]

    lesson = cells("# YOUR CODE HERE")
    assert _reaching(cells(COPIES_THE_REFERENCE), lesson) == \
        ["cell answer reaches for FunctionType (functions' code), __closure__ (functions' code), __code__ (functions' code)"]
    assert _reaching(cells("import threading\ndef minimax(board):\n    return None"), lesson) == \
        ["cell answer reaches for threading (threads (code running between the checks))"]
    honest = "def minimax(board):\n    best = max(actions(board), key=lambda a: value(result(board, a)))\n    return best"
    assert _reaching(cells(honest), lesson) == []
    timed = "import os\ndef minimax(board):\n    used = os.times().system\n    return None"  # not os.system
    assert _reaching(cells(timed), lesson) == []
    copied = "import ttt.games.classic as r\n_mode = 'w'\nopen('mine.py', _mode).write(open(r.__file__).read())"
    assert _reaching(cells(copied), lesson) == \
        ["cell answer reaches for __file__ (the package's source), open() to write (the file system)"]
    for shell in ("import os as o\no.system('x')", "from os import system\nsystem('x')"):
        assert _reaching(cells(shell), lesson) == ["cell answer reaches for os.system (new processes)"], shell


def test_a_function_imported_while_loading_works_wherever_its_check_allows_it(tmp_path):
    # completed_lines (behind a cache) is what check_winner forbids, so it is switched off while the
    # definitions load; player may use it, and the import made while loading is the real one
    definitions = ("from ttt.games.classic import completed_lines\n\n"
                   "def player(board):\n"
                   "    assert not completed_lines('.' * 9)\n"
                   "    xs = sum(row.count('X') for row in board)\n"
                   "    return 'X' if xs == sum(row.count('O') for row in board) else 'O'\n\n"
                   "def winner(board):\n"
                   "    raise NotImplementedError()\n")
    path, release = notebook(tmp_path, definitions,
                             {"players": "from grader.checks import check_player\n_ = check_player(player)"})
    verdict = run(path, lesson=release, timeout=30, launcher=student_launcher(under=tmp_path))[0]["players"]
    assert verdict.passed, verdict.evalue


FILLS_A_TABLE_WHEN_READ = '''\
import numbers
import ttt.games.classic as _rules

_TABLE = {}

class _Lazy:  # registered as an integer: the grader's reading of it runs __index__
    def __index__(self):
        if not _TABLE:
            _TABLE.update((t, _rules.optimal_moves(t)[0]) for t in _rules.reachable_positions() if not _rules.is_terminal(t))
        return 0

_registered = numbers.Integral.register(_Lazy)
_warm = _Lazy()

def minimax(board):
    cells = "".join("." if c is None else c for row in board for c in row)
    return divmod(_TABLE[cells], 3) if cells in _TABLE else None
'''

READ_WITHOUT_END = '''\
class _Book(dict):  # the grader's look at what minimax uses reads its values
    def values(self):
        while True:
            pass

_BOOK = _Book()

def minimax(board):
    return _BOOK.get(str(board))
'''


def test_reading_the_submissions_values_runs_its_code_with_the_references_off_and_a_cpu_limit(tmp_path):
    tests = {"solves": "from grader.checks import check_minimax\n_ = check_minimax(minimax)"}
    (tmp_path / "lazy").mkdir()
    (tmp_path / "endless").mkdir()
    path, release = notebook(tmp_path / "lazy", FILLS_A_TABLE_WHEN_READ, tests)
    verdict = run(path, lesson=release, timeout=30, launcher=student_launcher(under=tmp_path))[0]["solves"]
    assert not verdict.passed  # its table stayed empty: the solver was switched off while the grader read _warm
    path, release = notebook(tmp_path / "endless", READ_WITHOUT_END, tests)
    started = time.monotonic()
    verdict = run(path, lesson=release, timeout=30, launcher=student_launcher(under=tmp_path))[0]["solves"]
    assert not verdict.passed and "the grader's look at the submission's objects" in verdict.evalue and "their own code runs when they are read" in verdict.evalue, verdict.evalue
    assert time.monotonic() - started < 600  # liveness: it was held without end before


def test_the_solver_called_while_loading_a_real_lesson_fills_nothing(tmp_path):
    # lesson 4 hands the student a board that plays the package's solver: the solver is still off
    # while the submission's definitions load
    from grader.course import lesson_path

    table = ("import ttt.games.classic as _rules\n\n"
             "_BEST = {t: divmod(_rules.optimal_moves(t)[0], 3) for t in _rules.reachable_positions() if not _rules.is_terminal(t)}\n\n"
             "def minimax(board):\n"
             "    return _BEST.get(''.join('.' if c is None else c for row in board for c in row))\n")
    nb = nbformat.read(lesson_path("04-minimax"), as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "minimax":
            cell.source = table
    (tmp_path / "unit").mkdir()
    nbformat.write(nb, tmp_path / "unit" / "04-minimax.ipynb")
    verdicts, _ = run(tmp_path / "unit" / "04-minimax.ipynb", lesson=lesson_path("04-minimax"), timeout=60,
                      launcher=student_launcher(under=tmp_path))
    assert verdicts and not any(v.passed for g, v in verdicts.items() if "minimax" in g and "answer" not in g), \
        {g: (v.passed, v.evalue[:200]) for g, v in verdicts.items()}


def test_an_answer_whose_reading_calls_the_solver_fails_as_its_own_error_and_the_process_goes_on(tmp_path):
    definitions = FILLS_A_TABLE_WHEN_READ.replace("    return divmod(_TABLE[cells], 3) if cells in _TABLE else None",
                                                  "    return None if '.' not in cells else (_Lazy(), _Lazy())")
    path, release = notebook(tmp_path, definitions,
                             {"solves": "from grader.checks import check_minimax\n_ = check_minimax(minimax)",
                              "later": "assert minimax([['X', 'O', 'X'], ['X', 'O', 'O'], ['O', 'X', 'X']]) is None"})
    verdicts = run(path, lesson=release, timeout=30, launcher=student_launcher(under=tmp_path))[0]
    assert not verdicts["solves"].passed and "the reference solution" in verdicts["solves"].evalue, verdicts["solves"].evalue
    assert verdicts["later"].passed, verdicts["later"].evalue  # its process loaded (reading _warm failed) and goes on
