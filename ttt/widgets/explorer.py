"""Step through a recorded search in JupyterLab: the tree grows as the search goes.

The explorer holds no search of its own: it shows a ``ttt.trace.Trace`` (recorded by
``ttt.trace.record``, or a student's own search through ``ttt.call_recorder.record_calls``). The kernel
sends the whole recorded search to the browser once (`tree_data`: each node with the step it is
reached, finished and cut off, and the texts it shows from each step on; each step's sentence
and counts), and the browser steps through it by itself, so Step, Back, Play and the slider
never wait for the kernel. The tree is an outline that scrolls inside its own box: each row a
node (its board, MAX ▲ or MIN ▼, its value and window), indented under its parent; a finished
subtree folds into one summary row ("23 nodes, v = 1") that opens with a click, and the
current node is kept in view. A Monte Carlo tree search shows each node's visits and mean result
("N=12  Q=0.58") instead, each step one phase of an iteration: the path selected (each child's
UCB score beside it), the node expanded, the rollout's result, the counts backed up.
"""

from __future__ import annotations

from typing import Any, Optional

import traitlets

from ttt.draw import VISITS_LEGEND, drawn_as_grid, number, plan_tree
from ttt.errors import InvalidBoardError
from ttt.games.classic import TicTacToe
from ttt.search import Backup, Cutoff, Enter, Exit, Leaf
from ttt.trace import ALGORITHMS, Trace, backed_up_values, record
from ttt.widgets.base import Widget, shows_errors
from ttt.widgets.steps import step_sentence, steps


