"""Recording a search: its events, and the tree they describe.

A `Recorder` is a tracer for any search in ``ttt.search``; `record` runs a search with one and
returns a `Trace`. `record_calls` records a *student's own* search instead, by watching the
calls it makes to ``result`` (and ``utility``) in a notebook's namespace. Either way, the
drawings (``ttt.draw``) and the explorer (``ttt.widgets``) read the same `Trace`.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, MutableMapping, Optional

from ttt import search
from ttt.games.base import Game
from ttt.search import Cutoff, Enter, Event, Exit, Leaf, SearchResult


@dataclass
class TraceNode:
    """A node of a recorded search tree as the search knows it after some events.

    Between its children a node's `value` is the best returned so far (a bound) and its window
    narrows as in AIMA Fig. 5.7; once `done`, they are final.
    """

    id: int
    parent: Optional[int]
    move: Any
    state: Any
    depth: int
    maximizing: bool
    alpha: float
    beta: float
    value: Optional[float] = None  # the best child value so far, or the node's value once done
    done: bool = False
    leaf: Optional[str] = None  # 'terminal' or 'estimate'
    pruned: tuple = ()
    best_move: Any = None
    children: list[int] = field(default_factory=list)


class TreeBuilder:
    """What the search knows about each node, updated one event at a time (`apply`)."""

    def __init__(self) -> None:
        self.nodes: dict[int, TraceNode] = {}

    def apply(self, e: Event) -> tuple[int, ...]:
        """Apply one event; return the ids of the nodes whose value or window it changed."""
        nodes = self.nodes
        if isinstance(e, Enter):
            nodes[e.node] = TraceNode(e.node, e.parent, e.move, e.state, e.depth, e.maximizing, e.alpha, e.beta)
            if e.parent in nodes:
                nodes[e.parent].children.append(e.node)
            return (e.node,)
        node = nodes[e.node]
        if isinstance(e, Cutoff):
            node.pruned = e.skipped
            return ()
        node.value, node.done = e.value, True
        if isinstance(e, Leaf):
            node.leaf = "terminal" if e.terminal else "estimate"
        else:
            node.best_move, node.alpha, node.beta = e.move, e.alpha, e.beta
        parent = nodes.get(node.parent) if node.parent is not None else None
        if parent is not None and not parent.done:
            _child_returned(parent, e.value)
            return (e.node, parent.id)
        return (e.node,)


def _child_returned(parent: TraceNode, v: float) -> None:
    """Update `parent` after a child returned `v`: best value so far, then α or β."""
    if parent.maximizing:
        if parent.value is None or v > parent.value:
            parent.value = v
        if parent.value < parent.beta:
            parent.alpha = max(parent.alpha, parent.value)
    else:
        if parent.value is None or v < parent.value:
            parent.value = v
        if parent.value > parent.alpha:
            parent.beta = min(parent.beta, parent.value)


class Recorder:
    """A tracer that keeps every event it receives, in order."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)


@dataclass
class Trace:
    """A recorded search: its events in order, the game, and the search's result (if known)."""

    game: Game
    events: list[Event]
    result: Optional[SearchResult] = None
    algorithm: str = ""

    def __len__(self) -> int:
        return len(self.events)

    def upto(self, k: int) -> "Trace":
        """Return the trace of the first `k` events: the search as it stood after step `k`."""
        return Trace(self.game, self.events[: max(0, k)], self.result if k >= len(self.events) else None, self.algorithm)

    @property
    def nodes(self) -> dict[int, TraceNode]:
        """Return the tree the events describe, node id -> node (the root is node 0)."""
        return build_tree(self.events)

    def principal_variation(self) -> list[int]:
        """Return the node ids from the root along best moves, as far as values are known."""
        nodes = self.nodes
        if not nodes:
            return []
        path = [min(nodes)]
        while True:
            node = nodes[path[-1]]
            nxt = [c for c in node.children if nodes[c].move == node.best_move and node.best_move is not None]
            if not node.done or not nxt:
                return path
            path.append(nxt[0])

    @property
    def cutoffs(self) -> int:
        """Return how many cut-offs the events record."""
        return sum(isinstance(e, Cutoff) for e in self.events)

    @property
    def node_count(self) -> int:
        """Return how many nodes the events enter."""
        return sum(isinstance(e, Enter) for e in self.events)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """Display inline in Jupyter as its drawn tree (``ttt.draw.draw_tree``, rendered by dot).

        The drawing module is imported only when a trace is shown, as python-chess's boards
        reach ``chess.svg``, so importing ``ttt.trace`` never loads graphviz.
        """
        from ttt.draw import draw_tree

        return draw_tree(self)._repr_mimebundle_(include, exclude)


