"""Pruning is graded on the search really done: the positions a search examines through the functions
the lesson hands it, read at each call, so a search that changes one board in place and undoes the
move counts as one that makes every child with `result`."""

from __future__ import annotations

import functools

import pytest

from grader import checks
from grader.checks import CheckFailed
from lesson_code import solution_namespace
from ttt.games import classic
import ttt.tictactoe as ref

L5 = "05-alpha-beta"

SET_UP = "import math\nfrom ttt.tictactoe import X, O, EMPTY, initial_state, player, actions, result, winner, terminal, utility\n"

IN_PLACE_MINIMAX = SET_UP + '''
def value(board):
    """Minimax on one board, changed in place and changed back: never calls result."""
    if terminal(board):
        return utility(board)
    mark = player(board)
    values = []
    for i, j in actions(board):
        board[i][j] = mark
        values.append(value(board))
        board[i][j] = EMPTY
    return max(values) if mark == X else min(values)


def alphabeta(board):
    if terminal(board):
        return None
    mark = player(board)
    best, best_action = None, None
    for i, j in sorted(actions(board)):
        board[i][j] = mark
        v = value(board)
        board[i][j] = EMPTY
        if best is None or (v > best if mark == X else v < best):
            best, best_action = v, (i, j)
    return best_action
'''

IN_PLACE_ALPHABETA = SET_UP + '''
def value(board, alpha, beta):
    """Alpha-beta on one board, changed in place and changed back: never calls result."""
    if terminal(board):
        return utility(board)
    mark = player(board)
    v = -math.inf if mark == X else math.inf
    for i, j in actions(board):
        board[i][j] = mark
        child = value(board, alpha, beta)
        board[i][j] = EMPTY
        if mark == X:
            v = max(v, child)
            if v >= beta:
                return v
            alpha = max(alpha, v)
        else:
            v = min(v, child)
            if v <= alpha:
                return v
            beta = min(beta, v)
    return v


def alphabeta(board):
    if terminal(board):
        return None
    mark = player(board)
    alpha, beta = -math.inf, math.inf
    best_action = None
    for i, j in actions(board):
        board[i][j] = mark
        v = value(board, alpha, beta)
        board[i][j] = EMPTY
        if mark == X and v > alpha:
            alpha, best_action = v, (i, j)
        elif mark == O and v < beta:
            beta, best_action = v, (i, j)
    return best_action or min(actions(board))
'''

LOOKS_ITSELF = SET_UP + '''
import functools

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


@functools.lru_cache(maxsize=None)
def value(text):
    """Its own rules on text: the lesson's functions see only the root."""
    for a, b, c in LINES:
        if text[a] != "." and text[a] == text[b] == text[c]:
            return 1 if text[a] == "X" else -1
    if "." not in text:
        return 0
    mark = "X" if text.count("X") == text.count("O") else "O"
    values = [value(text[:s] + mark + text[s + 1:]) for s in range(9) if text[s] == "."]
    return max(values) if mark == "X" else min(values)


def alphabeta(board):
    if terminal(board):
        return None
    text = "".join(c or "." for row in board for c in row)
    mark = player(board)
    pick = max if mark == X else min
    return pick(sorted(actions(board)), key=lambda a: value(text[:3 * a[0] + a[1]] + mark + text[3 * a[0] + a[1] + 1:]))
'''


MEMO_MINIMAX = SET_UP + '''
MEMO = {}


def value(board):
    """Minimax that remembers each position's value: every position below the board once, no cut-off."""
    key = tuple(map(tuple, board))
    if key not in MEMO:
        if terminal(board):
            MEMO[key] = utility(board)
        else:
            values = [value(result(board, a)) for a in actions(board)]
            MEMO[key] = max(values) if player(board) == X else min(values)
    return MEMO[key]


def alphabeta(board):
    MEMO.clear()
    if terminal(board):
        return None
    pick = max if player(board) == X else min
    return pick(sorted(actions(board)), key=lambda a: value(result(board, a)))
'''

# Plain minimax that, in the sandbox, takes back the notes its repeated positions left (the notes the
# sandbox's copies of the lesson's functions keep of the boards they are passed)
NOTES_TAKEN_BACK = SET_UP + '''
def value(board):
    if terminal(board):
        return utility(board)
    values = [value(result(board, a)) for a in actions(board)]
    return max(values) if player(board) == X else min(values)


def alphabeta(board):
    if terminal(board):
        return None
    pick = max if player(board) == X else min
    best = pick(sorted(actions(board)), key=lambda a: value(result(board, a)))
    from grader.remote import NOTES
    once = list(dict.fromkeys(NOTES))
    NOTES.clear()
    NOTES.extend(once)
    return best
'''


