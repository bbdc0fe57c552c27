"""The widgets without a browser: clicks are ``click(square)``, choices set the synced traits.

The board is played against the unbeatable player in every game a person can play (each
possible reply at each turn), from both sides, checking after each click that the state sent
to the browser is the game's. The explorer's data (what the browser shows at each step) is
checked step by step against the recorded trace. What the browser draws from that state is
checked in ``tests/test_browser.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ttt.call_recorder import record_calls
from ttt.draw import value_text
from ttt.games.classic import LINES, TicTacToe, parse_board
from ttt.search import Cutoff, Enter, Exit, Leaf
from ttt.tictactoe import from_text, result, terminal, utility
from ttt.trace import Trace, build_tree, record
from ttt.widgets import PlayableBoard, SearchExplorer
from ttt.widgets.explorer import tree_data
from ttt.widgets.steps import step_sentence

GAME = TicTacToe()


def sent(board: PlayableBoard) -> dict:
    """Return the state the browser is sent, as the board's traits hold it."""
    return {"squares": board.squares, "legal": board.legal, "line": board.line, "busy": board.busy}


def check_sent(board: PlayableBoard) -> None:
    """Assert the browser is sent exactly the game's position and the person's legal squares."""
    assert board.squares == board.state
    mine = not GAME.is_terminal(board.state) and GAME.to_move(board.state) == board.side
    assert board.legal == (sorted(GAME.moves(board.state)) if mine else [])
    assert board.busy is False


# --- the playable board ------------------------------------------------------------------------


@pytest.mark.parametrize("side", ["X", "O"])
def test_no_game_against_the_unbeatable_player_is_lost(side):
    """Every game a person can play against minimax, trying each free square at each turn."""
    board = PlayableBoard("minimax", side=side)
    finished = {"won": 0, "drawn": 0, "lost": 0}
    stack = [[]]
    while stack:
        clicks = stack.pop()
        board.new_game()
        for square in clicks:
            board.click(square)
        check_sent(board)
        if GAME.is_terminal(board.state):
            won = GAME.winner(board.state)
            finished["drawn" if won is None else "won" if won == side else "lost"] += 1
            assert won != board.computer or ("beat you" in board.status and board.won_by == "computer")
            continue
        assert GAME.to_move(board.state) == side
        stack.extend(clicks + [s] for s in GAME.moves(board.state))
    assert finished["won"] == 0  # the person never wins; every other ending happens
    assert finished["drawn"] > 0 and finished["lost"] > 0


def test_an_illegal_click_changes_nothing_and_says_why():
    board = PlayableBoard("minimax", side="X")
    board.click(4)
    before = (board.state, sent(board))
    taken = board.state.index("O")
    board.click(taken)
    assert (board.state, sent(board)) == before
    assert "is taken by O" in board.status and board.status_kind == "error"


def test_a_click_made_on_an_earlier_position_is_refused_not_played():
    board = PlayableBoard("minimax", side="X")
    turn = board.turn
    board.click_square(4, turn=turn)
    assert board.state.count("X") == 1 and board.turn > turn
    before = board.state
    board.click_square(0, turn=turn)  # queued while the computer thought: refused
    assert board.state == before and "before the last move" in board.status
    board.new_game()
    board.click_square(4, turn=turn)  # made before New game: refused too
    assert board.state == "........." and board.status_kind == "error"


def test_the_board_says_the_computer_is_thinking_and_offers_no_square_meanwhile():
    seen = []

    def watcher(cs50_board):
        seen.append((board.busy, list(board.legal), board.status, board.status_kind, board.squares))
        return next((i, j) for i in range(3) for j in range(3) if cs50_board[i][j] is None)

    board = PlayableBoard(watcher, side="X")
    board.click(4)
    busy, legal, status, kind, squares = seen[-1]
    assert busy and legal == [] and kind == "busy"
    assert status == "The computer (your watcher) is thinking…" and squares == "....X...."
    assert board.busy is False and board.legal and board.stamp > 0


