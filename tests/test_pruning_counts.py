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
    assert "alphabeta: 13,643 nodes visited over 12 positions, 14.8% of plain minimax's 92,088" in capsys.readouterr().out


def test_a_minimax_that_plays_in_place_and_never_calls_result_gets_no_pruning_marks():
    message = failure(defined(IN_PLACE_MINIMAX)["alphabeta"])
    assert "prunes too little" in message and "at most 36,835 nodes in all (40% of the 92,088 plain minimax visits)" in message


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
