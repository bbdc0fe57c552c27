"""The lessons as nbgrader source notebooks: their form (quick), and real runs (slow): nbgrader
validate, the source notebooks top to bottom in a real kernel with every test passing, and the
released student notebooks with only the stubs' NotImplementedError failing."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from grader.course import CELL_TIMEOUT, COURSE_ID, lesson_names, lesson_path, make_course
from grader.checks import CheckFailed
from lesson_code import BUGS, LESSONS, is_grade, is_solution, notebook, solution_namespace, stubbed
from notebook_runs import cell_seconds, errors, execute, in_parallel, nbgrader, output_texts


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
    grade_cells = [c for c in nb.cells if is_grade(c) and not is_solution(c)]  # autograded tests
    solution_cells = [c for c in nb.cells if is_solution(c) and not is_grade(c)]  # code the student writes
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
    for cell in nb.cells:
        if is_grade(cell) and is_solution(cell):  # a written answer, graded by hand, with a model answer in the source
            meta = nbgrader_meta(cell)
            assert cell.cell_type == "markdown" and meta["points"] > 0 and not meta["locked"] and cell.source.strip()


def open_questions(cells) -> list[int]:
    """Return the index of each markdown cell that ends by asking the student a question the lesson then
    leaves: the next words of the lesson (after the code cell to run) start a new section or point to
    the next lesson. A question in a "Play" section, or in a "Try it" exercise, is the student's own."""
    found, section = [], ""
    for k, cell in enumerate(cells):
        if cell.cell_type != "markdown":
            continue
        paragraphs = [p.strip() for p in re.split(r"\n\s*\n", cell.source) if p.strip()]
        for p in paragraphs:
            if p.startswith("#"):
                section = p.splitlines()[0]
        last = paragraphs[-1] if paragraphs else ""
        if not last.rstrip("*_ )").endswith("?") or last.startswith(("#", "**Try it", "**Next")) or "Play" in section:
            continue
        after = next((c for c in cells[k + 1:] if c.cell_type == "markdown" and not is_grade(c)), None)
        if after is None or after.source.lstrip().startswith(("#", "**Next", "**Where next")):
            found.append(k)
    return found


def test_each_say_in_words_prompt_has_a_written_answer_cell_under_it():
    for lesson in LESSONS:
        cells = notebook(lesson).cells
        prompts = [k for k, cell in enumerate(cells) if cell.cell_type == "markdown" and "say in words" in cell.source]
        assert set(open_questions(cells)) <= set(prompts), (lesson, "a question the lesson leaves open should ask for an answer "
                                                             "in words, in an answer cell", open_questions(cells))
        for k in prompts:
            below = cells[k + 1 : k + 3]
            assert any(is_grade(c) and is_solution(c) and c.cell_type == "markdown" for c in below), (lesson, k)


def test_the_open_questions_are_found(tmp_path):
    cells = [nbformat.v4.new_markdown_cell("## Look\n\nRun it. Which of them block it?"), nbformat.v4.new_code_cell("print(1)"),
             nbformat.v4.new_markdown_cell("## A tournament")]
    assert open_questions(cells) == [0]
    cells[2].source = "Only one of them blocks: ..."  # the lesson answers it
    assert open_questions(cells) == []
    cells[0].source = "## Play\n\nCan you beat it?"
    cells[2].source = "**Next:** lesson 4"
    assert open_questions(cells) == []


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


def test_the_run_settings_from_the_command_line_reach_the_kernel_and_the_re_check(tmp_path):
    from grader.cli import _parser
    from grader.execute import SafeExecute
    from grader.nbconfig import Settings, grading_config

    args = _parser().parse_args(["autograde", "--course", str(tmp_path / "course"), "--timeout", "7",
                                 "--notebook-timeout", "70", "--stall-timeout", "11", "--memory", "900"])
    settings = Settings(timeout=args.timeout, notebook_timeout=args.notebook_timeout,
                        stall_timeout=args.stall_timeout, memory_mb=args.memory)
    executed = SafeExecute(config=grading_config(make_course(tmp_path / "course", lessons=["02-who-won"]), settings))
    assert (executed.timeout, executed.notebook_timeout, executed.stall_timeout, executed.memory_mb) == (7, 70, 11, 900)
    unchanged = SafeExecute(config=grading_config(tmp_path / "course", Settings()))
    assert (unchanged.timeout, unchanged.stall_timeout) == (CELL_TIMEOUT, 60)


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
            if is_grade(cell) and not is_solution(cell):
                text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
                assert "passes the visible tests" in text and "correct on" in text or "nodes visited" in text, text