def tree_data(trace: Trace, *, max_depth: Optional[int] = None, max_nodes: Optional[int] = 500,
              every_step: bool = True) -> dict[str, Any]:
    """Return what the browser needs to show every step of `trace`, as JSON-ready data.

    ``nodes``: the drawn nodes in search order (at most `max_nodes`, no deeper than
    `max_depth`), each ``{id, parent, depth, move, board, last, max, enter, done, size, texts}``
    where `enter` / `done` are the steps (1-based; 0 never) at which the node is reached and
    finished, `size` the nodes in its subtree (``Trace.sizes``), and `texts` the ``[step, value,
    window]`` it shows from each step on. ``stubs``: the rows for cut-offs ("✂ pruned: 7, 8",
    from the step of the cut-off) and for nodes left out ("… 12 more"). ``steps``: for each
    step, the node it is about (the nearest drawn one), its sentence and ``[nodes, cut-offs,
    moves pruned]`` so far (``Trace.counts``). The steps, their sentences and texts are
    ``ttt.widgets.steps.steps``, the same the step sentences are read from, and the tree is the trace's
    own (``Trace.nodes``): the events are gone through once. ``pv``: the principal variation,
    bold at the last step. Nodes come in the tree's
    order (each under its parent, its children in the order they were reached), which for a
    depth-first search is search order.

    For a search that counts visits (MCTS, ``visits`` true), a node's value text is its visits
    and mean result (``ttt.draw.visits_text``) and its window text, at the step its parent
    selects, its UCB score (``ttt.draw.ucb_text``); each step also names the ``path`` of the iteration so far (root
    first) and its counts are ``[nodes in the tree, iterations]``, of ``total`` and
    ``iterations``; ``legend`` says what N and Q mean. With ``every_step=False``
    only the events of drawn nodes are steps (a picture of the finished search needs no more),
    so what is sent grows with the drawing, not with the search. Nodes the trace did not keep
    (``Trace.unkept``) count in the sizes and the "… N more" rows.
    """
    game = trace.game
    walked = steps(trace)  # the one pass over the events: it builds the trace's tree too
    whole = trace.nodes
    plan = plan_tree(whole, max_depth=max_depth, max_nodes=max_nodes)
    shown = set(plan.shown)
    visits = trace.has_visits
    grid = drawn_as_grid(game)

    def anchor(i: int) -> int:
        return i if i in shown else plan.hidden_by.get(i, plan.shown[0] if plan.shown else i)

    unkept = trace.unkept
    sizes = trace.sizes
    nodes: dict[int, dict[str, Any]] = {}
    for i in plan.shown:
        n = whole[i]
        nodes[i] = {
            "id": i,
            "parent": n.parent,
            "depth": n.depth,
            "move": "" if n.move is None else game.move_name(n.move),
            "board": "".join(game.grid(n.state)) if grid else game.format(n.state),
            "last": n.move if grid and isinstance(n.move, int) else None,
            "max": n.maximizing,
            "enter": 0,
            "done": 0,
            "size": sizes[i],
            "texts": [],
        }
    order: list[int] = []  # the drawn nodes in the tree's order: each under its parent
    stack = [i for i in reversed(plan.shown) if whole[i].parent not in shown]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(c for c in reversed(whole[i].children) if c in shown)
    place = {i: p for p, i in enumerate(order)}
    stubs = []
    last_shown = {i: i for i in plan.shown}  # node -> the last drawn node of its subtree
    for i in reversed(order):
        parent = whole[i].parent
        if parent in last_shown and place[last_shown[i]] > place[last_shown[parent]]:
            last_shown[parent] = last_shown[i]
    sent = []
    scored: list[int] = []  # MCTS: the drawn nodes showing a UCB score from the last step
    cut_short: dict[int, int] = {}  # MCTS: a kept node -> the first step a node added below it was not kept
    k = 0
    entered: dict[int, int] = {}  # a node left out of the drawing -> the step from which it counts as reached
    counts = trace.counts_by_step()
    reached, cutoffs, pruned, done = counts["nodes"], counts["cutoffs"], counts["pruned"], counts["iterations"]
    for step in walked:
        event = step.event
        if every_step or event.node in nodes:
            k += 1
        else:  # not a step of its own: counted, and its node's changes shown from the next step on
            if isinstance(event, Enter):
                entered[event.node] = k + 1
            for i, value, window in step.texts:
                if i in nodes:
                    _add_text(nodes[i], k + 1, value, window)
            continue
        if isinstance(event, Enter):
            entered[event.node] = k
            if event.node in nodes:
                nodes[event.node]["enter"] = k
        elif isinstance(event, Cutoff):
            if event.node in nodes:
                skipped = ", ".join(game.move_name(m) for m in event.skipped)
                stubs.append({"kind": "pruned", "node": event.node, "after": last_shown[event.node], "step": k,
                              "depth": whole[event.node].depth + 1, "text": f"✂ pruned: {skipped}"})
        elif isinstance(event, (Exit, Leaf)) and event.node in nodes:
            nodes[event.node]["done"] = k
        for i, value, window in step.texts:
            if i in nodes:
                _add_text(nodes[i], k, value, window)
        shows = {"node": anchor(step.node), "sentence": step.sentence}
        n = step.number
        if visits:
            for i in scored:  # a UCB score shows only at the step that computed it
                _add_text(nodes[i], k, _value_now(nodes[i]), "")
            scored = [i for i, _ in step.scores if i in nodes]
            for i, score in step.scores:
                if i in nodes:
                    _add_text(nodes[i], k, _value_now(nodes[i]), score)
            if isinstance(event, Backup) and event.node not in whole:  # the recording kept the path's first nodes
                cut_short.setdefault(event.path[-1].node, k)
            shows["path"] = [i for i in step.path if i in nodes]
            shows["counts"] = [reached[n], done[n]]
        else:
            shows["counts"] = [reached[n], cutoffs[n], pruned[n]]
        sent.append(shows)
    if not every_step:  # a change made after the last step shows at the last step
        for node in nodes.values():
            late = [t for t in node["texts"] if t[0] > len(sent)]
            if late:
                node["texts"] = [t for t in node["texts"] if t[0] < len(sent)] + [[len(sent)] + late[-1][1:]]
    if not trace.reports_values:  # a search recorded through its calls: the values backed up from its leaves, at the end
        for i, value in backed_up_values(whole).items():
            if i in nodes:
                _add_text(nodes[i], len(sent), f"v = {number(value)}", nodes[i]["texts"][-1][2] if nodes[i]["texts"] else "")
    more: dict[int, int] = {}  # a drawn node -> the nodes below it left out of the drawing
    first_step: dict[int, int] = {}
    for a, below in plan.more.items():
        more[a] = len(below) + sum(unkept.get(i, 0) for i in below)
        first = min(below)
        first_step[a] = nodes[first]["enter"] if first in nodes else min(entered.get(first, len(sent)), len(sent))
    for a, count in unkept.items():
        if a in nodes and count:
            more[a] = more.get(a, 0) + count
            first_step.setdefault(a, cut_short.get(a, len(sent)) if visits else max(nodes[a]["enter"], 1))
    for a, count in more.items():
        stubs.append({"kind": "more", "node": a, "after": last_shown[a], "step": first_step[a],
                      "depth": whole[a].depth + 1, "text": f"… {count} more"})
    stubs.sort(key=lambda s: (place[s["after"]], -s["depth"]))
    path = trace.principal_variation()
    return {
        "nodes": [nodes[i] for i in order],
        "stubs": stubs,
        "steps": sent,
        "pv": [i for i in path if i in nodes],
        "total": trace.node_count,
        "start": step_sentence(trace, 0),
        "visits": visits,
        "iterations": trace.iterations,
        "legend": VISITS_LEGEND if visits else "",
    }


