"""Pictures: boards as SVG, and recorded searches as graphviz trees, whole or step by step.

`draw_tree` turns a `ttt.trace.Trace` into a ``graphviz.Digraph`` drawn as in the textbook's
figures (AIMA 4th ed., Fig. 5.2 for minimax, Fig. 5.5 for alpha-beta, Fig. 5.10 for Monte
Carlo tree search): each node shows its board, MAX ▲ or MIN ▼, its value and, for alpha-beta,
its window [α, β], or for MCTS its visits and mean result ("N=12  Q=0.58"); edges carry the
move; a cut-off is a dashed grey edge to a stub naming the moves it skipped; the principal
variation (for MCTS, the most visited path) is bold. Building the DOT text needs no ``dot``
program; only rendering does.

A node's lines (`value_text`, `window_text`, `visits_text`, `ucb_text`) are written here once,
for the pictures and for the explorer's step-by-step view, whose sentences are
``ttt.widgets.steps``' (``from ttt.draw import step_sentence, steps`` still finds them there).
What a trace means (its tree, principal variation, backed-up values, counts, visits) is the
trace's own business (``ttt.trace``); this module only draws it.
"""

from __future__ import annotations

import html
import math
import sys
from dataclasses import dataclass
from typing import Any, Mapping, Optional

import graphviz

from ttt.trace import Trace, TraceNode, backed_up_values

MAX_FILL = "#dbe9f6"  # MAX nodes: pale blue
MIN_FILL = "#fbe3d6"  # MIN nodes: pale orange
MOVE_FILL = "#fff3a8"  # the square just played, on a node's board
PRUNED = "#9a9a9a"  # cut-off edges and their stubs
SLOT_WIDTH = 54  # points: the fixed width of a node's value and window lines
VISITS_SLOT_WIDTH = 90  # points: an MCTS node's line, "N=1234  Q=0.58"
DOT_MISSING = (
    "Graphviz's dot program is not installed, so the tree cannot be drawn. Install it "
    "(Debian/Ubuntu: sudo apt-get install graphviz; macOS: brew install graphviz; "
    "conda: conda install -c conda-forge graphviz) and run this again."
)
DOT_IN_A_BROWSER = ("Search trees are drawn by Graphviz's dot program, which cannot run where Python runs inside "
                    "the browser: this picture needs the lesson in JupyterLab on a computer.")


# --- numbers and words ---------------------------------------------------------------------


def number(x: Optional[float]) -> str:
    """Return a value or bound as a person writes it: 1, -1, 0.25, ∞, -∞ ('?' if unknown)."""
    if x is None:
        return "?"
    if x == math.inf:
        return "∞"
    if x == -math.inf:
        return "-∞"
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.3g}"


def side_name(maximizing: bool) -> str:
    return "MAX" if maximizing else "MIN"


def moves_text(game: Any, moves: tuple) -> str:
    return ", ".join(game.move_name(m) for m in moves)


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def value_text(node: TraceNode, *, known: bool = True) -> str:
    """Return a node's value line as the pictures and the explorer write it: 'v = 0' once
    known, 'v ≥ 0' / 'v ≤ 0' as a bound while the search is still under way, else 'v = ?'.

    With `known` False (a search that never reports values, such as a student's search
    recorded through its calls) a node that is not a game-over leaf gets no value line.
    """
    if node.done:
        return f"v = {number(node.value)}"
    if not known:
        return ""
    if node.value is not None:
        return f"v {'≥' if node.maximizing else '≤'} {number(node.value)}"
    return "v = ?"


WRONG = "#c0392b"  # a value the student's search got wrong


def _wrong_text(true_value: float) -> str:
    return f"true value: {number(true_value)}"


def _caption(trace: Trace, nodes: Mapping[int, TraceNode]) -> str:
    """Return what a recorded student search chose and how its values compare with the true ones ('' otherwise)."""
    if not trace.true_values:
        return ""
    parts = []
    if trace.chosen is not None and nodes:
        said = f"your code chose square {trace.game.move_name(trace.chosen)} (the bold edge)"
        best, got = trace.chosen_values()
        if best is not None and got is not None and got != best:
            said += f": not an optimal move (with best play {number(got)} after it; the best move gives {number(best)})"
        parts.append(said)
    wrong = trace.wrong_values()
    if wrong:
        parts.append(f"{plural(len(wrong), 'value')} your search returned {'differs' if len(wrong) == 1 else 'differ'} "
                     "from the true value (red: the true value is written under it)")
    return r"\n".join(parts)


