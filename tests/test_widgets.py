"""The widgets without a browser: clicks are ``Button.click()``, choices are ``.value = ...``.

The board is played against the unbeatable player in every game a person can play (each
possible reply at each turn), from both sides. The explorer is checked step by step against
the recorded trace it shows.
"""

from __future__ import annotations

import html
import re

import pytest

from ttt.draw import counts, step_sentence
from ttt.games.classic import LINES, TicTacToe, parse_board
from ttt.search import Cutoff, Enter
from ttt.tictactoe import from_text, result, terminal, utility
from ttt.trace import record, record_calls
from ttt.widgets import PlayableBoard, SearchExplorer

GAME = TicTacToe()


def marks(board: PlayableBoard) -> str:
    """Return the board as the buttons show it, nine characters ('.' for an empty square)."""
    return "".join(b.description or "." for b in board.squares)


def status(widget) -> str:
    """Return the status line's text without its HTML."""
    return re.sub(r"<[^>]+>", "", widget.status.value)


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
        assert marks(board) == board.state
        if GAME.is_terminal(board.state):
            won = GAME.winner(board.state)
            finished["drawn" if won is None else "won" if won == side else "lost"] += 1
            assert won != board.computer or "beat you" in status(board)
            continue
        assert GAME.to_move(board.state) == side
        stack.extend(clicks + [s] for s in GAME.moves(board.state))
    assert finished["won"] == 0  # the person never wins; every other ending happens
    assert finished["drawn"] > 0 and finished["lost"] > 0


def test_an_illegal_click_changes_nothing_and_says_why():
    board = PlayableBoard("minimax", side="X")
    board.click(4)
    before = (board.state, marks(board), [b.button_style for b in board.squares])
    taken = board.state.index("O")
    board.click(taken)
    assert (board.state, marks(board), [b.button_style for b in board.squares]) == before
    assert "is taken by O" in status(board) and "ttt-error" in board.status.value


def test_clicks_after_the_end_are_refused_and_the_winning_line_is_highlighted():
    board = PlayableBoard("win-block", side="X")
    # win-block blocks but cannot stop a fork: X 0, then 8, then the free corner.
    for square in (0, 8):
        board.click(square)
    free_corner = next(c for c in (2, 6) if board.state[c] == ".")
    board.click(free_corner)
    while not GAME.is_terminal(board.state):
        board.click(next(s for line in LINES for s in line if board.state[s] == "." and
                         sum(board.state[t] == "X" for t in line) == 2))
    assert GAME.winner(board.state) == "X" and "you beat the computer" in status(board)
    line = board.winning_line()
    assert [b.button_style == "success" for b in board.squares] == [s in line for s in range(9)]
    assert all("ttt-win" in board.squares[s]._dom_classes for s in line)
    state = board.state
    board.click(board.state.index("."))
    assert board.state == state and "The game is over" in status(board)


def test_choosing_o_lets_the_computer_open_and_new_game_starts_again():
    board = PlayableBoard("minimax", side="X")
    board.click(0)
    board.side_picker.value = "O"
    assert board.state.count("X") == 1 and board.state.count("O") == 0
    assert "took square" in status(board)
    board.new_button.click()
    assert board.state.count("X") == 1 and board.state.count("O") == 0


def test_stable_css_classes():
    board = PlayableBoard()
    assert "ttt-board" in board.board._dom_classes and "ttt-status" in board.status._dom_classes
    assert all("ttt-square" in b._dom_classes and b.description == "" for b in board.squares)
    explorer = SearchExplorer("XO./XO./...")
    assert "ttt-explorer" in explorer._dom_classes and "ttt-tree" in explorer.tree._dom_classes
    assert "ttt-step" in explorer.step_button._dom_classes and explorer.step_button.description == "Step"
    assert "ttt-back" in explorer.back_button._dom_classes and explorer.back_button.description == "Back"


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


