"""Pictures of the search: the DOT text of `draw_tree`, its SVG, the boards, and `ttt tree`.

DOT tests read ``Digraph.body`` (no dot program needed); tests that render carry the ``dot``
marker. Counts are compared with the recorded search's own counts, on small fixed positions.
"""

from __future__ import annotations

import re

import graphviz
import pytest

from ttt import InvalidBoardError
from ttt.cli import main
from ttt.draw import draw_board, draw_tree, render_svg
from ttt.games import get_game
from ttt.games.classic import TicTacToe, parse_board
from ttt import search
from ttt.search import Cutoff
from ttt.trace import build_tree, record
from ttt.widgets.steps import step_sentence

GAME = TicTacToe()
POSITIONS = ["XO./XO./...", "XO./.X./..O", "XOX/.O./...", "X.O/.X./O.."]
SEARCHES = [("minimax", False), ("alphabeta", False), ("alphabeta", True)]


# --- reading DOT -------------------------------------------------------------------------------


def _attributes(text: str) -> dict[str, str]:
    """Return a DOT attribute list's name -> value, HTML-like labels kept whole."""
    found, i = {}, 0
    while i < len(text):
        m = re.compile(r"\s*([\w-]+)=").match(text, i)
        if not m:
            break
        name, i = m.group(1), m.end()
        if text.startswith("<", i):  # an HTML-like label: up to the matching '>'
            depth, j = 0, i
            while True:
                depth += {"<": 1, ">": -1}.get(text[j], 0)
                j += 1
                if depth == 0:
                    break
        elif text.startswith('"', i):
            j = text.index('"', i + 1) + 1
        else:
            j = re.compile(r"[^\s\]]+").match(text, i).end()
        found[name] = text[i:j].strip('"')
        i = j
    return found


def statements(dot: graphviz.Digraph) -> tuple[dict[str, dict], dict[tuple[str, str], dict]]:
    """Return (node name -> attributes, (tail, head) -> attributes) of a Digraph's body."""
    nodes, edges = {}, {}
    for line in dot.body:
        m = re.match(r"\t(\w+)(?: -> (\w+))? \[(.*)\]$", line, re.S)
        assert m, f"unexpected DOT line {line!r}"
        attrs = _attributes(m.group(3))
        if m.group(2):
            edges[(m.group(1), m.group(2))] = attrs
        elif m.group(1) not in ("graph", "node", "edge"):  # not the default-attribute statements
            nodes[m.group(1)] = attrs
    return nodes, edges


def board_nodes(nodes: dict) -> dict[int, dict]:
    return {int(name[1:]): a for name, a in nodes.items() if re.fullmatch(r"n\d+", name)}


def tree_edges(edges: dict) -> dict[str, dict]:
    return {a["id"]: a for a in edges.values() if re.fullmatch(r"e\d+", a["id"])}


# --- the tree's DOT ----------------------------------------------------------------------------


@pytest.mark.parametrize("board", POSITIONS)
@pytest.mark.parametrize("algorithm, ordered", SEARCHES)
def test_counts_equal_the_searchs_counts(board, algorithm, ordered):
    trace = record(GAME, parse_board(board), algorithm=algorithm, ordered=ordered)
    nodes, edges = statements(draw_tree(trace, max_nodes=None))
    assert len(board_nodes(nodes)) == trace.node_count == trace.result.nodes
    assert len(tree_edges(edges)) == trace.result.nodes - 1
    pruned = {a["id"] for a in edges.values() if a.get("class") == "pruned"}
    assert len(pruned) == trace.cutoffs == trace.result.cutoffs
    assert len(edges) == trace.result.nodes - 1 + trace.result.cutoffs  # nothing else is drawn
    assert len(nodes) == trace.result.nodes + trace.result.cutoffs