def _value_now(node: dict[str, Any]) -> str:
    """Return the value line a drawn node shows at the latest step sent so far."""
    return node["texts"][-1][1] if node["texts"] else ""


def _add_text(node: dict[str, Any], k: int, value: str, window: str) -> None:
    texts = node["texts"]
    if texts and texts[-1][1:] == [value, window]:
        return
    if texts and texts[-1][0] == k:
        texts[-1] = [k, value, window]
    else:
        texts.append([k, value, window])


class SearchExplorer(Widget):
    """Step through a search from a position, watching its tree grow (AIMA Fig. 5.5, animated).

    Type a position (``"XO./.X./..."``) or click the small board's squares to change it, pick
    the algorithm, then Step, Back, Play (■ pauses) or drag the slider over the recorded events.
    The tree shows the nodes reached so far, the current node outlined and kept in view, values
    and α/β as they change, and cut-offs at the moment they happen; finished subtrees fold into
    a summary row that opens with a click. A sentence says what each step did, and the counts
    say how many nodes were visited and pruned. Pass a ready `trace` (for example a student's
    own search, from ``ttt.call_recorder.record_calls``) to explore it instead; `max_nodes` caps the
    drawing (the rest becomes "… N more" rows). ``explorer.step`` is the step shown.

    With ``algorithm="mcts"`` it records Monte Carlo tree search (`iterations` playouts, random
    moves from `seed`; at most `max_nodes` nodes kept) and steps through its iterations: the
    path selected with each child's UCB score, the node expanded, the rollout's result and the
    counts backed up, each row showing its node's visits and mean result as they change.
    """

    kind = traitlets.Unicode("explorer").tag(sync=True)
    tree = traitlets.Dict().tag(sync=True)
    step = traitlets.Int(0).tag(sync=True)
    position = traitlets.Unicode("").tag(sync=True)
    algorithm = traitlets.Unicode("alphabeta").tag(sync=True)
    algorithms = traitlets.List(traitlets.Unicode()).tag(sync=True)
    ordered = traitlets.Bool(False).tag(sync=True)
    depth = traitlets.Int(2).tag(sync=True)
    iterations = traitlets.Int(100).tag(sync=True)
    seed = traitlets.Int(0).tag(sync=True)
    editable = traitlets.Bool(True).tag(sync=True)
    editor = traitlets.Bool(True).tag(sync=True)

    def __init__(
        self,
        board: str = "XO./.X./...",
        *,
        algorithm: str = "alphabeta",
        trace: Optional[Trace] = None,
        ordered: bool = False,
        game: Any = None,
        depth: Optional[int] = None,
        iterations: int = 100,
        seed: int = 0,
        max_nodes: int = 500,
    ) -> None:
        self.game = game or (trace.game if trace is not None else TicTacToe())
        self.max_nodes = max_nodes
        self.trace: Trace = Trace(self.game, [])
        algorithms = [a for a, kind in ALGORITHMS.items() if not kind.depth_limited or self.game.evaluate is not None]
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {algorithm!r}; choose one of: {', '.join(algorithms)}")
        super().__init__(
            algorithms=algorithms,
            algorithm=algorithm if algorithm in algorithms else "alphabeta",
            ordered=ordered,
            depth=depth or 2,
            iterations=iterations,
            seed=seed,
            editor=drawn_as_grid(self.game),
        )
        if trace is not None:
            self.editable = False
            self.show(trace)
        else:
            state = self.game.parse(board)  # a bad board is an error here, saying why
            self.position = "/".join(self.game.grid(state)) if drawn_as_grid(self.game) else board
            self._search_again()
        self.observe(self._search_again, names=["position", "algorithm", "ordered", "depth", "iterations", "seed"])

    # -- the position and the search

    @shows_errors
    def _search_again(self, _change: Any = None) -> None:
        try:
            state = self.game.parse(self.position)
        except InvalidBoardError as error:
            self.say(f"{error}. The tree still shows the last good position.", kind="error")
            return
        kind = ALGORITHMS[self.algorithm]
        if kind.has_visits:  # a search by playouts: run for a number of iterations, its first nodes kept
            if self.iterations < 1:
                self.say(f"The {self.algorithm} search needs at least 1 iteration.", kind="error")
                return
            trace = record(self.game, state, algorithm=self.algorithm, iterations=self.iterations, seed=self.seed,
                           max_nodes=self.max_nodes)
        else:
            trace = record(
                self.game,
                state,
                algorithm=self.algorithm,
                ordered=self.ordered,
                depth=self.depth if kind.depth_limited else None,
            )
        self.show(trace)

    def click_square(self, square: int) -> None:
        """Click square `square` of the position editor, as a person would: '.' -> X -> O -> '.'."""
        board = _board_text(self.position)
        mark = {".": "X", "X": "O", "O": "."}[board[square]]
        self.position = _inline(board[:square] + mark + board[square + 1 :])

    @shows_errors
    def show(self, trace: Trace) -> None:
        """Explore `trace` from its first step (the browser is sent the whole search once)."""
        self.trace = trace
        with self.hold_sync():
            self.say("")
            self.tree = tree_data(trace, max_nodes=self.max_nodes)
            self.step = 0

    # -- stepping (the browser steps by itself; these set the step from Python)

    @property
    def k(self) -> int:
        """Return the step shown: how many of the trace's events the picture includes."""
        return self.step

    def forward(self) -> None:
        """Show one more event of the search (nothing happens at the end)."""
        self.step = min(self.step + 1, len(self.trace))

    def back(self) -> None:
        """Show one event fewer (nothing happens at the start)."""
        self.step = max(self.step - 1, 0)

    def sentence(self) -> str:
        """Return the sentence the explorer shows at its step."""
        return f"Step {self.step} of {len(self.trace)}: {step_sentence(self.trace, self.step)}"

    def tally(self) -> str:
        """Return the counts line the explorer shows at its step."""
        c = self.trace.counts(self.step)
        if self.trace.has_visits:
            return (f"Iterations done: {c['iterations']} of {self.trace.iterations}. "
                    f"Nodes in the tree: {c['nodes']} of {self.trace.node_count}.")
        return (f"Nodes visited: {c['nodes']} of {self.trace.node_count}. Cut-offs: {c['cutoffs']}, "
                f"pruning {c['pruned']} move{'' if c['pruned'] == 1 else 's'}.")


def _board_text(text: str) -> str:
    """Return a typed position as nine characters, as typed so far (not yet checked)."""
    squares = [("." if c in "-_" else c) for c in text.upper() if c in "XO.-_"]
    return "".join((squares + ["."] * 9)[:9])


def _inline(board: str) -> str:
    return "/".join(board[r : r + 3] for r in (0, 3, 6))