@pytest.mark.dot
def test_the_computers_thinking_for_a_students_function_is_its_calls_to_result():
    board = PlayableBoard(one_ply, side="O")  # one_ply plays X: it opens in square 0
    board.thinking.value = True
    assert "made to result()" in board.tree.value
    board.click(4)
    trace, caption = board.thinking_trace()
    assert "one_ply" in caption
    assert trace.node_count == 1 + 7  # the root and its seven free squares
    assert board.tree.value.count('class="node max"') + board.tree.value.count('class="node min"') == 8


@pytest.mark.dot
def test_the_computers_thinking_for_a_registered_player_is_alpha_beta():
    board = PlayableBoard("minimax", side="X")
    board.thinking.value = True
    assert "has not moved yet" in board.tree.value
    board.click(4)
    trace, caption = board.thinking_trace()
    expected = record(GAME, "....X....", algorithm="alphabeta", ordered=True)
    assert trace.events == expected.events
    assert caption == "Alpha-beta from .../.X./..., best moves first."
    assert "<svg" in board.tree.value and 'id="n0"' in board.tree.value


def test_an_illegal_move_by_the_computer_is_shown_not_lost():
    board = PlayableBoard(cheat, side="X")
    board.click(0)
    assert "the computer (cheat) did not make a legal move: square 0 is taken" in status(board)
    state = board.state
    board.click(1)
    assert board.state == state and "its last move failed" in status(board)


# --- the search explorer -----------------------------------------------------------------------


def shown(explorer: SearchExplorer) -> dict:
    """Return what the explorer's picture shows: hidden ids, each node's value text, the current node."""
    texts = dict(re.findall(r'<text id="([vw]\d+_\d+)" class="slot"[^>]*>([^<]*)</text>', explorer.tree.value))
    hidden, visible, current = set(), [], None
    for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", explorer.tree_style.value.removeprefix("<style>")):
        ids = re.findall(r"#(\w+)", selectors)
        if "display: none" in body:
            hidden |= set(ids)
        elif "display: inline" in body:
            visible += ids
        elif "stroke:" in body:
            (current,) = [int(i[1:]) for i in ids]
    return {"hidden": hidden, "values": {v.split("_")[0]: texts[v] for v in visible}, "current": current}


@pytest.mark.dot
def test_the_explorer_at_step_k_shows_exactly_the_first_k_events():
    explorer = SearchExplorer("XO./.X./..O", algorithm="alphabeta")
    trace = explorer.trace
    assert trace.events == record(GAME, parse_board("XO./.X./..O")).events
    ids = [e.node for e in trace.events if isinstance(e, Enter)]
    cuts = [e.node for e in trace.events if isinstance(e, Cutoff)]
    for k in range(len(trace) + 1):
        assert explorer.k == k
        seen = shown(explorer)
        entered = {e.node for e in trace.events[:k] if isinstance(e, Enter)}
        cut = {e.node for e in trace.events[:k] if isinstance(e, Cutoff)}
        expected_hidden = {f"n{i}" for i in ids if i not in entered} | {f"e{i}" for i in ids[1:] if i not in entered}
        expected_hidden |= {f"{p}{i}" for i in cuts if i not in cut for p in ("pruned", "prunedstub")}
        assert seen["hidden"] == expected_hidden
        assert {int(v[1:]) for v in seen["values"] if v[0] == "v"} == entered
        assert seen["current"] == (trace.events[k - 1].node if k else None)
        assert step_sentence(trace, k) in html.unescape(explorer.sentence.value)
        c = counts(trace, k)
        assert f"Nodes visited: {c['nodes']} of {trace.node_count}. Cut-offs: {c['cutoffs']}" in explorer.tally.value
        explorer.step_button.click()
    final = {slot: text for slot, text in shown(explorer)["values"].items() if slot[0] == "v"}
    assert final == {f"v{i}": f"v = {n.value:g}" for i, n in trace.nodes.items()}
    explorer.step_button.click()
    assert explorer.k == len(trace)  # Step at the end does nothing