def window_text(node: TraceNode) -> str:
    """Return a node's alpha-beta window as the pictures and the explorer write it: 'α=-∞  β=1'."""
    return f"α={number(node.alpha)}  β={number(node.beta)}"


def visits_text(node: TraceNode) -> str:
    """Return an MCTS node's counts as the pictures and the explorer write them: 'N=12  Q=0.58'.

    N is the playouts through the node (its `visits`), Q their mean result for the player who
    moved into it (its `mean`: 1 a win, 0.5 a tie, 0 a loss), as AIMA Fig. 5.10 writes wins /
    playouts, and as ``Trace.visits`` and ``Trace.mean`` read them; a node just added and not
    yet played out is 'N=0  new'.
    """
    if not node.visits:
        return "N=0  new"
    return f"N={node.visits}  Q={node.mean:.2f}"


def ucb_text(score: Any) -> str:
    """Return a child's UCB1 score as selection computes it: 'UCB 1.31 = 0.50 + 0.81' (mean + exploration)."""
    return f"UCB {score.ucb:.2f} = {score.mean:.2f} + {score.bonus:.2f}"


VISITS_LEGEND = ("N: playouts through a node; Q: their mean result for the player who moved into it "
                 "(win 1, tie ½, loss 0)")


# --- boards ------------------------------------------------------------------------------------


def drawn_as_grid(game: Any) -> bool:
    """Return True if the game draws its boards as one grid of squares (``game.grid``), not as text."""
    return game.grid(game.initial()) is not None


def board_label(game: Any, state: Any, move: Any = None) -> str:
    """Return a board as an HTML-like graphviz TABLE (without the outer ``<`` ``>``).

    A board the game draws as a grid (``game.grid``) becomes a grid of squares (the square just
    played, `move`, shaded); any other board is its text in a fixed font.
    """
    rows = game.grid(state)
    if rows is None:
        lines = "".join(f"{html.escape(line)}<BR ALIGN=\"LEFT\"/>" for line in game.format(state).splitlines())
        return f'<TABLE BORDER="0" CELLPADDING="1"><TR><TD><FONT FACE="Courier" POINT-SIZE="10">{lines}</FONT></TD></TR></TABLE>'
    width = len(rows[0])
    cells = []
    for r, row in enumerate(rows):
        tds = []
        for c, mark in enumerate(row):
            shade = ' BGCOLOR="%s"' % MOVE_FILL if isinstance(move, int) and move == r * width + c else ""
            text = "" if mark in ".-_" else f"<B>{html.escape(mark)}</B>"
            tds.append(f'<TD WIDTH="13" HEIGHT="13" FIXEDSIZE="TRUE"{shade}>{text}</TD>')
        cells.append("<TR>" + "".join(tds) + "</TR>")
    return (
        '<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="0" COLOR="#555555" BGCOLOR="white" '
        f'FIXEDSIZE="TRUE" WIDTH="{13 * width}" HEIGHT="{13 * len(rows)}">'
        + "".join(cells)
        + "</TABLE>"
    )


@dataclass(frozen=True)
class BoardPicture:
    """A 3x3 board drawn as SVG; displays inline in Jupyter (``_repr_svg_``)."""

    board: str  # nine characters 'X', 'O', '.'
    highlight: tuple = ()  # squares to shade, such as a winning line
    size: int = 120

    def _repr_svg_(self) -> str:
        return self.svg()

    def __repr__(self) -> str:
        """Return the board as three lines of text: what shows where SVG does not (feedback pages, a terminal)."""
        from ttt.games.classic import format_board

        if isinstance(self.board, str) and len(self.board) == 9:
            return format_board(self.board)
        return f"BoardPicture(board={self.board!r})"

    def svg(self) -> str:
        """Return the board as an SVG document: grid lines, X in blue, O in red."""
        s, cell = self.size, self.size / 3
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="ttt-board-svg" width="{s}" height="{s}" viewBox="0 0 {s} {s}">']
        parts.append(f'<rect width="{s}" height="{s}" fill="white"/>')
        for square in self.highlight:
            r, c = divmod(square, 3)
            parts.append(f'<rect x="{c * cell:.1f}" y="{r * cell:.1f}" width="{cell:.1f}" height="{cell:.1f}" fill="#c7e9c0"/>')
        for k in (1, 2):
            for x1, y1, x2, y2 in ((k * cell, 4, k * cell, s - 4), (4, k * cell, s - 4, k * cell)):
                parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#333" stroke-width="2"/>')
        pad = cell * 0.22
        for square, mark in enumerate(self.board):
            r, c = divmod(square, 3)
            x0, y0, x1, y1 = c * cell + pad, r * cell + pad, (c + 1) * cell - pad, (r + 1) * cell - pad
            if mark == "X":
                parts.append(
                    f'<path d="M{x0:.1f},{y0:.1f} L{x1:.1f},{y1:.1f} M{x1:.1f},{y0:.1f} L{x0:.1f},{y1:.1f}" '
                    'stroke="#1f5fa8" stroke-width="4" stroke-linecap="round"/>'
                )
            elif mark == "O":
                parts.append(
                    f'<circle cx="{(x0 + x1) / 2:.1f}" cy="{(y0 + y1) / 2:.1f}" r="{(x1 - x0) / 2:.1f}" '
                    'fill="none" stroke="#c0392b" stroke-width="4"/>'
                )
        parts.append("</svg>")
        return "".join(parts)


