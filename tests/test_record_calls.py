"""A student's own minimax, recorded through its calls to result(), explores the reference's tree.

The student code below is written the way a first CS50 solution is: every function re-derives
what it needs, `result` deep-copies, minimax has no pruning or memo and tries the actions of a set in
whatever order the set gives. It lives in a namespace dict, as a notebook's functions live in
its globals, and ``ttt.trace.record_calls`` watches that namespace.
"""

from __future__ import annotations

import pytest

from ttt.draw import draw_tree
from ttt.games.classic import TicTacToe, parse_board
from ttt.tictactoe import from_text
from ttt.trace import Trace, record, record_calls

STUDENT = '''
import copy

X, O, EMPTY = "X", "O", None

def player(board):
    xs = sum(row.count(X) for row in board)
    os = sum(row.count(O) for row in board)
    return O if xs > os else X

def actions(board):
    return {(i, j) for i in range(3) for j in range(3) if board[i][j] == EMPTY}

def result(board, action):
    if action not in actions(board):
        raise Exception("invalid action")
    new = copy.deepcopy(board)
    new[action[0]][action[1]] = player(board)
    return new

def winner(board):
    lines = [row for row in board] + [[board[r][c] for r in range(3)] for c in range(3)]
    lines += [[board[i][i] for i in range(3)], [board[i][2 - i] for i in range(3)]]
    for line in lines:
        if line[0] is not None and line.count(line[0]) == 3:
            return line[0]
    return None

def terminal(board):
    return winner(board) is not None or all(cell is not EMPTY for row in board for cell in row)

def utility(board):
    w = winner(board)
    return 1 if w == X else -1 if w == O else 0

def value(board):
    if terminal(board):
        return utility(board)
    values = [value(result(board, action)) for action in actions(board)]
    return max(values) if player(board) == X else min(values)

def minimax(board):
    if terminal(board):
        return None
    best = max if player(board) == X else min
    return best(actions(board), key=lambda action: value(result(board, action)))
'''

GAME = TicTacToe()
POSITIONS = ["XO./.X./..O", "XOX/.O./...", "X.O/.X./O..", "XO./XO./...", "X../.O./..X", "X../.O./..."]


@pytest.fixture
def student() -> dict:
    """Return a fresh namespace holding the student's functions, as a notebook's globals would."""
    namespace: dict = {}
    exec(STUDENT, namespace)
    return namespace


def canonical(trace: Trace) -> tuple:
    """Return the trace's tree with children sorted by move: (board, game-over value, children)."""
    nodes = trace.nodes

    def tree(i: int) -> tuple:
        node = nodes[i]
        value = node.value if node.leaf == "terminal" else None
        children = sorted((nodes[c].move, tree(c)) for c in node.children)
        return (node.state, value, tuple(children))

    return tree(min(nodes))


@pytest.mark.parametrize("board", POSITIONS)
def test_student_minimax_explores_the_reference_minimax_tree(student, board):
    with record_calls(student) as recorder:
        action = student["minimax"](from_text(board))
    recorded = recorder.trace()
    reference = record(GAME, parse_board(board), algorithm="minimax")
    assert recorded.node_count == reference.node_count == reference.result.nodes
    assert canonical(recorded) == canonical(reference)
    assert action is not None
    # the drawing of the student's tree has the reference's shape too
    assert draw_tree(recorded, max_nodes=None).source.count(" -> ") == reference.result.nodes - 1


def test_the_namespace_gets_its_own_functions_back(student):
    result, utility = student["result"], student["utility"]
    with record_calls(student):
        assert student["result"] is not result
    assert student["result"] is result and student["utility"] is utility


def test_a_finished_game_makes_no_calls_and_no_tree(student):
    with record_calls(student) as recorder:
        assert student["minimax"](from_text("XXX/OO./...")) is None
    assert recorder.trace().events == []