def test_clicks_after_the_end_are_refused_and_the_winning_line_is_sent():
    board = PlayableBoard("win-block", side="X")
    # win-block blocks but cannot stop a fork: X 0, then 8, then the free corner.
    for square in (0, 8):
        board.click(square)
    free_corner = next(c for c in (2, 6) if board.state[c] == ".")
    board.click(free_corner)
    while not GAME.is_terminal(board.state):
        board.click(next(s for line in LINES for s in line if board.state[s] == "." and
                         sum(board.state[t] == "X" for t in line) == 2))
    assert GAME.winner(board.state) == "X" and "you beat the computer" in board.status
    assert board.line == list(board.game.winning_line(board.state)) and len(board.line) == 3 and board.won_by == "you"
    state = board.state
    board.click(board.state.index("."))
    assert board.state == state and "The game is over" in board.status


def test_choosing_o_or_another_opponent_starts_a_new_game():
    board = PlayableBoard("minimax", side="X")
    board.click(0)
    board.side = "O"  # what the browser's side buttons do
    assert board.state.count("X") == 1 and board.state.count("O") == 0 and board.squares == board.state
    assert "took square" in board.status
    board.new_game()
    assert board.state.count("X") == 1 and board.state.count("O") == 0
    board.click(next(s for s in range(9) if board.state[s] == "."))
    board.opponent = "random"
    assert board.state.count("X") == 1 and board.state.count("O") == 0 and board.opponent_label == "random"


def test_the_menu_lists_each_player_once_and_a_students_function_by_its_name():
    def minimax(board):
        return (0, 0)

    board = PlayableBoard(minimax)
    labels = [label for label, _ in board.opponents]
    assert labels.count("your minimax") == 1 and labels.count("minimax") == 1
    assert len(set(labels)) == len(labels) and board.opponent_label == "your minimax"
    assert not any("seed" in label for label in labels)


def test_bad_opponents_and_sides_are_refused():
    with pytest.raises(ValueError, match="unknown player 'nobody'"):
        PlayableBoard("nobody")
    with pytest.raises(ValueError, match="side must be 'X' or 'O'"):
        PlayableBoard(side="Z")


# A student's one-ply search: take a square that wins at once, else the first free one.
def one_ply(board):
    options = sorted((i, j) for i in range(3) for j in range(3) if board[i][j] is None)
    for action in options:
        child = result(board, action)
        if terminal(child) and utility(child) != 0:
            return action
    return options[0]


def cheat(board):
    """A student function that always answers (0, 0), taken or not."""
    return (0, 0)


def test_the_computers_thinking_for_a_students_function_is_its_calls_to_result():
    board = PlayableBoard(one_ply, side="O")  # one_ply plays X: it opens in square 0
    board.thinking = True
    assert "made to result()" in board.thinking_caption
    board.click(4)
    trace, caption = board.thinking_trace()
    assert "your one_ply" in caption
    assert trace.node_count == 1 + 7  # the root and its seven free squares
    assert len(board.thinking_tree["nodes"]) == 8 and board.thinking_tree["nodes"][0]["board"] == "X...O...."


def test_the_computers_thinking_for_a_registered_player_is_alpha_beta():
    board = PlayableBoard("minimax", side="X")
    board.thinking = True
    assert "has not moved yet" in board.thinking_caption and board.thinking_tree == {}
    board.click(4)
    trace, caption = board.thinking_trace()
    expected = record(GAME, "....X....", algorithm="alphabeta", ordered=True, max_depth=2, max_nodes=300)
    assert trace.events == expected.events  # only the nodes the panel draws are kept ...
    assert trace.node_count == record(GAME, "....X....", algorithm="alphabeta", ordered=True).node_count  # ... all counted
    assert caption == "Alpha-beta from .../.X./..., best moves first."
    assert board.thinking_tree["nodes"][0]["board"] == "....X...."
    assert max(n["depth"] for n in board.thinking_tree["nodes"]) == 2  # "moves deep"
    board.thinking_depth = 3
    assert max(n["depth"] for n in board.thinking_tree["nodes"]) == 3
    board.thinking = False
    assert board.thinking_tree == {}


def test_an_illegal_move_by_the_computer_is_shown_not_lost():
    board = PlayableBoard(cheat, side="X")
    board.click(0)
    assert "the computer (your cheat) did not make a legal move: square 0 is taken" in board.status
    assert board.status_kind == "error" and board.busy is False
    state = board.state
    board.click(1)
    assert board.state == state and "its last move failed" in board.status