@dataclass(frozen=True)
class TextPicture:
    """A board of any game as its text; displays inline in Jupyter (``_repr_html_``)."""

    text: str

    def _repr_html_(self) -> str:
        return f'<pre class="ttt-board-text">{html.escape(self.text)}</pre>'

    def __str__(self) -> str:
        return self.text


def draw_board(board: Any, *, game: Any = None, highlight: tuple = ()) -> BoardPicture | TextPicture:
    """Return a picture of `board` that displays inline in JupyterLab.

    `board` is a 3x3 board as text (``"XO./.X./..O"``) or a CS50 list of lists, or, with
    `game`, any state of that game (drawn as ``game.format(state)``). Raises InvalidBoardError
    saying why for a board that is not one. `highlight` shades squares (a winning line, say).
    """
    if game is not None and not drawn_as_grid(game):
        return TextPicture(game.format(board))
    from ttt.games.classic import parse_board

    if isinstance(board, (list, tuple)):
        from ttt.tictactoe import to_text

        board = to_text(board)
    return BoardPicture(parse_board(board), tuple(highlight))


# --- trees -------------------------------------------------------------------------------------


@dataclass
class TreePlan:
    """Which nodes of a trace are drawn, and what the drawing leaves out (`plan_tree`)."""

    shown: list[int]  # node ids, in search order
    more: dict[int, list[int]]  # shown node -> the descendants left out below it
    hidden_by: dict[int, int]  # left-out node -> the shown node whose "… N more" stub stands for it
    total: int


def plan_tree(nodes: Mapping[int, TraceNode], *, max_depth: Optional[int], max_nodes: Optional[int]) -> TreePlan:
    """Return which nodes of a tree (``Trace.nodes``) to draw: in search order, at most `max_nodes`,
    none deeper than `max_depth`, each under a drawn parent; and, for each drawn node, the nodes
    below it left out, which its "… N more" stub stands for.

    `draw_tree` and the explorer (``ttt.widgets``) cut a big tree the same way with it, so the
    picture and the explorer show the same nodes.
    """
    shown: list[int] = []
    keep: set[int] = set()
    for i in sorted(nodes):
        node = nodes[i]
        if max_depth is not None and node.depth > max_depth:
            continue
        if max_nodes is not None and len(shown) >= max_nodes:
            continue
        if node.parent is not None and node.parent not in keep:
            continue
        shown.append(i)
        keep.add(i)
    more: dict[int, list[int]] = {}
    hidden_by: dict[int, int] = {}
    for i in sorted(nodes):
        if i in keep:
            continue
        parent = nodes[i].parent
        anchor = parent if parent in keep else hidden_by.get(parent)
        if anchor is None:
            continue
        hidden_by[i] = anchor
        more.setdefault(anchor, []).append(i)
    return TreePlan(shown, more, hidden_by, len(nodes))