@pytest.mark.parametrize("board", POSITIONS)
def test_only_pruned_edges_are_dashed_and_their_stubs_name_the_skipped_moves(board):
    trace = record(GAME, parse_board(board), algorithm="alphabeta")
    nodes, edges = statements(draw_tree(trace, max_nodes=None))
    dashed = {a["id"] for a in edges.values() if "dashed" in a.get("style", "")}
    cutoffs = {e.node: e.skipped for e in trace.events if isinstance(e, Cutoff)}
    assert dashed == {f"pruned{i}" for i in cutoffs}
    assert cutoffs, "the fixed positions were chosen to have cut-offs"
    for i, skipped in cutoffs.items():
        assert edges[(f"n{i}", f"prunedstub{i}")]["color"] == "#9a9a9a"
        assert nodes[f"prunedstub{i}"]["label"] == "pruned:\n" + ", ".join(map(str, skipped))


@pytest.mark.parametrize("board", POSITIONS)
@pytest.mark.parametrize("algorithm, ordered", SEARCHES)
def test_principal_variation_is_bold_and_leads_to_the_value(board, algorithm, ordered):
    trace = record(GAME, parse_board(board), algorithm=algorithm, ordered=ordered)
    _, edges = statements(draw_tree(trace, max_nodes=None))
    bold = {a["id"] for a in edges.values() if a.get("style") == "bold"}
    pv = trace.principal_variation()
    assert bold == {f"e{i}" for i in pv[1:]}
    tree = trace.nodes
    assert tree[pv[0]].best_move == trace.result.move
    assert tree[pv[-1]].leaf == "terminal" and GAME.utility(tree[pv[-1]].state) == trace.result.value
    assert all(tree[i].value == trace.result.value for i in pv)


def test_labels_show_side_board_value_window_and_move():
    trace = record(GAME, parse_board("XO./XO./..."), algorithm="alphabeta")
    nodes, edges = statements(draw_tree(trace))
    root, child = board_nodes(nodes)[0]["label"], board_nodes(nodes)[1]["label"]
    assert "▲ MAX <FONT COLOR='#777777'>#0</FONT>" in root and "v = 1" in root and "α=1 β=∞" in root
    assert "▼ MIN <FONT COLOR='#777777'>#1</FONT>" in child
    assert "MAX 0" not in root and "MIN 1" not in child  # the visit number cannot be read as a value
    assert root.count("<B>X</B>") == 2 and root.count("<B>O</B>") == 2
    assert 'BGCOLOR="#fff3a8"><B>X</B>' in child  # the square just played is shaded
    assert edges[("n0", "n1")]["label"] == str(trace.nodes[1].move)
    minimax = draw_tree(record(GAME, parse_board("XO./XO./..."), algorithm="minimax"))
    assert "α=" not in minimax.source and "v = 1" in minimax.source


def test_a_search_under_way_shows_unknown_values_and_bounds():
    trace = record(GAME, parse_board("XO./XO./..."), algorithm="alphabeta")
    k = 12
    nodes, _ = statements(draw_tree(trace.upto(k)))
    assert len(board_nodes(nodes)) == trace.upto(k).node_count
    labels = [a["label"] for a in board_nodes(nodes).values()]
    assert any("v = ?" in label for label in labels)
    assert any("v ≥" in label or "v ≤" in label for label in labels)


@pytest.mark.parametrize("limit", [{"max_nodes": 10}, {"max_depth": 1}, {"max_depth": 2, "max_nodes": 7}])
def test_cut_trees_say_how_much_is_left_out(limit):
    trace = record(GAME, parse_board("XO./.X./..O"), algorithm="minimax")
    dot = draw_tree(trace, **limit)
    nodes, edges = statements(dot)
    shown = board_nodes(nodes)
    if "max_nodes" in limit:
        assert len(shown) <= limit["max_nodes"]
    if "max_depth" in limit:
        assert max(trace.nodes[i].depth for i in shown) == limit["max_depth"]
    more = [int(re.fullmatch(r"… (\d+) more", a["label"]).group(1)) for n, a in nodes.items() if n.startswith("more")]
    assert sum(more) == trace.node_count - len(shown)
    assert f"showing {len(shown)} of {trace.node_count} nodes" in dot.source
    assert len([e for e in edges.values() if e["id"].startswith("emore")]) == len(more)


