"""ttt-grader's commands, end to end with real nbgrader runs: release, collect, autograde,
feedback, export, and check on plain CS50 files (each check in a real subprocess)."""

from __future__ import annotations

import csv
import re
import json
import shutil
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import grading_course as gc  # noqa: E402

from grader.cli import main  # noqa: E402
from ttt.limits import over_limit  # noqa: E402

# A correct CS50 file whose minimax is memoized, so checking it takes seconds, not minutes
# (the naive solution, data/naive_tictactoe.py, is graded in test_grades_under_load).
MEMOIZED = '''
import math
from functools import lru_cache

X, O, EMPTY = "X", "O", None

def initial_state():
    return [[EMPTY] * 3 for _ in range(3)]

def player(board):
    xs = sum(row.count(X) for row in board)
    os_ = sum(row.count(O) for row in board)
    return X if xs == os_ else O

def actions(board):
    return {(i, j) for i in range(3) for j in range(3) if board[i][j] is EMPTY}

def result(board, action):
    i, j = action
    if not (0 <= i < 3 and 0 <= j < 3) or board[i][j] is not EMPTY or terminal(board):
        raise ValueError("invalid action")
    new = [row[:] for row in board]
    new[i][j] = player(board)
    return new

LINES = [[(r, c) for c in range(3)] for r in range(3)] + [[(r, c) for r in range(3)] for c in range(3)] \\
    + [[(0, 0), (1, 1), (2, 2)], [(0, 2), (1, 1), (2, 0)]]

def winner(board):
    for line in LINES:
        values = {board[r][c] for r, c in line}
        if len(values) == 1 and EMPTY not in values:
            return values.pop()
    return None

def terminal(board):
    return winner(board) is not None or all(EMPTY not in row for row in board)

def utility(board):
    return {X: 1, O: -1}.get(winner(board), 0)

@lru_cache(maxsize=None)
def _value(key):
    board = [list(row) for row in key]
    if terminal(board):
        return utility(board)
    values = [_value(tuple(map(tuple, result(board, a)))) for a in actions(board)]
    return max(values) if player(board) == X else min(values)

def minimax(board):
    if terminal(board):
        return None
    pick = max if player(board) == X else min
    return pick(sorted(actions(board)), key=lambda a: _value(tuple(map(tuple, result(board, a)))))
'''