def endless(board):
    """A student's minimax whose loop never moves on."""
    while True:
        pass


def actions(board):
    raise NotImplementedError()


def unwritten_actions(board):
    """A student's search that calls their actions, still a stub."""
    return next(iter(actions(board)))


def divides(board):
    return 1 // 0


def test_a_students_search_that_never_ends_is_stopped_at_its_cpu_limit_with_a_plain_message():
    board = PlayableBoard(endless, side="X")
    board.CPU_SECONDS = 0.5
    board.click(4)  # the computer's reply never comes
    assert board.status_kind == "error" and board.busy is False
    assert board.status.startswith("The computer (your endless) was stopped: it was still thinking after 0.5 s of CPU time")
    assert "Your move" not in board.status and "Traceback" not in board.status and "OutOfCpuTime" not in board.status


def test_a_fixed_function_whose_cell_ran_again_plays_from_the_next_new_game():
    """As the stopped board's message says: fix it, run its cell, then press New game (the board was given the old one)."""
    notebook: dict = {}
    exec("def mine(board):\n    while True:\n        pass", notebook)  # the student's cell
    board = PlayableBoard(notebook["mine"], side="X")
    board.CPU_SECONDS = 0.5
    board.click(4)
    assert "was stopped" in board.status and "run its cell, then press New game" in board.status
    exec("from ttt.tictactoe import minimax\ndef mine(board):\n    return minimax(board)", notebook)  # fixed, cell run again
    board.new_game()
    board.click(4)
    assert board.status_kind != "error" and board.state.count("O") == 1, board.status
    assert board.opponent_name == "your mine"


@pytest.mark.parametrize("function, said", [
    (unwritten_actions, "actions is not written yet: replace `raise NotImplementedError()` with your code."),
    (divides, "ZeroDivisionError: integer division or modulo by zero (in your divides, line "),
])
def test_an_error_in_a_students_function_is_told_in_the_lessons_words(function, said):
    board = PlayableBoard(function, side="X")
    board.click(4)
    assert board.status_kind == "error" and said in board.status, board.status
    assert "Your move" not in board.status and ".py line" not in board.status


# --- the search explorer -----------------------------------------------------------------------


def text_at(node: dict, k: int) -> list:
    """Return what a node row shows at step k, as the browser reads `texts`: the last entry from step <= k."""
    found = [t for t in node["texts"] if t[0] <= k]
    return found[-1][1:] if found else None


@pytest.mark.parametrize("board, algorithm", [("XO./.X./..O", "alphabeta"), ("XO./XO./...", "minimax"),
                                              ("XO./.X./...", "alphabeta")])
def test_the_explorer_data_at_step_k_is_exactly_the_first_k_events(board, algorithm):
    explorer = SearchExplorer(board, algorithm=algorithm)
    trace = explorer.trace
    assert trace.events == record(GAME, parse_board(board), algorithm=algorithm).events
    data = explorer.tree
    nodes = {n["id"]: n for n in data["nodes"]}
    assert len(nodes) == trace.node_count and data["total"] == trace.node_count
    for k, e in enumerate(trace.events, start=1):
        if isinstance(e, Enter):
            assert nodes[e.node]["enter"] == k
        elif isinstance(e, (Exit, Leaf)):
            assert nodes[e.node]["done"] == k
        elif isinstance(e, Cutoff):
            assert any(s["node"] == e.node and s["step"] == k and s["kind"] == "pruned" for s in data["stubs"])
    for k in range(1, len(trace) + 1) if len(trace) < 300 else range(1, len(trace) + 1, 7):
        known = build_tree(trace.events[:k])
        for i, n in nodes.items():
            if i in known:
                assert text_at(n, k)[0] == value_text(known[i]), (k, i)
            else:
                assert n["enter"] > k
        step = data["steps"][k - 1]
        assert step["sentence"] == step_sentence(trace, k)
        c = trace.counts(k)
        assert step["counts"] == [c["nodes"], c["cutoffs"], c["pruned"]]
        assert step["node"] == trace.events[k - 1].node
    assert data["pv"] == trace.principal_variation()
    sizes = {i: 1 + sum(1 for j in nodes if j != i and i in _ancestors(nodes, j)) for i in nodes}
    assert all(nodes[i]["size"] == sizes[i] for i in nodes)