def defined(source: str) -> dict:
    namespace: dict = {"__name__": "student"}
    exec(compile(source, "<student>", "exec"), namespace)
    return namespace


def failure(function) -> str:
    with pytest.raises(CheckFailed) as raised:
        checks.check_alphabeta_calls(function)
    return str(raised.value)


def test_the_lessons_alphabeta_passes_and_its_nodes_are_counted(capsys):
    checks.check_alphabeta_calls(solution_namespace(L5)["alphabeta"])
    said = capsys.readouterr().out
    assert "alphabeta: 13,643 nodes visited over 12 positions, 14.8% of plain minimax's 92,088" in said
    assert "different positions examined" in said and "of the 7,710 that can arise (the bound is 95%)" in said


def test_a_minimax_that_plays_in_place_and_never_calls_result_gets_no_pruning_marks():
    message = failure(defined(IN_PLACE_MINIMAX)["alphabeta"])
    assert "prunes too little" in message and "at most 36,835 nodes in all (40% of the 92,088 plain minimax visits)" in message


def test_a_minimax_that_remembers_positions_and_never_cuts_off_gets_no_pruning_marks():
    """It visits 8.4% of plain minimax's nodes, each position once, but examines every position below the board."""
    message = failure(defined(MEMO_MINIMAX)["alphabeta"])
    assert "prunes too little" in message and "different positions examined" in message
    assert "at most 7,324 in all (95% of the 7,710 positions that can arise from them)" in message


@pytest.mark.slow
def test_notes_taken_back_in_the_sandbox_earn_no_pruning_marks(tmp_path):
    """Lesson 5's hidden test of pruning, re-checked in the sandbox, on a plain minimax that drops the
    notes of the positions it meets again: no marks, and the instructor is told it reached into the grader."""
    from grader.course import lesson_path
    from grader.recheck import code_cells, judge, student_launcher

    lesson = [c for c in code_cells(lesson_path(L5)) if not c["meta"].get("grade") or c["meta"].get("grade_id") == "alphabeta-prunes"]
    submitted = [{"source": NOTES_TAKEN_BACK.removeprefix(SET_UP), "meta": c["meta"]} if c["meta"].get("solution") else c
                 for c in lesson]
    verdicts, notes = judge(submitted, lesson, folder=tmp_path, launcher=student_launcher(under=tmp_path))
    verdict = verdicts["alphabeta-prunes"]
    assert not verdict.passed and "different positions examined" in verdict.evalue, verdict
    assert any("grader.remote (the grader's own machinery)" in note for note in notes), notes


def test_an_alphabeta_that_plays_in_place_passes(capsys):
    checks.check_alphabeta_calls(defined(IN_PLACE_ALPHABETA)["alphabeta"])
    assert "nodes visited over 12 positions" in capsys.readouterr().out


def test_a_search_that_looks_at_the_board_without_the_lessons_functions_is_refused():
    message = failure(defined(LOOKS_ITSELF)["alphabeta"])
    assert "your alphabeta examined 1 position, fewer than any search that proves the value can: does it look at the " \
           "board without the lesson's functions?" in message


def test_the_nodes_of_a_search_in_place_are_the_nodes_of_the_same_search_with_result():
    with_result, in_place = solution_namespace(L5), defined(IN_PLACE_ALPHABETA)
    counts = []
    for namespace in (with_result, in_place):
        with checks.counting_positions(namespace) as examined:
            namespace["alphabeta"](ref.initial_state())
        counts.append(examined.count)
    assert counts[0] == counts[1] < 100_000
    plain = defined(IN_PLACE_MINIMAX)
    with checks.counting_positions(plain) as examined:
        plain["alphabeta"](ref.from_text("XO./.X./..."))
    assert examined.count == classic.tree_size("XO..X....")  # every node of the game tree, each once
    assert len(examined.positions) < examined.count  # positions met again by other lines of play count again