@pytest.mark.slow
def test_check_passes_a_correct_cs50_file(tmp_path, capsys):
    path = tmp_path / "tictactoe.py"
    path.write_text(MEMOIZED)
    assert main(["check", str(path), "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    assert [r["function"] for r in results] == ["initial_state", "player", "actions", "result", "winner", "terminal", "utility", "minimax"]
    assert all(r["passed"] and r["broken_by"] == [] for r in results), results
    assert all(r["message"].startswith(f"{r['function']}: correct on ") for r in results), results


@pytest.mark.slow
def test_check_grades_each_function_on_its_own(tmp_path):
    from grader.cs50file import check_file

    path = tmp_path / "tictactoe.py"
    path.write_text(MEMOIZED.replace("def winner(board):\n", "def winner(board):\n    return None\n"))
    results = {r.function: r for r in check_file(path, functions=("winner", "terminal", "utility", "minimax"))}
    assert not results["winner"].passed and "wrong winner" in results["winner"].message
    assert all(results[f].passed for f in ("terminal", "utility", "minimax")), results


@pytest.mark.slow
def test_check_survives_hostile_files(tmp_path, capsys):
    path = tmp_path / "tictactoe.py"
    path.write_text(MEMOIZED.replace("def minimax(board):\n", "def minimax(board):\n    while True:\n        pass\n")
                    .replace("def player(board):\n", "def player(board):\n    import os\n    os._exit(7)\n")
                    .replace("def utility(board):\n    return", "def utility(board):\n    return 2 *"))
    assert main(["check", str(path), "--timeout", "15"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  minimax" in out and "timed out: " + over_limit("the check of minimax", 15) in out
    assert "FAIL  player" in out and "ended the process it ran in (exit status 7)" in out
    assert "player(board): ended the process" in out and "as a list: [[" in out  # the call and the board the file died in
    assert "FAIL  utility" in out and "PASS  winner" in out
    broken = tmp_path / "broken.py"
    broken.write_text("def player(board)\n    return 'X'\n")
    assert main(["check", str(broken), "--json"]) == 1
    results = json.loads(capsys.readouterr().out)
    assert all("SyntaxError" in r["message"] for r in results)


@pytest.mark.slow
def test_five_commands_on_a_small_course(tmp_path, capsys):
    course = gc.make_course(tmp_path / "course")
    inbox = tmp_path / "inbox"
    (inbox / "Ada Lovelace").mkdir(parents=True)
    nbformat.write(gc.solved(course), inbox / "Ada Lovelace" / "tiny.ipynb")  # a folder per student
    nbformat.write(gc.solved(course, player="def player(board):\n    return 'X'"), inbox / "grace-tiny.ipynb")
    nbformat.write(gc.released(course), inbox / "untitled.ipynb")  # no lesson, no student: reported
    with zipfile.ZipFile(inbox / "canvas.zip", "w") as archive:  # an LMS export
        archive.writestr("alan_late_1234_5678_tiny.ipynb", nbformat.writes(gc.solved(course)))  # Canvas
        archive.writestr("Kurt Goedel_42_assignsubmission_file_/tiny.ipynb", nbformat.writes(gc.solved(course)))  # Moodle
    assert main(["collect", str(inbox), "--course", str(course)]) == 0  # what could be placed was: the rest are in
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith(f"4 placed in {course}/submitted/ (4 students); 1 not placed: untitled.ipynb: no lesson")
    assert sorted(p.parent.parent.name for p in (course / "submitted").glob("*/tiny/tiny.ipynb")) == \
        ["ada_lovelace", "alan_1234", "grace", "kurt_goedel_42"]

    assert main(["autograde", "--course", str(course), "--jobs", "2", "-q"]) == 0
    out = capsys.readouterr().out
    assert "4 of 4 submissions graded (4 now" in out and re.search(r"grace +1/3", out)
    assert main(["autograde", "--course", str(course), "--student", "grace", "--force", "-q"]) == 0
    assert "1 of 1 submissions graded (1 now" in capsys.readouterr().out

    assert main(["feedback", "--course", str(course)]) == 0
    html = (course / "feedback" / "grace" / "tiny" / "tiny.html").read_text()
    assert "wrong player" in html and gc.HIDDEN_MARK not in html and "check_player" not in html

    grades = tmp_path / "grades.csv"
    assert main(["export", "--course", str(course), "-o", str(grades), "--detail"]) == 0
    rows = {r["student"]: r for r in csv.DictReader(grades.open())}
    assert rows["ada_lovelace"]["tiny"] == "3.0" and rows["grace"]["tiny"] == "1.0"
    assert rows["grace"]["tiny:test_player"] == "0.0" and rows["grace"]["tiny:test_count_empty"] == "1.0"


@pytest.mark.slow
def test_release_and_grade_the_real_lessons(tmp_path, capsys):
    from grader.course import lesson_names, lesson_path

    lessons = lesson_names()
    assert lessons, "no lessons in notebooks/"
    course = tmp_path / "course"
    assert main(["release", "--course", str(course), "--lesson", lessons[0]]) == 0
    released = course / "release" / lessons[0] / f"{lessons[0]}.ipynb"
    assert released.exists()
    for student, notebook in [("solved", lesson_path(lessons[0])), ("blank", released)]:
        folder = course / "submitted" / student / lessons[0]
        folder.mkdir(parents=True)
        shutil.copyfile(notebook, folder / f"{lessons[0]}.ipynb")
    assert main(["autograde", "--course", str(course), "--jobs", "2", "-q"]) == 0
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        solved = gb.find_submission(lessons[0], "solved")
        blank = gb.find_submission(lessons[0], "blank")
        assert solved.score == solved.max_score > 0
        assert blank.score == 0


@pytest.mark.parametrize("path, student, lesson", [
    ("alice/01-boards-and-moves.ipynb", "alice", "01-boards-and-moves"),
    ("Bob Smith/01 Boards and Moves (1).ipynb", "bob_smith", "01-boards-and-moves"),
    ("carol/01-boards-and-moves/Untitled.ipynb", "carol", "01-boards-and-moves"),
    ("dave_late_123_456_01-boards-and-moves.ipynb", "dave_123", "01-boards-and-moves"),
    ("Eve Adams_77_assignsubmission_file_/02_who_won.ipynb", "eve_adams_77", "02-who-won"),
    ("Lesson2_frank_attempt_2026-11-20-10-00-00_02-who-won.ipynb", "frank", "02-who-won"),
    ("gina-02-who-won.ipynb", "gina", "02-who-won"),
    ("02-who-won.ipynb", None, "02-who-won"),
    ("hank/notes.ipynb", None, None),
])
def test_collect_maps_names(tmp_path, path, student, lesson):
    from grader.collect import collect

    course = tmp_path / "course"
    for name in ("01-boards-and-moves", "02-who-won"):
        (course / "source" / name).mkdir(parents=True)
        nbformat.write(nbformat.v4.new_notebook(), course / "source" / name / f"{name}.ipynb")
    inbox = tmp_path / "inbox"
    (inbox / path).parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(), inbox / path)
    report = collect(inbox, course)
    if student is None:
        assert report.placed == [] and report.unplaced[0][0] == path
    else:
        assert [(s, l) for s, l, _ in report.placed] == [(student, lesson)]
        assert (course / "submitted" / student / lesson / f"{lesson}.ipynb").exists()


@pytest.fixture(scope="module")
def small_course(tmp_path_factory):
    """A released one-lesson course with one submission (by ada), nothing graded yet."""
    course = gc.make_course(tmp_path_factory.mktemp("small") / "course")
    gc.submit(course, "ada")
    return course


@pytest.mark.parametrize("command", [["export", "-o", "x.csv"], ["feedback"], ["autograde", "-q"],
                                     ["collect", "."]])
def test_every_command_needs_a_released_course(tmp_path, capsys, command):
    missing = tmp_path / "no" / "such"
    assert main([*command, "--course", str(missing)]) == 2
    out, err = capsys.readouterr()
    assert "run `ttt-grader release` first" in err and str(missing) in err
    assert "Traceback" not in err and "sqlite" not in err.lower() and "wrote" not in out


@pytest.mark.parametrize("command", ["autograde", "feedback"])
def test_unknown_lesson_and_student_are_named(small_course, capsys, command):
    assert main([command, "--course", str(small_course), "--lesson", "07-nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown lesson '07-nope'; the lessons are: tiny" in err
    assert main([command, "--course", str(small_course), "--student", "zed"]) == 2
    err = capsys.readouterr().err
    assert "no submissions from student 'zed' in" in err and "students: ada" in err


def test_a_lesson_may_be_named_by_a_unique_prefix():
    from grader.layout import chosen_lessons

    known = ["01-boards-and-moves", "02-who-won", "10-more"]
    assert chosen_lessons(["01", "02-who-won"], known) == ["01-boards-and-moves", "02-who-won"]
    assert chosen_lessons(None, known) is None
    with pytest.raises(ValueError, match="unknown lesson '0'; the lessons are: 01-boards"):
        chosen_lessons(["0"], known)  # not unique


def test_students_are_listed_shortened(small_course):
    from grader.layout import listed

    assert listed([f"s{i}" for i in range(15)], most=3) == "s0, s1, s2, ... (12 more)"


def test_feedback_before_grading_fails(small_course, capsys):
    assert main(["feedback", "--course", str(small_course), "--lesson", "ti"]) == 1
    out, err = capsys.readouterr()
    assert "nothing autograded" in err and "run `ttt-grader autograde` first" in err and "wrote" not in out


def test_collect_from_a_missing_path_fails(small_course, tmp_path, capsys):
    assert main(["collect", str(tmp_path / "nowhere"), "--course", str(small_course)]) == 2
    err = capsys.readouterr().err
    assert "nowhere does not exist" in err


def test_collect_names_the_lessons_when_a_file_names_none(small_course, tmp_path, capsys):
    inbox = tmp_path / "inbox"
    (inbox / "bob").mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), inbox / "bob" / "homework.ipynb")
    assert main(["collect", str(inbox), "--course", str(small_course)]) == 1
    assert "bob/homework.ipynb: no lesson name in the file's name or folders (rename it to one of: tiny)" \
        in capsys.readouterr().out


def test_export_before_grading_warns(small_course, tmp_path, capsys):
    out = tmp_path / "grades.csv"
    assert main(["export", "--course", str(small_course), "-o", str(out)]) == 0
    assert "nothing has been graded" in capsys.readouterr().err
    assert out.read_text().splitlines() == ["student,tiny,total,suspicious", "Points Possible,3.0,3.0,"]


def test_export_leaves_what_was_not_submitted_blank(small_course, tmp_path, capsys):
    from nbgrader.api import Gradebook

    course = tmp_path / "course"
    shutil.copytree(small_course, course)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.add_student("late")  # in the class, nothing submitted
    out = tmp_path / "grades.csv"
    assert main(["export", "--course", str(course), "-o", str(out), "--detail"]) == 0
    assert "nothing has been graded" not in capsys.readouterr().err
    rows = list(csv.DictReader(out.open()))
    assert rows == [{"student": "Points Possible", "tiny": "3.0", "total": "3.0", "suspicious": "", "tiny:test_player": "2.0", "tiny:test_count_empty": "1.0"},
                    {"student": "late", "tiny": "", "total": "0.0", "suspicious": "", "tiny:test_player": "", "tiny:test_count_empty": ""}]


def test_export_formats_scores_alike():
    from grader.course_ops import points

    assert [points(v) for v in (3, 3.0, 1.5, 0.25, 2 / 3, 0, None)] == ["3.0", "3.0", "1.5", "0.25", "0.67", "0.0", ""]


def test_autograde_takes_the_time_limits():
    from grader.cli import _parser

    args = _parser().parse_args(["autograde", "--timeout", "200", "--notebook-timeout", "900"])
    assert (args.timeout, args.notebook_timeout) == (200, 900)


def test_without_the_grader_extra_it_says_what_to_install(tmp_path):
    """`pip install ttt` alone has no nbgrader: the command says which extra brings it, no traceback."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['nbgrader'] = None\n"  # as if it were not installed
            f"from grader.cli import main; sys.exit(main(['release', '--course', {str(tmp_path / 'course')!r}]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "needs nbgrader, which comes with the grader extra: pip install 'ttt[grader]'" in done.stderr


def test_the_grader_extras_modules_are_the_grader_extra():
    import re
    import tomllib
    from pathlib import Path

    from grader.cli import GRADER_EXTRA

    extra = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    names = {re.match(r"[A-Za-z0-9_]+", spec).group(0).lower() for spec in extra["optional-dependencies"]["grader"]}
    assert set(GRADER_EXTRA) == names


def test_what_a_submission_says_reaches_the_terminal_as_text():
    """A note made of a submission's words (a class name of its own, reached by patching its server) cannot
    clear the instructor's screen, overwrite a line or set the window's title: it is written out."""
    from grader.autograde import summary
    from grader.gradebook import Outcome

    said = "player returned a \x1b[2J\x1b[H\x1b[32mALL GRADES OK\rhonest-bob  tiny 3/3\x07\x1b]0;pwned\x07"
    table = summary([Outcome("mallory", "tiny", 3, 3, suspicious=[said], problems=["cell said \x1b[2J"])])
    assert "\x1b" not in table and "\r" not in table and "\x07" not in table
    assert "\\x1b[2J\\x1b[H\\x1b[32mALL GRADES OK\\rhonest-bob" in table and "mallory / tiny: cell said \\x1b[2J" in table


def test_a_grader_process_reads_notebooks_without_jsonschemas_iri_parsers():
    """rfc3987_syntax (installed for jupyter_events) builds 38 parsers when jsonschema imports it:
    2 CPU seconds in each process that reads a notebook; the grader's processes go without it."""
    import subprocess

    code = ("import time; start = time.process_time(); import grader, nbformat, nbgrader.apps; import sys; "
            "print('rfc3987_syntax' in sys.modules and sys.modules['rfc3987_syntax'] is not None, "
            "round(time.process_time() - start, 2))")
    loaded, seconds = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == "False"
    plain = subprocess.run([sys.executable, "-c", "import sys, rfc3987_syntax; print('rfc3987_syntax' in sys.modules)"],
                           capture_output=True, text=True)
    assert plain.stdout.strip() == "True", "the package is installed here, so the test shows the grader skips it"