@pytest.mark.dot
def test_back_undoes_step():
    explorer = SearchExplorer("XO./XO./...")
    pictures = []
    for _ in range(len(explorer.trace)):
        pictures.append((explorer.tree_style.value, explorer.sentence.value, explorer.tally.value))
        explorer.step_button.click()
    for k in reversed(range(len(explorer.trace))):
        explorer.back_button.click()
        assert explorer.k == k
        assert (explorer.tree_style.value, explorer.sentence.value, explorer.tally.value) == pictures[k]
    explorer.back_button.click()
    assert explorer.k == 0


@pytest.mark.dot
def test_slider_and_play_move_to_the_same_picture_as_stepping():
    explorer = SearchExplorer("XO./XO./...")
    for _ in range(9):
        explorer.step()
    stepped = explorer.tree_style.value
    explorer.slider.value = 0
    explorer.play.value = 9  # what Play's timer does in the browser
    assert explorer.slider.value == 9 and explorer.tree_style.value == stepped
    explorer.speed.value = 100
    assert explorer.play.interval == 100
    assert "scroll-snap-align" in explorer.tree_style.value
    explorer.follow.value = False
    explorer.zoom.value = 50
    assert "scroll-snap" not in explorer.tree_style.value and "zoom: 0.5;" in explorer.tree_style.value


@pytest.mark.dot
def test_choosing_a_position_and_an_algorithm_records_a_new_search():
    explorer = SearchExplorer("XO./XO./...")
    explorer.position.value = "XO./.X./..O"
    assert explorer.trace.events == record(GAME, parse_board("XO./.X./..O")).events and explorer.k == 0
    explorer.algorithm.value = "minimax"
    assert explorer.trace.node_count == 238 and explorer.trace.cutoffs == 0
    explorer.ordered.value = True
    explorer.algorithm.value = "alphabeta"
    assert explorer.trace.events == record(GAME, parse_board("XO./.X./..O"), ordered=True).events
    explorer.editor[8].click()  # the editor's squares cycle . -> X -> O -> .
    assert explorer.position.value == "XO./.X./..." and explorer.trace.node_count == 71  # ordered alpha-beta
    explorer.editor[7].click()
    assert "3 X and 1 O" in status(explorer) and explorer.trace.node_count == 71
    explorer.editor[7].click()
    assert explorer.position.value == "XO./.X./.O." and status(explorer) == ""
    assert explorer.trace.events == record(GAME, parse_board("XO./.X./.O."), ordered=True).events
    before = explorer.trace
    explorer.position.value = "XXX/OOO/..."
    assert explorer.trace is before and "cannot both have three in a row" in status(explorer)


@pytest.mark.dot
def test_the_explorer_shows_a_students_own_search():
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
    assert explorer.choose.layout.display == "none"
    for _ in range(len(explorer.trace)):
        explorer.step()
    assert "Nodes visited: 4 of 4" in explorer.tally.value
    assert shown(explorer)["values"]["v1"] == "v = 1"  # X wins with square 6


def test_without_dot_the_explorer_says_so_and_still_steps(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    explorer = SearchExplorer("XO./XO./...")
    assert "dot program is not installed" in explorer.tree.value
    explorer.step_button.click()
    assert explorer.k == 1 and "Start at the root" in explorer.sentence.value


def test_without_dot_the_board_says_so_when_asked_for_its_thinking(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    board = PlayableBoard("minimax", side="X")
    board.click(0)
    board.thinking.value = True
    assert "dot program is not installed" in board.tree.value and board.state.count("O") == 1


@pytest.mark.dot
def test_the_explorer_steps_through_a_bigger_game():
    from ttt.games import get_game

    game = get_game("nine-board")
    explorer = SearchExplorer(game.format(game.initial()), game=game, algorithm="depth-limited", depth=1)
    assert explorer.trace.events == record(game, game.initial(), algorithm="depth-limited", depth=1).events
    explorer.step()
    assert "Start at the root, MAX node 0" in explorer.sentence.value and explorer.status.value == ""