def test_the_least_count_is_never_more_than_a_real_search_examines():
    bounds = {text: checks.least_positions(text) for text in classic.reachable_positions() if not classic.is_terminal(text)}
    assert bounds[classic.EMPTY_BOARD] == 26 and bounds["XX.OO...."] == 2  # X wins at once: the root and that child
    for namespace in (solution_namespace(L5), defined(IN_PLACE_ALPHABETA)):
        with checks.counting_positions(namespace) as examined:
            for text, least in bounds.items():
                examined.new_search()
                before = examined.count
                namespace["alphabeta"](ref.from_text(text))
                assert examined.count - before >= least, text


# A plain minimax on rules of its own, showing the lesson's functions 60 positions below the root
# so that the count looks like pruning: "600 nodes, 0.7 % of plain minimax" earned full marks before
REPORTS_POSITIONS = LOOKS_ITSELF.split("def alphabeta")[0] + '''
def alphabeta(board):
    if terminal(board):
        return None
    mark = player(board)
    text = "".join(c or "." for row in board for c in row)
    shown = 0
    for a in sorted(actions(board)):        # the lesson's functions see the root's children ...
        child = result(board, a)
        for b in sorted(actions(child)):    # ... and 60 of their children, so the count looks like pruning
            if shown < 60 and not terminal(child):
                terminal(result(child, b))
                shown += 1
    pick = max if mark == X else min
    return pick(sorted(actions(board)), key=lambda a: value(text[:3 * a[0] + a[1]] + mark + text[3 * a[0] + a[1] + 1:]))
'''


def test_a_search_that_shows_the_lessons_functions_positions_it_did_not_search_gets_no_pruning_marks():
    message = failure(defined(REPORTS_POSITIONS)["alphabeta"])
    assert "do not show that" in message and "is a best move: it found its values some other way" in message


def test_the_proof_holds_for_every_alpha_beta_and_fails_without_its_positions():
    for namespace in (solution_namespace(L5), defined(IN_PLACE_ALPHABETA), defined(IN_PLACE_MINIMAX)):
        with checks.counting_positions(namespace) as examined:
            for text in checks.pruning_positions():
                examined.new_search()
                move = namespace["alphabeta"](ref.from_text(text))
                assert checks.proves_move(examined.positions, text, 3 * move[0] + move[1]), text
                assert not checks.proves_move(examined.positions - {text}, text, 3 * move[0] + move[1])
                chosen = classic.play(text, 3 * move[0] + move[1])  # without the child it chose, no proof of it
                assert not checks.proves_move(examined.positions - {chosen}, text, 3 * move[0] + move[1])
    positions = set(classic.reachable_positions())
    assert checks.proves_move(positions, "X...O....", 2) and not checks.proves_move({"X...O...."}, "X...O....", 2)


@pytest.mark.slow
def test_a_lesson_5_submission_that_reports_positions_is_graded_by_nbgrader_on_its_search_and_flagged(tmp_path):
    """The whole way: lesson 5 released by nbgrader, the cheat in the alphabeta cell of a student's copy,
    `ttt-grader autograde` in the sandbox. Correct moves keep their points; pruning gets none; the
    instructor is told."""
    import nbformat

    from grader.autograde import autograde
    from grader.course import make_course
    from lesson_code import is_solution
    from notebook_runs import nbgrader

    course = make_course(tmp_path / "course", lessons=[L5])
    nbgrader(course, "generate_assignment", L5)
    nb = nbformat.read(course / "release" / L5 / f"{L5}.ipynb", as_version=4)
    cells = [cell for cell in nb.cells if is_solution(cell) and cell.cell_type == "code"]
    assert len(cells) == 1
    cells[0].source = REPORTS_POSITIONS.removeprefix(SET_UP)  # the lesson imports the rest
    folder = course / "submitted" / "reports-positions" / L5
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{L5}.ipynb")
    [outcome] = autograde(course, jobs=1, progress=False)
    from nbgrader.api import Gradebook

    from grader.course import COURSE_ID

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gb:
        submission = gb.find_submission_notebook(L5, L5, "reports-positions")
        scores = {g.name: g.score for g in submission.grades if g.cell.cell_type == "code" and g.max_score > 0}
    assert scores == {"alphabeta-correct": 5, "alphabeta-prunes": 0}, (scores, outcome.problems, outcome.suspicious, outcome)
    assert any(checks.minimax.SEARCHED_ELSEWHERE in note for note in outcome.suspicious), outcome.suspicious