def test_nothing_is_left_out_silently_by_default_limits():
    small = record(GAME, parse_board("XO./XO./..."), algorithm="alphabeta")
    assert "showing" not in draw_tree(small).source and "more" not in draw_tree(small).source


def test_a_student_search_recorded_through_its_calls_draws_values_backed_up_from_its_leaves():
    from ttt import tictactoe

    namespace = {"result": tictactoe.result, "utility": tictactoe.utility}
    exec(
        "def search(board):\n"
        "    for a in sorted(actions(board)):\n"
        "        child = result(board, a)\n"
        "        if terminal(child):\n"
        "            utility(child)\n",
        namespace,
    )
    namespace.update(actions=tictactoe.actions, terminal=tictactoe.terminal)
    from ttt.call_recorder import record_calls

    with record_calls(namespace) as recorder:
        namespace["search"](tictactoe.from_text("XO./XO./..."))
    nodes, edges = statements(draw_tree(recorder.trace()))
    assert len(board_nodes(nodes)) == 6 and len(edges) == 5
    labels = {i: a["label"] for i, a in board_nodes(nodes).items()}
    assert "v = ?" not in "".join(labels.values())
    assert sum("v = 1" in label for label in labels.values()) == 1  # X wins at 6; no other child ends the game
    assert sum("v = " in label for label in labels.values()) == 1  # the root's other children are not known


def _recorded_minimax(text: str):
    """Return the trace of a plain minimax written as a student would, recorded through its calls."""
    from ttt import tictactoe
    from ttt.call_recorder import record_calls

    namespace = {name: getattr(tictactoe, name) for name in ("actions", "result", "terminal", "utility", "player")}
    exec(
        "def value(board):\n"
        "    if terminal(board):\n"
        "        return utility(board)\n"
        "    found = [value(result(board, a)) for a in sorted(actions(board))]\n"
        "    return max(found) if player(board) == 'X' else min(found)\n",
        namespace,
    )
    with record_calls(namespace) as recorder:
        namespace["value"](tictactoe.from_text(text))
    return recorder.trace()


def test_a_recorded_minimax_shows_backed_up_values_and_its_best_path_in_bold():
    trace = _recorded_minimax("XOX/.O./X..")
    tree = build_tree(trace.events)
    exact = {i: search.minimax(GAME, n.state).value for i, n in tree.items()}
    from ttt.trace import backed_up_values

    assert backed_up_values(tree) == exact  # every leaf is known: every node gets its minimax value
    nodes, _ = statements(draw_tree(trace))
    for i, attrs in board_nodes(nodes).items():
        assert f"v = {exact[i]:g}" in attrs["label"], i
    path = trace.principal_variation()
    assert path[0] == 0 and len(path) > 1 and all(exact[i] == exact[0] == -1 for i in path)
    assert {i for i, a in board_nodes(nodes).items() if "bold" in a["style"]} == set(path)
    tree[max(tree)].done = False  # one leaf unknown: its ancestors get no value
    unknown = backed_up_values(tree)
    assert 0 not in unknown and set(unknown) < set(exact)


def test_other_games_draw_their_boards_as_text():
    game = get_game("nine-board")
    trace = record(game, game.initial(), algorithm="depth-limited", depth=1)
    nodes, edges = statements(draw_tree(trace, max_nodes=None))
    assert len(board_nodes(nodes)) == trace.node_count == trace.result.nodes
    assert 'FACE="Courier"' in nodes["n0"]["label"]
    assert {a["label"] for (_, _), a in edges.items()} == {game.move_name(m) for m in game.moves(game.initial())}