@pytest.mark.slow
def test_released_notebooks_fail_only_on_the_stubs(course, tmp_path):
    for lesson in LESSONS:
        nbgrader(course, "generate_assignment", lesson, "--force")

    def run(lesson):
        released = course / "release" / lesson / f"{lesson}.ipynb"
        return lesson, released, execute(released, tmp_path / f"{lesson}.ipynb")

    for lesson, released, nb in in_parallel(run, LESSONS):
        text = released.read_text()
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text
        assert not re.search(r"import check_(?!my_work)", text), "a hidden check is imported in the release"
        assert "raise NotImplementedError()" in text
        found = errors(nb)
        assert found and {name for _, name, _ in found} == {"NotImplementedError"}, (lesson, found)
        failing = {k for k, _, _ in found}
        for k, cell in enumerate(nb.cells):
            if is_grade(cell) and not is_solution(cell):
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
    assert found[1] == "CheckFailed" and found[2].startswith("depth_limited_move(state, 2): still running after 1 s of CPU time: does `value` stop")


# --- the visible tests catch the common mistakes ---------------------------------------------------


def visible_tests(lesson: str) -> list[tuple[str, str]]:
    """Return (grade id, the code of its visible tests) for each autograded test cell of `lesson`, in order."""
    return [
        (c.metadata.nbgrader.grade_id, c.source.split("### BEGIN HIDDEN TESTS")[0])
        for c in notebook(lesson).cells
        if c.cell_type == "code" and is_grade(c) and not is_solution(c)
    ]


def visible_failures(lesson: str, edit) -> dict[str, BaseException]:
    """Return grade id -> what its visible tests raised, running the lesson's solutions edited by `edit`."""
    namespace = solution_namespace(lesson, edit=edit)
    failures = {}
    for grade_id, code in visible_tests(lesson):
        try:
            exec(compile(code, f"<{lesson} {grade_id}>", "exec"), namespace)
        except Exception as error:  # noqa: BLE001  (a failing visible test)
            failures[grade_id] = error
    return failures


def test_the_visible_tests_pass_the_solutions(capsys):
    for lesson in LESSONS:
        assert visible_failures(lesson, None) == {}, lesson


@pytest.mark.parametrize("bug", [pytest.param(b, marks=pytest.mark.slow) if b.endless else b for b in BUGS], ids=repr)
def test_a_planted_mistake_fails_a_visible_test_naming_its_function(bug, capsys):
    assert bug.applies(), f"{bug.name}: the text to replace is not in {bug.lesson}'s solutions"
    failures = visible_failures(bug.lesson, bug.plant)
    assert failures, f"{bug.name}: every visible test of {bug.lesson} passes"
    first = next(iter(failures.values()))
    assert isinstance(first, CheckFailed), (bug.name, repr(first))
    assert f"{bug.function}(" in str(first).splitlines()[0], (bug.name, str(first))
    assert any(word in str(first) for word in ("expected", "raised", "still running", "changed")), str(first)


# --- slow: every lesson with stubs and with each planted bug, in real kernels ----------------------

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_FRAME = re.compile(r"(?:{}|site-packages)/(?:ttt|grader)/[\w/]+\.py".format(re.escape(str(ROOT))))
ANSI = re.compile(r"\x1b\[[0-9;]*m")
RUNS = [(lesson, "stubs") for lesson in LESSONS] + [(bug.lesson, bug.name) for bug in BUGS]
BOUND = 4 * CELL_TIMEOUT  # seconds: nbgrader's cell limit with room for a machine shared by other work


