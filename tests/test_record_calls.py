"""A student's own minimax, recorded through its calls to result(), explores the reference's tree.

The student code is the tests' naive CS50 solution (``data/naive_tictactoe.py``): every function
re-derives what it needs, `result` deep-copies, minimax has no pruning or memo and tries the
actions of a set in whatever order the set gives. It lives in a namespace dict, as a notebook's functions live in
its globals, and ``ttt.call_recorder.record_calls`` watches that namespace.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ttt.call_recorder import record_calls
from ttt.draw import draw_tree, plan_tree
from ttt.games.classic import TicTacToe, parse_board
from ttt.tictactoe import from_text
from ttt.search import Cutoff
from ttt.trace import Trace, record

STUDENT = (Path(__file__).parent / "data" / "naive_tictactoe.py").read_text() + '''

def value(board):
    """The value of `board` with best play: one function for both sides."""
    if terminal(board):
        return utility(board)
    values = [value(result(board, action)) for action in actions(board)]
    return max(values) if player(board) == X else min(values)
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


# --- the student's own values, chosen move and cut-offs ------------------------------------------

import math  # noqa: E402

from ttt.games import classic  # noqa: E402
from ttt.search import Cutoff, Exit  # noqa: E402


def lesson_namespace(lesson: str, edit=None) -> dict:
    from lesson_code import solution_namespace

    return solution_namespace(lesson, edit=edit)


def recorded(namespace: dict, name: str, board: str):
    with record_calls(namespace) as recorder:
        move = namespace[name](from_text(board))
    return move, recorder.trace()


def test_a_recorded_minimax_carries_the_student_s_values_and_chosen_move():
    move, trace = recorded(lesson_namespace("04-minimax"), "minimax", "XOX/.O./X..")
    nodes = trace.nodes
    assert trace.chosen == 3 * move[0] + move[1]
    assert all(node.done for node in nodes.values())  # every node has the value the student's code gave it
    assert {i: node.value for i, node in nodes.items()} == trace.true_values  # a correct minimax: all true
    assert trace.wrong_values() == {}
    root = nodes[0]
    assert root.best_move == trace.chosen and trace.principal_variation()[1] in root.children
    assert 'label="your code chose square 3 (the bold edge)"' in draw_tree(trace).source


def test_a_wrong_value_is_recorded_as_the_student_s_and_shown_as_differing_from_the_true_one():
    good = recorded(lesson_namespace("04-minimax"), "minimax", "XOX/.O./X..")[1]
    move, bad = recorded(lesson_namespace("04-minimax", edit=lambda s: s.replace("v = -math.inf", "v = 0")), "minimax", "XOX/.O./X..")
    wrong = bad.wrong_values()
    assert wrong and all(v == 0 and true == -1 for v, true in wrong.values())  # max_value from 0: a lost X position looks drawn
    for i in wrong:
        assert bad.nodes[i].maximizing
    picture, right = draw_tree(bad).source, draw_tree(good).source
    assert picture != right  # the drawing shows the student's values, not the ones it would compute itself
    assert picture.count("true value: -1") == len(wrong) and "true value" not in right
    assert "differ" in picture.split("graph [label=")[1].split("\n")[0]


def test_a_recorded_alphabeta_shows_its_own_cut_offs():
    move, trace = recorded(lesson_namespace("05-alpha-beta"), "alphabeta", "XOX/.O./X..")
    nodes = trace.nodes
    cutoffs = [e for e in trace.events if isinstance(e, Cutoff)]
    assert trace.cutoffs == len(cutoffs) > 0
    for e in cutoffs:
        node = nodes[e.node]
        tried = {nodes[c].move for c in node.children}
        assert set(e.skipped) | tried == set(classic.moves(node.state)) and not set(e.skipped) & tried
    assert trace.node_count < 34  # fewer than minimax's 34
    assert trace.wrong_values() == {}  # values at nodes with a cut-off below may be bounds: not "wrong"
    from ttt.widgets.steps import step_sentence

    assert trace.counts(len(trace))["cutoffs"] == len(cutoffs)
    k = trace.events.index(cutoffs[0]) + 1
    assert "your search never tried" in step_sentence(trace, k)
    assert "prunedstub" in draw_tree(trace).source


def test_a_minimax_records_no_cut_offs():
    move, trace = recorded(lesson_namespace("04-minimax"), "minimax", "XO./.X./...")
    assert trace.cutoffs == 0


def test_recording_passes_the_student_s_errors_through_and_never_fails_itself(student):
    student["result"] = lambda board, action: "not a board"  # a broken result: the recording leaves it out
    with record_calls(student) as recorder:
        with pytest.raises(Exception):
            student["minimax"](from_text("XOX/.O./X.."))
    assert recorder.trace().events == []

    def stub(board):
        raise NotImplementedError()

    student["minimax"] = stub
    with record_calls(student):
        with pytest.raises(NotImplementedError):
            student["minimax"](from_text("XOX/.O./X.."))
    assert student["minimax"] is stub


def test_a_value_function_called_at_the_root_gives_the_root_its_value(student):
    with record_calls(student) as recorder:
        v = student["value"](from_text("XOX/.O./X.."))
    trace = recorder.trace()
    assert trace.nodes[0].value == v == -1 and trace.chosen is None
    assert not [e for e in trace.events if isinstance(e, Exit) and e.value is None]
    assert math.isfinite(v)


def test_code_that_calls_the_search_directly_tells_the_recorder_the_move():
    namespace = lesson_namespace("04-minimax")
    search_function = namespace["minimax"]  # held directly, as a widget holds its opponent
    board = from_text("XOX/.O./X..")
    with record_calls(namespace) as recorder:
        move = search_function(board)
    untold = recorder.trace()
    assert untold.chosen is None and untold.nodes[0].value == -1  # the root's value from its children, as the code gave them
    recorder.chose(board, move)
    told = recorder.trace()
    assert told.chosen == 3 * move[0] + move[1] and told.nodes[0].best_move == told.chosen


# --- keeping only the nodes a picture draws -------------------------------------------------


@pytest.mark.parametrize("board", ["X../.../...", "XO./.X./..O"])
@pytest.mark.parametrize("depth, cap", [(1, 300), (2, 300), (3, 40), (9, 100)])
def test_a_recording_keeps_the_first_nodes_that_deep_and_counts_the_rest(student, board, depth, cap):
    with record_calls(student) as whole_recorder:
        student["minimax"](from_text(board))
    whole = whole_recorder.trace()
    with record_calls(student, max_depth=depth, max_nodes=cap) as recorder:
        student["minimax"](from_text(board))
    kept = recorder.trace()
    nodes, all_nodes = kept.nodes, whole.nodes
    assert 0 < len(nodes) <= cap and max(n.depth for n in nodes.values()) <= depth
    assert kept.node_count == whole.node_count  # every node the search visited is counted ...
    assert sum(kept.unkept.values()) == whole.node_count - len(nodes)  # ... the rest under a kept node
    same = dict(zip(sorted(nodes), plan_tree(all_nodes, max_depth=depth, max_nodes=cap).shown))
    assert len(same) == len(nodes)  # the kept nodes are the whole recording's first ones that deep ...
    for i, node in nodes.items():  # ... with its boards, moves and values
        twin = all_nodes[same[i]]
        assert (node.state, node.move, node.value) == (twin.state, twin.move, twin.value)
        assert node.parent is None and twin.parent is None or same[node.parent] == twin.parent
    below = {i: 0 for i in all_nodes}  # each node's subtree in the whole recording
    for i in sorted(all_nodes, reverse=True):
        below[i] += 1
        if all_nodes[i].parent is not None:
            below[all_nodes[i].parent] += below[i]
    for i, node in nodes.items():  # counted under a kept node: its subtree, less its kept children's
        assert kept.unkept.get(i, 0) == below[same[i]] - 1 - sum(below[same[c]] for c in node.children)
    assert kept.cutoffs == whole.cutoffs == 0  # plain minimax prunes nothing, however little is kept


def test_a_recording_that_keeps_little_still_shows_a_students_pruning(student):
    source = STUDENT.replace("values = [value(result(board, action)) for action in actions(board)]",
                             "values = []\n    for action in sorted(actions(board)):\n"
                             "        values.append(value(result(board, action)))\n"
                             "        if values[-1] == (1 if player(board) == X else -1):\n            break")
    assert source != STUDENT
    namespace: dict = {}
    exec(source, namespace)
    board = from_text("XO./.X./...")
    with record_calls(namespace) as whole_recorder:
        namespace["value"](board)
    with record_calls(namespace, max_depth=1) as recorder:
        namespace["value"](board)
    whole, kept = whole_recorder.trace(), recorder.trace()
    cut = {whole.nodes[e.node].state: e.skipped for e in whole.events if isinstance(e, Cutoff) and whole.nodes[e.node].depth <= 1}
    assert cut  # the search stops at a winning move: a cut-off at the root or just below
    assert {kept.nodes[e.node].state: e.skipped for e in kept.events if isinstance(e, Cutoff)} == cut