def _ancestors(nodes: dict, i: int) -> set:
    found = set()
    while nodes[i]["parent"] is not None:
        i = nodes[i]["parent"]
        found.add(i)
    return found


def test_steps_back_and_forward_from_python_and_the_sentences_for_ties():
    explorer = SearchExplorer("XO./.X./...")
    assert explorer.trace.node_count == 270  # the lesson's default position
    for _ in range(12):
        explorer.forward()
    assert explorer.step == 12 and explorer.sentence().startswith("Step 12 of 578: ")
    explorer.back()
    assert explorer.step == 11
    ties = [s["sentence"] for s in explorer.tree["steps"] if "pruned" in s["sentence"]]
    cut = [e for e in explorer.trace.events if isinstance(e, Cutoff)]
    assert len(ties) == len(cut)
    for e, sentence in zip(cut, ties):
        bound = e.beta if e.value >= e.beta else e.alpha
        assert ("at least as good" in sentence) == (e.value == bound), sentence


def test_choosing_a_position_and_an_algorithm_records_a_new_search():
    explorer = SearchExplorer("XO./XO./...")
    explorer.position = "XO./.X./..O"
    assert explorer.trace.events == record(GAME, parse_board("XO./.X./..O")).events and explorer.step == 0
    explorer.algorithm = "minimax"
    assert explorer.trace.node_count == 238 and explorer.trace.cutoffs == 0
    explorer.ordered = True
    explorer.algorithm = "alphabeta"
    assert explorer.trace.events == record(GAME, parse_board("XO./.X./..O"), ordered=True).events
    explorer.click_square(8)  # the editor's squares cycle . -> X -> O -> .
    assert explorer.position == "XO./.X./..." and explorer.trace.node_count == 71  # ordered alpha-beta
    explorer.click_square(7)
    assert "3 X and 1 O" in explorer.status and explorer.trace.node_count == 71 and explorer.status_kind == "error"
    explorer.click_square(7)
    assert explorer.position == "XO./.X./.O." and explorer.status == ""
    assert explorer.trace.events == record(GAME, parse_board("XO./.X./.O."), ordered=True).events
    before = explorer.trace
    explorer.position = "XXX/OOO/..."
    assert explorer.trace is before and "cannot both have three in a row" in explorer.status


def test_the_explorer_shows_a_students_own_search_and_its_cutoffs():
    namespace = {"result": result, "utility": utility, "terminal": terminal}
    exec(
        "def search(board):\n"
        "    for action in [(2, 0), (2, 1), (2, 2)]:\n"
        "        child = result(board, action)\n"
        "        if terminal(child):\n"
        "            utility(child)\n",
        namespace,
    )
    with record_calls(namespace) as recorder:
        namespace["search"](from_text("XO./XO./..."))
    explorer = SearchExplorer(trace=recorder.trace())
    assert explorer.editable is False
    assert explorer.tree["steps"][-1]["counts"][0] == 4
    leaf = next(n for n in explorer.tree["nodes"] if n["board"] == "XO.XO.X..")
    assert text_at(leaf, len(explorer.trace))[0] == "v = 1"  # X wins with square 6
    # Whatever cut-offs a recording holds (moves the code never tried) are shown and counted.
    searched = record(GAME, parse_board("XO./.X./..."))
    mine = Trace(GAME, searched.events, None, "your search")
    data = tree_data(mine)
    assert data["steps"][-1]["counts"][1] == searched.cutoffs > 0
    assert sum(s["kind"] == "pruned" for s in data["stubs"]) == searched.cutoffs


def test_big_trees_are_cut_with_stubs_saying_how_much_is_left_out():
    trace = record(GAME, parse_board("XO./.X./..."))
    data = tree_data(trace, max_nodes=100)
    assert len(data["nodes"]) == 100
    more = [s for s in data["stubs"] if s["kind"] == "more"]
    assert sum(int(s["text"].split()[1]) for s in more) == trace.node_count - 100
    assert all(s["node"] in {n["id"] for n in data["nodes"]} for s in data["stubs"])