def _edited(lesson: str, run: str) -> nbformat.NotebookNode:
    """Return `lesson`'s source notebook with every graded function a stub, or with one planted bug.

    The hidden tests are left out (they are run on the same mistakes by the test below, and by
    nbgrader in test_lessons_nbgrader.py): this is what a student runs.
    """
    nb = notebook(lesson)
    edit = stubbed if run == "stubs" else next(b for b in BUGS if b.name == run).plant
    for cell in nb.cells:
        if cell.cell_type == "code" and is_solution(cell):
            cell.source = edit(cell.source)
        elif cell.cell_type == "code" and is_grade(cell):
            cell.source = re.sub(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS\n?", "", cell.source, flags=re.S)
    return nb


@pytest.fixture(scope="module")
def broken_runs(tmp_path_factory, request):
    """Return {(lesson, 'stubs' or a bug's name): the notebook as run}, each in a fresh kernel, two at a time.

    A cell still running after `BOUND` seconds is stopped: the searches in the lessons are bounded
    per call (visible tests' `seconds=`, the checks' budgets, lesson 6's match per move), so
    none should be, even on a busy machine. They run as the grader runs them (NBGRADER_EXECUTION).
    """
    base = tmp_path_factory.mktemp("broken")

    def run(key):
        lesson, name = key
        source = base / f"{lesson}--{name}.ipynb"
        nbformat.write(_edited(lesson, name), source)
        return key, execute(source, base / f"{lesson}--{name}.ran.ipynb", timeout=BOUND,
                            env={"NBGRADER_EXECUTION": "autograde"})

    selected = {item.callspec.params["key"] for item in request.session.items
                if getattr(item, "callspec", None) and "key" in item.callspec.params}  # only the runs pytest will ask for
    todo = [key for key in RUNS if key in selected]
    return dict(in_parallel(run, sorted(todo, key=lambda key: key[0] not in ("04-minimax", "05-alpha-beta"))))


@pytest.mark.slow
@pytest.mark.parametrize("key", RUNS, ids=lambda key: f"{key[0]}-{key[1]}")
def test_no_student_mistake_shows_a_package_traceback_or_runs_past_the_cell_limit(broken_runs, key):
    nb = broken_runs[key]
    leaks = [(k, PACKAGE_FRAME.search(ANSI.sub("", text)).group(0)) for k, text in output_texts(nb)
             if PACKAGE_FRAME.search(ANSI.sub("", text))]
    assert leaks == [], f"{key}: package frames in the output of cells {leaks}"
    stopped = [(k, name) for k, name, _ in errors(nb) if name in ("KeyboardInterrupt", "CellTimeoutError")]
    assert stopped == [], f"{key}: cells stopped at the {BOUND}-second bound: {stopped}"
    failed = errors(nb)
    assert failed, f"{key}: nothing failed"
    if key[1] != "stubs":
        bug = next(b for b in BUGS if b.name == key[1])
        assert any(f"{bug.function}(" in message or bug.function in message for _, _, message in failed), (key, failed)
    slowest = max((s for _, s in cell_seconds(nb)), default=0)
    print(f"{key[0]} with {key[1]}: {len(failed)} failing cells, slowest cell {slowest:.1f} s")


ENDLESS = [(bug.lesson, bug.name) for bug in BUGS if bug.endless and bug.lesson in ("04-minimax", "05-alpha-beta")]


@pytest.mark.slow
@pytest.mark.parametrize("key", ENDLESS, ids=lambda key: f"{key[0]}-{key[1]}")
def test_a_search_that_never_ends_fails_each_cell_at_its_cpu_limit_naming_the_function(broken_runs, key):
    """Lessons 4 and 5 with a search that never returns: each cell that calls it fails on its own CPU limit
    (10 s each), well before nbgrader's cell limit, saying which call,
    on which board, and never from inside the package."""
    nb = broken_runs[key]
    bug = next(b for b in BUGS if b.name == key[1])
    failed = errors(nb)
    assert len(failed) >= 2, failed  # the tests, and the cells that show the search
    for k, name, message in failed:
        first = message.split("\n")[0]
        assert name == "CheckFailed" and first.startswith(f"{bug.function}(board): ") and "still running after " in first, (k, name, message)
        assert "come to an end?" in message and "board:" in message and " | " in message, message
    slowest = max(s for k, s in cell_seconds(nb) if k in {k for k, _, _ in failed})
    assert slowest < CELL_TIMEOUT, f"{key}: a cell ran {slowest:.0f} s"
    print(f"{key[1]}: {len(failed)} cells stopped, the slowest after {slowest:.1f} s")


# --- feedback names each test cell by its function and labels the hidden tests ------------------


def test_feedback_heads_each_test_cell_with_its_function_and_labels_hidden_failures():
    from nbformat.v4 import new_output

    from grader.feedback import HideTestCode, LabelTests, graded_function

    nb = notebook("02-who-won")
    names = [graded_function(c) for c in nb.cells if is_grade(c) and not is_solution(c)]
    assert names == ["winner", "terminal", "utility", "rk_board", "poss_win"]
    assert [graded_function(c) for c in notebook("05-alpha-beta").cells if is_grade(c) and not is_solution(c)] == [
        "alphabeta (correct moves)", "alphabeta (pruning)"]
    winner_tests, terminal_tests = [c for c in nb.cells if is_grade(c) and not is_solution(c)][:2]
    winner_tests.outputs = [new_output("stream", name="stdout", text="✓ winner passes the visible tests\n"),
                            new_output("error", ename="CheckFailed", evalue="winner(board): wrong winner", traceback=["..."])]
    terminal_tests.outputs = [new_output("error", ename="CheckFailed", evalue="terminal(board): wrong", traceback=["..."])]
    for cell in (winner_tests, terminal_tests):
        for step in (LabelTests(), HideTestCode()):
            step.preprocess_cell(cell, {}, 0)
    assert winner_tests.outputs[0].data["text/plain"] == "Tests of winner: 2 points, all or nothing (every visible and hidden test must pass)"
    assert winner_tests.outputs[-1].traceback == ["CheckFailed: hidden tests: winner(board): wrong winner"]
    assert terminal_tests.outputs[-1].traceback == ["CheckFailed: terminal(board): wrong"]  # a visible test: not labelled hidden


def _hidden_tests(lesson: str, function: str) -> list[str]:
    """Return the hidden-test code of the test cells of `lesson` that grade `function`."""
    from grader.feedback import graded_function

    return [c.source.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
            for c in notebook(lesson).cells
            if c.cell_type == "code" and is_grade(c) and not is_solution(c) and (graded_function(c) or "").split(" ")[0] == function]


@pytest.mark.slow
@pytest.mark.parametrize("bug", [b for b in BUGS if not b.endless], ids=repr)  # the hidden checks have no time limit here
def test_the_hidden_tests_agree_with_the_visible_ones_on_each_planted_mistake(bug, capsys):
    namespace = solution_namespace(bug.lesson, edit=bug.plant)
    failed = []
    for code in _hidden_tests(bug.lesson, bug.function):
        try:
            exec(code, namespace)
        except (CheckFailed, NotImplementedError) as error:
            failed.append(str(error))
    assert failed and all(bug.function in message for message in failed), (bug.name, failed)


def test_lesson_2_s_count_of_endings_blames_the_function_that_is_wrong():
    from grader.checks import expect_endings

    right = solution_namespace("02-who-won")
    expect_endings(right["winner"], right["terminal"], right["utility"])
    bug = next(b for b in BUGS if b.name == "winner-without-the-anti-diagonal")
    wrong = solution_namespace("02-who-won", edit=bug.plant)
    with pytest.raises(CheckFailed, match=r"^winner\(board\): wrong winner"):
        expect_endings(wrong["winner"], wrong["terminal"], wrong["utility"])
    bug = next(b for b in BUGS if b.name == "terminal-notices-only-x-wins")
    wrong = solution_namespace("02-who-won", edit=bug.plant)
    with pytest.raises(CheckFailed, match=r"^terminal\(board\): the game is over when"):
        expect_endings(wrong["winner"], wrong["terminal"], wrong["utility"])


def test_lesson_6_s_pruning_hint_goes_only_to_a_search_that_does_not_prune():
    from grader.checks import prunes

    lesson = "06-heuristics-and-depth-limits"
    pruning = solution_namespace(lesson)
    plain = solution_namespace(lesson, edit=lambda s: s.replace("if v >= beta:", "if False:").replace("if v <= alpha:", "if False:"))
    start = pruning["game"].initial()
    assert prunes(pruning["depth_limited_move"], start, 2) is True
    assert prunes(plain["depth_limited_move"], start, 2) is False
    assert type(plain["game"]).__name__ == "NineBoard"  # the counting game is put back
    bug = next(b for b in BUGS if b.name == "depth-limited-ignores-depth")
    forever = solution_namespace(lesson, edit=bug.plant)
    assert prunes(forever["depth_limited_move"], start, 2, seconds=0.5) is None  # unknown: the visible tests say why


def test_the_feedback_summary_names_each_test_cell_by_its_function():
    from grader.feedback import name_test_links

    page = '<li><a href="#winner-tests">Test cell</a> (Score: 2.0 / 2.0)</li><li><a href="#poss-win-tests">Test cell</a></li>'
    assert name_test_links(page, notebook("02-who-won")) == (
        '<li><a href="#winner-tests">Tests of winner</a> (Score: 2.0 / 2.0)</li><li><a href="#poss-win-tests">Tests of poss_win</a></li>')


def test_lesson_1_s_result_tests_do_not_fail_on_the_student_s_player(capsys):
    failures = visible_failures("01-boards-and-moves", lambda source: source.replace("return X if xs == os else O", "return X"))
    assert set(failures) == {"player-tests"}, failures
    hidden = solution_namespace("01-boards-and-moves", edit=lambda source: source.replace("return X if xs == os else O", "return X"))
    for code in _hidden_tests("01-boards-and-moves", "result"):
        exec(code, hidden)  # the hidden check puts the CS50 player in place of the student's too


def test_a_slip_in_winner_fails_winner_s_visible_tests_only_and_a_message_says_who_stood_in(capsys):
    from grader.checks import expect, returned

    bug = next(b for b in BUGS if b.name == "winner-returns-the-player-to-move")  # X wins "XXX/OO./...": it says O
    assert set(visible_failures("02-who-won", bug.plant)) == {"winner-tests"}
    both = solution_namespace("02-who-won", edit=lambda source: bug.plant(source).replace("        return -1\n", "        return 1\n"))
    board = both["from_text"]("XX./OOO/X..")
    with pytest.raises(CheckFailed) as failed:  # as a test cell runs it: in the notebook's namespace, beside its utility
        exec('expect(returned(utility, board, why="O has won"), -1, call="utility(board)", kind="int", board=board, '
             'why="O has won")', {**both, "expect": expect, "returned": returned, "board": board})
    message = str(failed.value)
    assert message.startswith("utility(board): O has won\n") and "returned: 1" in message  # its own slip, not winner's
    assert message.endswith("(this test runs your utility with the CS50 winner in place of yours: each function is tested on its own)")
    assert returned(both["winner"], board) == "X"  # the slipped winner itself runs as written: it names the player to move
    assert returned(both["terminal"], board) is True
    only_winner = solution_namespace("02-who-won", edit=bug.plant)
    assert returned(only_winner["utility"], board) == -1  # the CS50 winner stood in: O has won (the slipped one says X: 1)


def test_a_minimax_with_no_game_over_check_is_told_the_test_s_reason_before_the_error():
    bug = next(b for b in BUGS if b.name == "minimax-no-none-when-over")
    message = str(visible_failures("04-minimax", bug.plant)["minimax-tests"])
    lines = message.split("\n")
    assert lines[0] == ("minimax(board): X has won: the game is over, so there is no move (None); instead it raised ValueError: "
                        "the game is over: X has won"), lines[0]
    assert message.index("X | X | X") < message.index("\n(raised in ")  # the board, then where it was raised


def test_lesson_5_s_visible_count_is_the_graded_rule(capsys):
    """The visible test of pruning and the hidden one apply one rule (`count_pruning`) to the same positions:
    a search the hidden test fails, the visible test fails with the same message; one it passes, both pass,
    narrowing the window at the root or not (taught, not graded)."""
    from grader.checks import check_alphabeta_calls, expect_pruning
    from grader.checks.minimax import minimax_positions, pruning_positions

    strict = next(b for b in BUGS if b.name == "alphabeta-cuts-off-only-on-strict")
    failing = solution_namespace("05-alpha-beta", edit=strict.plant)["alphabeta"]
    with pytest.raises(CheckFailed) as hidden:
        check_alphabeta_calls(failing)
    with pytest.raises(CheckFailed) as visible:
        expect_pruning(failing)
    assert str(visible.value) == str(hidden.value) and "prunes too little" in str(hidden.value)
    wide = solution_namespace("05-alpha-beta", edit=lambda source: source.replace("            alpha = max(alpha, best)\n", "")
                              .replace("            beta = min(beta, best)\n", ""))["alphabeta"]  # no narrowing at the root
    for alphabeta in (solution_namespace("05-alpha-beta")["alphabeta"], wide):
        capsys.readouterr()
        expect_pruning(alphabeta)
        shown = capsys.readouterr().out
        hidden_summary = check_alphabeta_calls(alphabeta)
        assert shown.rstrip().split("\n")[-1] == hidden_summary  # the same count, told the same way
        assert len(shown.rstrip().split("\n")) == len(pruning_positions()) + 1 and f"of plain minimax's {minimax_positions():,}" in shown
    cell = next(c.source for c in notebook("05-alpha-beta").cells if c.metadata.get("nbgrader", {}).get("grade_id") == "alphabeta-prunes")
    assert "expect_pruning(alphabeta" in cell.split("### BEGIN HIDDEN TESTS")[0]
    text = "\n".join(c.source for c in notebook("05-alpha-beta").cells if c.cell_type == "markdown")
    assert "applies this very rule" in text and "it is not graded on its own" in text