def test_building_dot_needs_no_dot_program(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot on PATH
    trace = record(GAME, parse_board("XO./XO./..."))
    dot = draw_tree(trace)
    assert "n0 ->" in dot.source
    with pytest.raises(graphviz.ExecutableNotFound):
        render_svg(dot)


# --- sentences ---------------------------------------------------------------------------------


def test_every_cutoff_sentence_names_the_bound_and_the_skipped_moves():
    trace = record(GAME, parse_board("XO./.X./..O"), algorithm="alphabeta")
    for k, e in enumerate(trace.events, start=1):
        if isinstance(e, Cutoff):
            side = "MAX" if trace.nodes[e.node].maximizing else "MIN"
            test = f">= beta {e.beta:g}" if side == "MAX" else f"<= alpha {e.alpha:g}"
            moves = ", ".join(map(str, e.skipped))
            many = "its last move is" if len(e.skipped) == 1 else f"its last {len(e.skipped)} moves are"
            assert step_sentence(trace, k).startswith(f"{side} node {e.node}: value {e.value:g} {test}, so {many} pruned ({moves})")
    assert step_sentence(trace, 0).startswith("Before the search")
    assert step_sentence(trace, len(trace)).endswith("The search is over.")


# --- boards ------------------------------------------------------------------------------------


def test_draw_board_displays_inline_and_refuses_bad_boards():
    picture = draw_board("XO./.X./..O", highlight=(0, 4, 8))
    svg = picture._repr_svg_()
    assert svg.startswith("<svg") and svg.count("<path d=") == 2 and svg.count("<circle") == 2
    assert svg.count('fill="#c7e9c0"') == 3
    from ttt.tictactoe import from_text

    assert draw_board(from_text("XO./.X./..O")) == draw_board("XO./.X./..O")
    with pytest.raises(InvalidBoardError, match="3 X and 1 O"):
        draw_board("XXX/O../...")
    game = get_game("nine-board")
    assert "<pre" in draw_board(game.initial(), game=game)._repr_html_()


# --- rendering (needs dot) ---------------------------------------------------------------------


@pytest.mark.dot
def test_svg_keeps_ids_and_dashes_only_the_pruned_edges():
    trace = record(GAME, parse_board("XO./.X./..O"), algorithm="alphabeta")
    svg = render_svg(draw_tree(trace, max_nodes=None))
    groups = dict(re.findall(r'<g id="([^"]+)" class="edge[^"]*">(.*?)</g>', svg, re.S))
    dashed = {i for i, body in groups.items() if "stroke-dasharray" in body}
    assert dashed == {f"pruned{e.node}" for e in trace.events if isinstance(e, Cutoff)}
    assert all(f'<g id="pruned{i[6:]}" class="edge pruned">' in svg for i in dashed)
    assert len(re.findall(r'<g id="n\d+" class="node (max|min)">', svg)) == trace.node_count


@pytest.mark.dot
def test_a_trace_and_its_digraph_display_inline():
    trace = record(GAME, parse_board("XO./XO./..."))
    bundle = trace._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"]
    assert "<svg" in draw_tree(trace)._repr_mimebundle_()["image/svg+xml"]
    # In a notebook the picture scales down to the column (never up): the root stays in view.
    html = draw_tree(trace)._repr_mimebundle_()["text/html"]
    assert '<svg class="ttt-tree-picture" style="max-width:100%; height:auto"' in html and "<?xml" not in html


# --- ttt tree ----------------------------------------------------------------------------------


def test_cli_writes_dot_without_the_dot_program(tmp_path, monkeypatch, capsys):
    out = tmp_path / "tree.dot"
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["tree", "XO./.X./...", "--algorithm", "minimax", "--max-nodes", "50", "-o", str(out)]) == 0
    expected = draw_tree(record(GAME, parse_board("XO./.X./..."), algorithm="minimax"), max_nodes=50).source
    assert out.read_text() == expected
    assert "minimax visited 1061 nodes" in capsys.readouterr().out
    assert main(["tree", "XO./.X./...", "-o", str(tmp_path / "tree.svg")]) == 2
    assert "dot program is not installed" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["tree", "XO./XX./..."], "3 X and 1 O"),
        (["tree", "XO"], "has 2 squares"),
        (["tree", "XO./.X./...", "-o", "tree.pdf"], "must end in .svg, .png or .dot"),
        (["tree", "XO./.X./...", "--algorithm", "depth-limited"], "needs --depth"),
        (["tree", "XO./.X./...", "--algorithm", "depth-limited", "--depth", "2"], "no heuristic"),
        (["tree", "XO./.X./...", "--max-nodes", "0"], "at least 1"),
    ],
)
def test_cli_bad_input_is_a_clean_error(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("ttt: error: ") and message in err and "Traceback" not in err


def test_cli_prints_dot_without_an_output_file(capsys):
    assert main(["tree", "XO./XO./...", "--ordered"]) == 0
    out = capsys.readouterr().out
    assert out == draw_tree(record(GAME, parse_board("XO./XO./..."), ordered=True)).source


@pytest.mark.dot
@pytest.mark.parametrize("suffix, magic", [(".svg", b"<?xml"), (".png", b"\x89PNG")])
def test_cli_renders_svg_and_png(tmp_path, suffix, magic):
    out = tmp_path / f"tree{suffix}"
    assert main(["tree", "XO./.X./..O", "-o", str(out)]) == 0
    assert out.read_bytes().startswith(magic)


def test_a_recording_that_kept_few_nodes_says_how_many_it_left_out():
    game = TicTacToe()
    whole = record(game, parse_board("X../.../..."), algorithm="minimax")
    kept = record(game, parse_board("X../.../..."), algorithm="minimax", max_depth=1)
    assert kept.node_count == whole.node_count and len(kept.nodes) == 9
    source = draw_tree(kept).source
    assert f"showing 9 of {whole.node_count} nodes" in source
    more = [int(n) for n in re.findall(r"… (\d+) more", source)]
    assert len(more) == 8 and sum(more) == whole.node_count - 9


def test_a_tree_where_dot_cannot_run_is_drawn_by_the_browser(monkeypatch):
    """No dot on PATH, or (Python in a browser) no process at all: the tree is a widget the page draws
    from the same DOT text with WebAssembly Graphviz, with a sentence for front ends with no widgets."""
    import sys

    import graphviz

    from ttt.draw import DOT_IN_A_BROWSER, DOT_MISSING, draw_tree
    from ttt.widgets.picture import GRAPHVIZ_MODULE, TreePicture, graphviz_module

    trace = record(GAME, parse_board("XOX/OXO/..."), algorithm="minimax")
    source = draw_tree(trace).source
    assert GRAPHVIZ_MODULE.is_file(), "make setup copies npm's @viz-js/viz into ttt/widgets/static/ (it needs npm)"
    assert b"Viz.js" in graphviz_module()[:200]
    shown: list[TreePicture] = []

    class Seen(TreePicture):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            shown.append(self)

    monkeypatch.setattr("ttt.widgets.picture.TreePicture", Seen)
    monkeypatch.setenv("PATH", "")
    bundle = draw_tree(trace)._repr_mimebundle_()
    assert bundle["text/plain"] == f"{DOT_MISSING} (The tree's DOT text is its .source.)"
    [picture] = shown
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == picture.model_id
    assert picture.kind == "dot" and picture.dot == source

    def no_processes(*args, **kwargs):
        raise OSError(138, "emscripten does not support processes")

    monkeypatch.setattr(graphviz.Digraph, "pipe", no_processes)
    monkeypatch.setattr(sys, "platform", "emscripten")
    bundle = draw_tree(trace)._repr_mimebundle_()
    assert bundle["text/plain"].startswith(DOT_IN_A_BROWSER) and "application/vnd.jupyter.widget-view+json" in bundle

    # a copy of ttt with no WebAssembly Graphviz (built without npm): the sentence alone, never a traceback
    monkeypatch.setattr("ttt.widgets.picture.GRAPHVIZ_MODULE", GRAPHVIZ_MODULE.with_name("absent.js"))
    assert draw_tree(trace)._repr_mimebundle_() == {"text/plain": f"{DOT_IN_A_BROWSER} (The tree's DOT text is its .source.)"}
