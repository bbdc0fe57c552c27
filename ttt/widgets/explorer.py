"""Step through a recorded search in JupyterLab: the tree grows as the search goes.

The explorer holds no search of its own: it shows a ``ttt.trace.Trace`` (recorded by
``ttt.trace.record``, or a student's own search through ``ttt.trace.record_calls``). The tree is
laid out once by ``dot`` (``ttt.draw.TreeLayout``); each step only swaps a small stylesheet, so
stepping stays quick on trees of hundreds of nodes.
"""

from __future__ import annotations

from typing import Any, Optional

import graphviz
import ipywidgets as widgets
import traitlets

from ttt.draw import DOT_MISSING, TreeLayout, counts, step_sentence
from ttt.errors import InvalidBoardError
from ttt.games.classic import TicTacToe
from ttt.trace import ALGORITHMS, Trace, record
from ttt.widgets.board import message_html, shows_errors

_CYCLE = {".": "X", "X": "O", "O": "."}  # what a click on a square of the position editor puts there


class SearchExplorer(widgets.VBox):
    """Step through a search from a position, watching its tree grow (AIMA Fig. 5.5, animated).

    Type a position (``"XO./.X./..."``) or click the small board's squares to change it, pick
    the algorithm, then Step, Back, Play (at the speed set beside it) or drag the slider over
    the recorded events. The tree shows the nodes reached so far, the current node outlined,
    values and α/β as they change, and cut-offs at the moment they happen; a sentence says
    what each step did, and the counts say how many nodes were visited and pruned. Pass a
    ready `trace` (for example a student's own search, from ``ttt.trace.record_calls``) to
    explore it instead; `max_nodes` caps the drawing (the rest becomes "… N more" stubs).
    """

    def __init__(
        self,
        board: str = "XO./.X./...",
        *,
        algorithm: str = "alphabeta",
        trace: Optional[Trace] = None,
        ordered: bool = False,
        game: Any = None,
        depth: Optional[int] = None,
        max_nodes: int = 500,
    ) -> None:
        self.game = game or (trace.game if trace is not None else TicTacToe())
        self.max_nodes = max_nodes
        self.trace: Trace = Trace(self.game, [])
        self.picture: Optional[TreeLayout] = None
        algorithms = [a for a in ALGORITHMS if a != "depth-limited" or hasattr(self.game, "evaluate")]
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {algorithm!r}; choose one of: {', '.join(algorithms)}")

        self.position = widgets.Text(description="Position", continuous_update=False, layout=widgets.Layout(width="16em"))
        self.position.add_class("ttt-position")
        self.editor = [
            widgets.Button(layout=widgets.Layout(width="32px", height="32px", padding="0"), tooltip=f"square {s}")
            for s in range(9)
        ]
        for s, button in enumerate(self.editor):
            button.add_class("ttt-edit-square")
            button.on_click(lambda _b, s=s: self._cycle(s))
        editor = widgets.GridBox(self.editor, layout=widgets.Layout(grid_template_columns="repeat(3, 34px)", width="110px"))
        if not _is_3x3(self.game):
            editor.layout.display = "none"  # the bigger boards are typed
        self.algorithm = widgets.Dropdown(options=algorithms, value=algorithm if algorithm in algorithms else "alphabeta",
                                          description="Search")
        self.ordered = widgets.Checkbox(value=ordered, description="best moves first", indent=False)
        self.depth = widgets.BoundedIntText(value=depth or 2, min=1, max=20, description="depth",
                                            layout=widgets.Layout(width="9em"))
        self.step_button = widgets.Button(description="Step", icon="step-forward")
        self.step_button.add_class("ttt-step")
        self.back_button = widgets.Button(description="Back", icon="step-backward")
        self.back_button.add_class("ttt-back")
        self.play = widgets.Play(value=0, min=0, max=0, interval=400, description="Play")
        self.play.add_class("ttt-play")
        self.speed = widgets.IntSlider(value=400, min=50, max=2000, step=50, description="ms / step",
                                       layout=widgets.Layout(width="18em"))
        self.slider = widgets.IntSlider(value=0, min=0, max=0, description="Event", layout=widgets.Layout(width="100%"))
        self.slider.add_class("ttt-slider")
        traitlets.link((self.play, "value"), (self.slider, "value"))
        traitlets.link((self.speed, "value"), (self.play, "interval"))
        self.follow = widgets.Checkbox(value=True, description="follow the search", indent=False,
                                       layout=widgets.Layout(width="12em"))
        self.zoom = widgets.IntSlider(value=100, min=20, max=150, step=10, description="zoom %",
                                      layout=widgets.Layout(width="18em"))
        self.sentence = widgets.HTML()
        self.sentence.add_class("ttt-sentence")
        self.tally = widgets.HTML()
        self.tally.add_class("ttt-counts")
        self.status = widgets.HTML()
        self.status.add_class("ttt-status")
        self.tree_style = widgets.HTML()  # the per-step stylesheet: it restyles the one SVG below
        self.tree_style.add_class("ttt-tree-style")
        self.tree = widgets.HTML()
        self.tree.add_class("ttt-tree")

        self.step_button.on_click(lambda _: self.step())
        self.back_button.on_click(lambda _: self.back())
        self.slider.observe(self._moved, names="value")
        self.follow.observe(self._moved, names="value")
        self.zoom.observe(self._moved, names="value")
        for control in (self.position, self.algorithm, self.ordered, self.depth):
            control.observe(self._search_again, names="value")
        self.choose = widgets.HBox([widgets.VBox([self.position, widgets.HBox([self.algorithm, self.ordered, self.depth])]), editor])
        super().__init__(
            [
                self.choose,
                widgets.HBox([self.back_button, self.step_button, self.play, self.speed]),
                widgets.HBox([self.follow, self.zoom]),
                self.slider,
                self.sentence,
                self.tally,
                self.status,
                self.tree_style,
                self.tree,
            ]
        )
        self.add_class("ttt-explorer")
        self.depth.layout.display = "" if self.algorithm.value == "depth-limited" else "none"
        if trace is not None:
            self.choose.layout.display = "none"
            self.show(trace)
        else:
            state = self.game.parse(board)  # a bad board is an error here, saying why
            self.position.value = _inline(state) if _is_3x3(self.game) else board

    # -- the position and the search

    def _cycle(self, square: int) -> None:
        board = self._board_text()
        self.position.value = _inline(board[:square] + _CYCLE[board[square]] + board[square + 1 :])

    def _board_text(self) -> str:
        """Return the typed position as nine characters, as typed so far (not yet checked)."""
        squares = [c for c in self.position.value.upper() if c in "XO.-_"]
        squares = [("." if c in "-_" else c) for c in squares]
        return "".join((squares + ["."] * 9)[:9])

    @shows_errors
    def _search_again(self, _change: Any = None) -> None:
        self.depth.layout.display = "" if self.algorithm.value == "depth-limited" else "none"
        if _is_3x3(self.game):
            for s, mark in enumerate(self._board_text()):
                self.editor[s].description = "" if mark == "." else mark
        try:
            state = self.game.parse(self.position.value)
        except InvalidBoardError as error:
            self.status.value = message_html(f"{error}. The tree still shows the last good position.", kind="error")
            return
        trace = record(
            self.game,
            state,
            algorithm=self.algorithm.value,
            ordered=self.ordered.value,
            depth=self.depth.value if self.algorithm.value == "depth-limited" else None,
        )
        self.show(trace)

    @shows_errors
    def show(self, trace: Trace) -> None:
        """Explore `trace` from its first step: lay its tree out once and go to step 0."""
        self.trace = trace
        self.status.value = ""
        try:
            self.picture = TreeLayout(trace, max_nodes=self.max_nodes)
            self.tree.value = self.picture.svg
        except graphviz.ExecutableNotFound:
            self.picture = None
            self.tree.value = message_html(DOT_MISSING, kind="error")
        self.play.playing = False
        self.slider.max = self.play.max = len(trace)
        if self.slider.value == 0:
            self._draw(0)
        self.slider.value = 0

    # -- stepping

    @property
    def k(self) -> int:
        """Return the step shown: how many of the trace's events the picture includes."""
        return self.slider.value

    def step(self) -> None:
        """Show one more event of the search (nothing happens at the end)."""
        self.slider.value = min(self.k + 1, len(self.trace))

    def back(self) -> None:
        """Show one event fewer (nothing happens at the start)."""
        self.slider.value = max(self.k - 1, 0)

    @shows_errors
    def _moved(self, _change: Any = None) -> None:
        self._draw(self.k)

    def _draw(self, k: int) -> None:
        """Show the search after its first `k` events: tree style, sentence and counts."""
        if self.picture is not None:
            self.tree_style.value = self.picture.style(k, follow=self.follow.value, zoom=self.zoom.value / 100)
        self.sentence.value = message_html(f"Step {k} of {len(self.trace)}: {step_sentence(self.trace, k)}")
        c = counts(self.trace, k)
        self.tally.value = message_html(
            f"Nodes visited: {c['nodes']} of {self.trace.node_count}. Cut-offs: {c['cutoffs']}, "
            f"pruning {c['pruned']} move{'' if c['pruned'] == 1 else 's'}."
        )


def _is_3x3(game: Any) -> bool:
    return getattr(game, "name", "") == "tictactoe"


def _inline(board: str) -> str:
    return "/".join(board[r : r + 3] for r in (0, 3, 6))