def build_tree(events: list[Event]) -> dict[int, TraceNode]:
    """Return node id -> what is known about it after `events` (any prefix of a search's events).

    Between its children, a node's value is the best one returned so far (a bound: MAX's value
    is at least it, MIN's at most it) and its window narrows as in AIMA Fig. 5.7: after a child
    returns v, MAX sets α = max(α, v) and MIN sets β = min(β, v), unless v cuts the node off.
    """
    tracker = TreeBuilder()
    for e in events:
        tracker.apply(e)
    return tracker.nodes


ALGORITHMS = ("minimax", "alphabeta", "depth-limited")


def record(
    game: Game,
    state: Any,
    *,
    algorithm: str = "alphabeta",
    ordered: bool = False,
    depth: Optional[int] = None,
    evaluate: Optional[Callable[[Any], float]] = None,
) -> Trace:
    """Return the trace of one search from `state`.

    `algorithm` is 'minimax', 'alphabeta' or 'depth-limited' (which needs `depth`, and uses
    `evaluate` or the game's own ``evaluate``); `ordered` tries moves in the game's best-first
    order instead of row by row.
    """
    recorder = Recorder()
    order = game.order_moves if ordered else None
    if algorithm == "minimax":
        result = search.minimax(game, state, tracer=recorder)
    elif algorithm == "alphabeta":
        result = search.alphabeta(game, state, order=order, tracer=recorder)
    elif algorithm == "depth-limited":
        if depth is None:
            raise ValueError("depth-limited search needs a depth, for example depth=2")
        evaluate = evaluate or getattr(game, "evaluate", None)
        if evaluate is None:
            raise ValueError(f"{game.name} has no evaluate(state); pass evaluate=...")
        result = search.depth_limited(game, state, depth=depth, evaluate=evaluate, order=order, tracer=recorder)
    else:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose one of: {', '.join(ALGORITHMS)}")
    return Trace(game, recorder.events, result, algorithm)


# --- a student's own search, recorded through its calls to result() --------------------------


class CallRecorder:
    """Builds a trace from the calls a CS50-style search makes to ``result`` and ``utility``.

    The parent of each ``result(board, action)`` call is the most recent node holding `board`,
    which is right both for searches that recurse at once and for ones that make all children
    first. Only the tree's shape and its game-over values are known this way.
    """

    def __init__(self) -> None:
        from ttt.games.classic import TicTacToe

        self.game = TicTacToe()
        self.events: list[Event] = []
        self._latest: dict[str, int] = {}  # board -> the newest node holding it
        self._depth: list[int] = []  # node id -> depth
        self._valued: set[int] = set()

    def _node_for(self, text: str, parent: Optional[int], move: Any, depth: int) -> int:
        node = len(self._depth)
        self._depth.append(depth)
        self._latest[text] = node
        self.events.append(Enter(node, parent, move, text, depth, self.game.to_move(text) == "X", -math.inf, math.inf))
        return node

    def on_result(self, board: Any, action: Any, child: Any) -> None:
        from ttt.tictactoe import to_text

        before, after = to_text(board), to_text(child)
        parent = self._latest.get(before)
        if parent is None:
            parent = self._node_for(before, None, None, 0)
        self._node_for(after, parent, 3 * action[0] + action[1], self._depth[parent] + 1)

    def on_utility(self, board: Any, value: Any) -> None:
        from ttt.tictactoe import to_text

        node = self._latest.get(to_text(board))
        if node is not None and node not in self._valued:
            self._valued.add(node)
            self.events.append(Leaf(node, value, True))

    def trace(self) -> Trace:
        """Return what was recorded so far as a Trace (no search result: it was the student's)."""
        return Trace(self.game, list(self.events), None, "your search")


@contextlib.contextmanager
def record_calls(namespace: MutableMapping[str, Any]) -> Iterator[CallRecorder]:
    """Record the tree a search explores through ``namespace['result']`` while inside the block.

    `namespace` is where the search looks its functions up: a notebook's ``globals()``, or a
    module's ``vars(module)``. ``result`` (and ``utility``, when present) are wrapped for the
    duration and put back afterwards, even if the search raises.
    """
    recorder = CallRecorder()
    originals = {name: namespace.get(name) for name in ("result", "utility")}
    if originals["result"] is None:
        raise ValueError("there is no result() function here to record: define result(board, action) first")

    def result(board, action, _result=originals["result"]):
        child = _result(board, action)
        recorder.on_result(board, action, child)
        return child

    namespace["result"] = result
    if originals["utility"] is not None:

        def utility(board, _utility=originals["utility"]):
            value = _utility(board)
            recorder.on_utility(board, value)
            return value

        namespace["utility"] = utility
    try:
        yield recorder
    finally:
        for name, original in originals.items():
            if original is not None:
                namespace[name] = original