def _node_label(game: Any, node: Any, *, value: str, window: Optional[str], note: str = "", slot: int = SLOT_WIDTH) -> str:
    """Return a node's HTML-like label: ▲ MAX / ▼ MIN and '#' its visit number (grey), its board, value, window.

    The value and window lines are `slot` points wide whatever they say, so a node keeps its size.
    """
    head = f"{'▲' if node.maximizing else '▼'} {side_name(node.maximizing)} <FONT COLOR='#777777'>#{node.id}</FONT>"
    rows = [
        f'<TR><TD><FONT POINT-SIZE="10">{head}</FONT></TD></TR>',
        f"<TR><TD>{board_label(game, node.state, node.move)}</TD></TR>",
        f'<TR><TD WIDTH="{slot}" HEIGHT="14" FIXEDSIZE="TRUE" ALIGN="LEFT">{value}</TD></TR>',
    ]
    if window is not None:  # "α=-∞ β=1": one space between them, to keep a wide tree's nodes narrow
        window = window.replace("  β", " β")
        rows.append(f'<TR><TD WIDTH="{slot}" HEIGHT="14" FIXEDSIZE="TRUE" ALIGN="LEFT"><FONT POINT-SIZE="10">{window}</FONT></TD></TR>')
    if note:
        rows.append(f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="10" COLOR="{WRONG}">{html.escape(note)}</FONT></TD></TR>')
    return '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">' + "".join(rows) + "</TABLE>>"


class TreeDrawing(graphviz.Digraph):
    """A search tree's ``graphviz.Digraph`` that fits the notebook column when shown inline.

    Shown in Jupyter, it is also offered as HTML: the SVG inline, scaled down to the width of
    the output (never up), so the root at the top middle is always in view. Where dot cannot run
    (not installed, or Python running inside the browser) it is shown as a widget the browser
    draws with Graphviz built for WebAssembly (``ttt.widgets.picture.TreePicture``), scaled the
    same way. `render`, `pipe` and the DOT `source` are those of any Digraph.
    """

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **options: Any) -> dict:
        try:
            bundle = super()._repr_mimebundle_(include, exclude, **options)
        except (graphviz.ExecutableNotFound, OSError):  # no dot here, or no process can start (Python in a browser)
            return self._drawn_by_the_browser(include, exclude)
        svg = bundle.get("image/svg+xml")
        if svg and (include is None or "text/html" in include) and not (exclude and "text/html" in exclude):
            bundle["text/html"] = fit_width(svg)
        return bundle


    def _drawn_by_the_browser(self, include: Any, exclude: Any) -> dict:
        """The tree as a widget that Graphviz built for WebAssembly draws in the page
        (``ttt.widgets.picture``: the same nodes, edges and text as dot's), and as a sentence saying
        why for a front end with no widgets; only the sentence where this copy of ttt has no such Graphviz."""
        # pictures -> widgets, only here: the one picture that needs the page to draw it
        from ttt.widgets.picture import GRAPHVIZ_MODULE, TreePicture

        said = DOT_IN_A_BROWSER if sys.platform == "emscripten" else DOT_MISSING
        plain = {"text/plain": f"{said} (The tree's DOT text is its .source.)"}
        if not GRAPHVIZ_MODULE.is_file():
            return plain
        shown = TreePicture(self.source)._repr_mimebundle_()  # anywidget's: (data, metadata)
        data = shown[0] if isinstance(shown, tuple) else shown
        return {**data, **plain}


def fit_width(svg: str) -> str:
    """Return a dot SVG as HTML that scales down to its container's width, keeping its shape."""
    svg = svg[svg.index("<svg"):]
    svg = svg.replace("<svg ", '<svg class="ttt-tree-picture" style="max-width:100%; height:auto" ', 1)
    return f'<div class="ttt-tree-fit" style="max-width:100%">{svg}</div>'