def test_the_explorer_needs_no_dot_program(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    explorer = SearchExplorer("XO./XO./...")
    explorer.forward()
    assert explorer.step == 1 and "Start at the root" in explorer.sentence() and explorer.tree["nodes"]


def test_the_explorer_steps_through_a_bigger_game():
    from ttt.games import get_game

    game = get_game("nine-board")
    explorer = SearchExplorer(game.format(game.initial()), game=game, algorithm="depth-limited", depth=1)
    assert explorer.trace.events == record(game, game.initial(), algorithm="depth-limited", depth=1).events
    assert explorer.editor is False and explorer.tree["nodes"][0]["last"] is None
    explorer.forward()
    assert "Start at the root, MAX node 0" in explorer.sentence() and explorer.status == ""


# --- the computer's thinking sends only what it draws ----------------------------------------

NAIVE = (Path(__file__).parent / "data" / "naive_tictactoe.py").read_text()
FULL_TREE = 549_946  # the nodes a plain minimax visits from the empty board, the board itself included


def notebook_minimax():
    """Return a plain CS50 minimax (no pruning, no memo) defined as a notebook defines it: in ``__main__``."""
    namespace = {"__name__": "__main__"}
    exec(NAIVE, namespace)
    return namespace["minimax"]


def check_thinking_sent(board: PlayableBoard, *, depth: int) -> dict:
    """Assert the panel sends at most its drawing's nodes, a step only for a drawn node's event; return the tree."""
    tree = board.thinking_tree
    drawn = {n["id"] for n in tree["nodes"]}
    assert 0 < len(drawn) <= PlayableBoard.THINKING_NODES
    assert max(n["depth"] for n in tree["nodes"]) <= depth
    trace = board._trace
    assert len(trace.nodes) <= PlayableBoard.THINKING_NODES  # recorded and kept: no more than drawn
    assert {s["node"] for s in tree["steps"]} <= drawn
    assert len(tree["steps"]) == sum(e.node in drawn for e in trace.events)
    assert all(1 <= n["enter"] <= n["done"] <= len(tree["steps"]) for n in tree["nodes"])
    assert len(json.dumps(tree)) < 1000 * len(drawn)  # under a kilobyte a drawn node
    return tree


@pytest.mark.parametrize("opponent", ["own", "minimax"])
def test_the_thinking_panel_sends_only_what_it_draws_from_the_empty_board(opponent):
    board = PlayableBoard(notebook_minimax() if opponent == "own" else "minimax", side="X")
    board.thinking = True
    board.side = "O"  # a new game: the computer opens from the empty board
    assert board.state.count("X") == 1 and board.thought_from == "........."
    tree = check_thinking_sent(board, depth=2)
    if opponent == "own":
        assert tree["total"] == FULL_TREE  # every node searched is counted, ...
        assert len(tree["nodes"]) == 1 + 9 + 72  # ... two moves deep are drawn
        more = sum(int(s["text"].split()[1]) for s in tree["stubs"] if s["kind"] == "more")
        assert more == FULL_TREE - len(tree["nodes"])  # ... and the rest said in the "… N more" rows
        assert tree["nodes"][0]["texts"][-1][1] == "v = 0" and tree["nodes"][0]["size"] == FULL_TREE


def test_the_thinking_panel_mid_game_draws_the_students_calls_with_their_values():
    board = PlayableBoard(notebook_minimax(), side="X")
    board.thinking = True
    board.click(0)
    tree = check_thinking_sent(board, depth=2)
    whole = record(GAME, "X........", algorithm="minimax")
    assert tree["total"] == whole.node_count == 59_705
    values = {n["board"]: n["texts"][-1][1] for n in tree["nodes"]}
    for node in whole.nodes.values():
        if node.depth <= 2:
            assert values["".join(node.state)] == f"v = {int(node.value)}"
    assert len(json.dumps(tree)) < 40_000
    board.thinking_depth = 9  # deeper: recorded again, still no more than the panel draws
    tree = check_thinking_sent(board, depth=9)
    assert len(tree["nodes"]) == PlayableBoard.THINKING_NODES and tree["total"] == 59_705
    board.thinking_depth = 1  # shallower: every move from the root, not the first 300 nodes' few
    tree = check_thinking_sent(board, depth=1)
    assert len(tree["nodes"]) == 1 + len(GAME.moves(board.thought_from))