def draw_tree(trace: Trace, *, max_depth: Optional[int] = None, max_nodes: Optional[int] = 300) -> graphviz.Digraph:
    """Return the search tree of `trace` as a ``graphviz.Digraph`` (AIMA Fig. 5.2 / 5.5).

    Each node shows ▲ MAX or ▼ MIN and, in grey, '#' and its visit number (the order the search
    reached it; not a value), its board, its value (a bound 'v ≥ 1' while the search was still
    under way; for a search recorded through its calls, the values backed up from its game-over
    leaves, `backed_up_values`, where every leaf below is known), and for
    alpha-beta its window α, β as the node was left; for Monte Carlo tree search, its visits and
    mean result instead (``Trace.visits`` and ``Trace.mean`` as `visits_text` writes them:
    "N=12  Q=0.58", the title says what they mean), each
    edge as wide as the share of the playouts that went through it, and the most visited path
    bold. Edges carry the move; a cut-off is a
    dashed grey edge (id ``pruned<node>``, class ``pruned``) to a stub naming the skipped
    moves; the principal variation (``Trace.principal_variation``) is bold. Nodes deeper
    than `max_depth`, or beyond the first
    `max_nodes` in search order, are replaced by a "… N more" stub under their nearest drawn
    ancestor, and the graph's title says how many nodes are shown. Node ids are ``n<node>``
    and tree edges ``e<child>``, the same in the DOT and in the SVG ``dot`` makes of it.
    """
    game = trace.game
    nodes = trace.nodes
    plan = plan_tree(nodes, max_depth=max_depth, max_nodes=max_nodes)
    windows = trace.has_windows
    known = trace.reports_values
    visits = trace.has_visits
    backed = {} if known or visits else backed_up_values(nodes)
    pv = set(trace.principal_variation())
    wrong = trace.wrong_values()
    dot = TreeDrawing(name="search", comment=f"{trace.algorithm} search tree")
    dot.attr("graph", rankdir="TB", nodesep="0.06", ranksep="0.3", fontname="Helvetica", fontsize="11")
    dot.attr("node", shape="box", style="rounded,filled", fontname="Helvetica", fontsize="10", margin="0.04,0.02")
    dot.attr("edge", fontname="Helvetica", fontsize="10", arrowsize="0.6")
    total = trace.node_count
    root_visits = trace.visits(min(nodes)) if visits and nodes else 0  # N at the root: the iterations
    title = [f"showing {len(plan.shown)} of {total} nodes"] if total > len(plan.shown) else []
    if visits:
        title += [f"Monte Carlo tree search, {plural(trace.iterations, 'iteration')}; the most visited path is bold",
                  VISITS_LEGEND]
    caption = _caption(trace, nodes)
    title += [caption] if caption else []
    if title:
        dot.attr("graph", label=r"\n".join(title), labelloc="t")
    for i in plan.shown:
        node = nodes[i]
        if visits:
            value, window = html.escape(visits_text(node)), None
        else:
            value = html.escape(f"v = {number(backed[i])}" if i in backed else value_text(node, known=known))
            window = window_text(node) if windows else None
        style = "rounded,filled,bold" if i in pv else "rounded,filled"
        dot.node(
            f"n{i}",
            _node_label(game, node, value=value, window=window, note=_wrong_text(wrong[i][1]) if i in wrong else "",
                        slot=VISITS_SLOT_WIDTH if visits else SLOT_WIDTH),
            id=f"n{i}",
            fillcolor=MAX_FILL if node.maximizing else MIN_FILL,
            color=WRONG if i in wrong else "black",
            style=style,
            penwidth="2.5" if i in pv else "2" if i in wrong else "1",
            **{"class": "max" if node.maximizing else "min"},
        )
        if node.parent is not None:
            bold = i in pv and node.parent in pv
            width = 2.5 if bold else 1
            if visits and root_visits:  # MCTS: an edge as wide as the share of playouts through it
                width = max(width, round(1 + 5 * trace.visits(i) / root_visits, 1))
            dot.edge(
                f"n{node.parent}",
                f"n{i}",
                label=game.move_name(node.move),
                id=f"e{i}",
                style="bold" if bold else "solid",
                penwidth=f"{width:g}",
            )
        if node.pruned:
            skipped = moves_text(game, node.pruned)
            dot.node(
                f"prunedstub{i}",
                f"pruned:\n{skipped}",
                id=f"prunedstub{i}",
                shape="box",
                style="rounded,dashed",
                color=PRUNED,
                fontcolor=PRUNED,
                fontsize="10",
                margin="0.02,0.01",
                **{"class": "pruned"},
            )
            dot.edge(
                f"n{i}",
                f"prunedstub{i}",
                id=f"pruned{i}",
                minlen="2",  # a rank below the children: a row of its own, so a wide tree stays narrow
                style="dashed",
                color=PRUNED,
                **{"class": "pruned"},
            )
        count = len(plan.more.get(i, ())) + sum(trace.unkept.get(j, 0) for j in [i, *plan.more.get(i, ())])
        if count:  # the nodes left out below it: not drawn here, or not kept by the recording (Trace.unkept)
            dot.node(f"more{i}", f"… {count} more", id=f"more{i}", shape="plaintext", style="", fontcolor="#555555",
                     fontsize="10", **{"class": "more"})
            dot.edge(f"n{i}", f"more{i}", id=f"emore{i}", color="#bbbbbb", arrowhead="none", **{"class": "more"})
    return dot


def render_svg(dot: graphviz.Digraph) -> str:
    """Return the ``<svg>`` element ``dot`` draws for `dot` (needs Graphviz's dot program).

    Raises ``graphviz.ExecutableNotFound`` when dot is not installed.
    """
    svg = dot.pipe(format="svg", encoding="utf-8")
    return svg[svg.index("<svg") :]


def __getattr__(name: str) -> Any:
    """``from ttt.draw import step_sentence, steps`` (as the docs write it) reads ``ttt.widgets.steps``'s."""
    if name in ("steps", "step_sentence"):
        from ttt.widgets.steps import step_sentence, steps

        return {"steps": steps, "step_sentence": step_sentence}[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
