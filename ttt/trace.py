"""Recording a search: its events, and the tree they describe.

A `Recorder` is a tracer for any search in ``ttt.search`` (an `MCTSRecorder` for Monte Carlo
tree search, which grows its tree anywhere); `record` runs a search with one and returns a
`Trace`. ``ttt.call_recorder.record_calls`` records a *student's own* search instead, by
watching the calls it makes to ``result`` (and ``utility``) in a notebook's namespace (the
lessons import it from here). Either way, the drawings (``ttt.draw``) and the explorer
(``ttt.widgets``) read the same `Trace`, and every question about it is answered here, once (a
trace never changes, so each answer is kept): its tree, its principal variation, the values
backed up from its leaves, its counts at each step, the values it got wrong, what the search
shows (fields the recording sets, declared for each algorithm in `ALGORITHMS`), and for MCTS
each node's visits N and mean result Q after any step.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import random
from array import array
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

from ttt import search
from ttt.games.base import Game
from ttt.search import Backup, Cutoff, Enter, Event, Exit, Leaf, Rollout, SearchResult, Select


@dataclass
class TraceNode:
    """A node of a recorded search tree as the search knows it after some events.

    Between its children a node's `value` is the best returned so far (a bound) and its window
    narrows as in AIMA Fig. 5.7; once `done`, they are final. In Monte Carlo tree search a node
    has `visits` (N: playouts through it so far) and `total` (their results for the player who
    moved into it: 1 a win, 0.5 a tie, 0 a loss), so its `mean` result (Q), as AIMA Fig. 5.10
    writes them (wins / playouts); only the root gets a value, the search's, at its end.
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
    visits: int = 0
    total: float = 0.0

    @property
    def mean(self) -> Optional[float]:
        """Return the mean result of the playouts through this node for the player who moved into it (None before any)."""
        return self.total / self.visits if self.visits else None

    @property
    def value_for_x(self) -> Optional[float]:
        """Return the mean result as a value for X, from -1 (O always won) to 1 (X always won), as
        ``SearchResult.value`` gives the chosen move's (None before any playout)."""
        if not self.visits:
            return None
        value = 2 * self.mean - 1  # for the player who moved into it: the one not to move here
        return -value if self.maximizing else value


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
        if isinstance(e, Backup):
            for tally in e.path:
                if tally.node in nodes:
                    nodes[tally.node].visits, nodes[tally.node].total = tally.visits, tally.total
            return tuple(t.node for t in e.path if t.node in nodes)
        if isinstance(e, (Select, Rollout)):  # what they say is told by the events themselves
            return ()
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
    """A tracer that keeps the events it receives, in order: all of them, or those of the first
    `max_nodes` nodes no deeper than `max_depth` (a node is kept only under a kept parent).

    The nodes it leaves out are only counted, each under its nearest kept ancestor (`unkept`),
    so a picture of the kept part can still say how many nodes lie below it.
    """

    def __init__(self, *, max_depth: Optional[int] = None, max_nodes: Optional[int] = None) -> None:
        self.events: list[Event] = []
        self.max_depth = math.inf if max_depth is None else max_depth
        self.max_nodes = math.inf if max_nodes is None else max_nodes
        self.unkept: dict[int, int] = {}
        self._kept: set[int] = set()
        self._path: list[int] = []  # the kept nodes on the way down to the newest node, by depth

    def __call__(self, event: Event) -> None:
        if isinstance(event, Enter):
            path, depth = self._path, event.depth
            del path[depth:]
            if (depth <= self.max_depth and len(self._kept) < self.max_nodes
                    and (event.parent is None or event.parent in self._kept)):
                self._kept.add(event.node)
                path.append(event.node)
                self.events.append(event)
            elif path:
                self.unkept[path[-1]] = self.unkept.get(path[-1], 0) + 1
        elif event.node in self._kept:
            self.events.append(event)


class MCTSRecorder(Recorder):
    """A `Recorder` for Monte Carlo tree search, which adds each node anywhere in its tree, not
    depth first: it keeps the first `max_nodes` nodes no deeper than `max_depth`, as `Recorder`
    does, each under a kept parent.

    A node not kept is counted under its nearest kept ancestor (`unkept`); a selection is kept
    where it starts from a kept node; every rollout is kept (its `node` may be one not kept);
    and every back-up, with the kept part of its path, so every iteration's counts reach the
    kept nodes (its `node`, where the rollout started, is then not on the path it keeps).
    """

    def __init__(self, *, max_depth: Optional[int] = None, max_nodes: Optional[int] = None) -> None:
        super().__init__(max_depth=max_depth, max_nodes=max_nodes)
        self._anchor: dict[int, int] = {}  # a node not kept -> its nearest kept ancestor

    def __call__(self, event: Event) -> None:
        if isinstance(event, Enter):
            if (event.depth <= self.max_depth and len(self._kept) < self.max_nodes
                    and (event.parent is None or event.parent in self._kept)):
                self._kept.add(event.node)
                self.events.append(event)
            else:
                anchor = event.parent if event.parent in self._kept else self._anchor.get(event.parent)
                if anchor is not None:
                    self._anchor[event.node] = anchor
                    self.unkept[anchor] = self.unkept.get(anchor, 0) + 1
        elif isinstance(event, Backup):
            path = tuple(t for t in event.path if t.node in self._kept)
            self.events.append(event if len(path) == len(event.path) else Backup(event.node, event.winner, path))
        elif isinstance(event, Rollout) or event.node in self._kept:
            self.events.append(event)


@dataclass(frozen=True, eq=False)
class Trace:
    """A recorded search: its events in order, the game, and the search's result (if known).

    A trace never changes once recorded, so what it answers is worked out once, when first
    asked, and kept: its tree (`nodes`, built from the events once however often it is read),
    its counts at every step, its principal variation. `upto` gives the search as it stood after
    any step, a trace of its own.

    What the search shows is said by four fields that the recording sets (`record` declares
    them for each algorithm in `ALGORITHMS`, `record_calls` from what it saw), so that the
    pictures and the explorer never test an algorithm's name and a new search only declares
    them: `reports_values` (the search gives the values of the nodes it finishes, not only of
    game-over leaves), `has_windows` (it keeps an alpha-beta window worth showing), `prunes`
    (it may cut moves off) and `has_visits` (it counts visits and mean results, as Monte Carlo
    tree search does: `visits` and `mean` read them). A trace made directly from events, with
    these left out (None), reads each from what its events hold.
    """

    game: Game
    events: list[Event]
    result: Optional[SearchResult] = None
    algorithm: str = ""
    chosen: Any = None  # a recorded student search: the move its code returned at the root
    true_values: dict[int, float] = field(default_factory=dict)  # node -> its value with perfect play, where known
    unkept: dict[int, int] = field(default_factory=dict)  # node -> the nodes searched below it that were not kept
    reports_values: Optional[bool] = None  # its Exit events give the values of the nodes it finishes
    has_windows: Optional[bool] = None  # it keeps an alpha-beta window worth showing
    prunes: Optional[bool] = None  # it may cut moves off (Cutoff events)
    has_visits: Optional[bool] = None  # its nodes count visits and mean results (MCTS), not minimax values

    def __post_init__(self) -> None:
        events = self.events
        windowed = (Enter, Exit, Cutoff)
        told = {  # what the events hold, for a field left out
            "reports_values": lambda: any(isinstance(e, Exit) for e in events),
            "has_windows": lambda: any(isinstance(e, windowed) and (e.alpha != -math.inf or e.beta != math.inf)
                                       for e in events),
            "prunes": lambda: any(isinstance(e, Cutoff) for e in events),
            "has_visits": lambda: any(isinstance(e, (Select, Rollout, Backup)) for e in events),
        }
        for name, read in told.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, read())

    def __len__(self) -> int:
        return len(self.events)

    def upto(self, k: int) -> "Trace":
        """Return the trace of the first `k` events: the search as it stood after step `k`.

        It keeps this trace's fields (what the search shows is the same at every step) and
        shares its events, so taking it costs a slice of the event list; its tree is built only
        if asked for. At or after the last step it is this trace itself.
        """
        if k >= len(self.events):
            return self
        return dataclasses.replace(self, events=self.events[: max(0, k)], result=None, unkept={})

    @functools.cached_property
    def nodes(self) -> Mapping[int, TraceNode]:
        """Return the tree the events describe, node id -> node (the root is node 0).

        Built once, the first time it is asked for (or by the first whole `replay`), and then
        read: a node's fields are the search's last word on it, not to be changed.
        """
        return MappingProxyType(build_tree(self.events))

    def replay(self) -> Iterator[tuple[Event, tuple[int, ...], Mapping[int, TraceNode]]]:
        """Yield (event, the ids of the nodes it changed, the tree once it has happened) for each event, in order.

        This is how the step-by-step view reads the search: one pass over the events, the tree
        growing as they come (the same mapping each time, its nodes changed in place: read what
        a step needs while at it). The tree a whole replay ends with is the trace's `nodes`, so
        replaying and then asking for the tree builds it once.
        """
        builder = TreeBuilder()
        tree = MappingProxyType(builder.nodes)
        for event in self.events:
            yield event, builder.apply(event), tree
        self.__dict__.setdefault("nodes", tree)  # the finished tree: `nodes`, unless already built

    def visits(self, node: int) -> int:
        """Return N, the playouts through `node` at the end of a Monte Carlo tree search (0 for other searches).

        The root's is the number of iterations; any node's is its children's plus the playouts
        begun at it (one, when it was added; more at a game-over node). AIMA Fig. 5.10 writes it
        under each node; ``upto(k).visits(node)`` is N after step `k`.
        """
        return self.nodes[node].visits

    def mean(self, node: int) -> Optional[float]:
        """Return Q, the mean result of the playouts through `node` for the player who moved into it
        (1 a win, 0.5 a tie, 0 a loss), at the end of a Monte Carlo tree search; None before any
        playout (and for other searches). ``nodes[node].value_for_x`` gives it as a value for X,
        and ``upto(k).mean(node)`` is Q after step `k`."""
        return self.nodes[node].mean

    @functools.cached_property
    def _principal_variation(self) -> tuple[int, ...]:
        nodes = self.nodes
        if not nodes:
            return ()
        root = min(nodes)
        if self.has_visits:
            return tuple(most_visited_path(nodes, root))
        known = self.reports_values
        values = {} if known else backed_up_values(nodes)
        if not known and root not in values and self.chosen is None:
            return ()
        path = [root]
        if not known:
            path += [c for c in nodes[root].children if self.chosen is not None and nodes[c].move == self.chosen][:1]
        while True:
            node = nodes[path[-1]]
            if known:
                nxt = [c for c in node.children if node.done and node.best_move is not None and nodes[c].move == node.best_move]
            else:
                nxt = [c for c in node.children if node.id in values and values.get(c) == values[node.id]]
            if not nxt:
                return tuple(path)
            path.append(nxt[0])

    def principal_variation(self) -> list[int]:
        """Return the node ids from the root along best moves, as far as they are known: the bold path.

        A search that reports values names each node's best move; MCTS's path goes, each step,
        to the most visited child (`most_visited_path`), the move it would choose there. For a search recorded through
        its calls (only game-over values known), the path starts with the move its code chose at
        the root (`chosen`) and goes on, each step, to the first child whose backed-up value
        (`backed_up_values`) is its parent's.
        """
        return list(self._principal_variation)

    @functools.cached_property
    def _tallies(self) -> tuple[array, array, array, array]:
        """Return, for k = 0 .. len(events), the nodes entered, cut-offs, moves pruned and back-ups of the first k events."""
        found = (array("q", [0]), array("q", [0]), array("q", [0]), array("q", [0]))
        nodes, cutoffs, pruned, backups = found
        n = c = p = b = 0
        for e in self.events:
            if isinstance(e, Enter):
                n += 1
            elif isinstance(e, Cutoff):
                c += 1
                p += len(e.skipped)
            elif isinstance(e, Backup):
                b += 1
            nodes.append(n)
            cutoffs.append(c)
            pruned.append(p)
            backups.append(b)
        return found

    def counts(self, k: int) -> dict[str, int]:
        """Return how far the search is after `k` events: nodes visited (for MCTS: added to its
        tree), cut-offs, moves pruned, and MCTS's iterations finished (its back-ups).

        The counts of every step are worked out together, the first time one is asked for, so
        stepping through a search asks nothing twice.
        """
        k = min(max(0, k), len(self.events))
        nodes, cutoffs, pruned, backups = self._tallies
        return {"nodes": nodes[k], "cutoffs": cutoffs[k], "pruned": pruned[k], "iterations": backups[k]}

    def counts_by_step(self) -> dict[str, Sequence[int]]:
        """Return the `counts` of every step at once, name -> a read-only sequence:
        ``counts_by_step()[name][k] == counts(k)[name]`` for k = 0 .. len(trace). A view that
        shows the counts of each step reads them so, without a dictionary a step."""
        columns = (memoryview(column).toreadonly() for column in self._tallies)
        return dict(zip(("nodes", "cutoffs", "pruned", "iterations"), columns))

    @property
    def iterations(self) -> int:
        """Return how many MCTS iterations the events record (0 for other searches)."""
        return self._tallies[3][-1]

    @property
    def cutoffs(self) -> int:
        """Return how many cut-offs the events record."""
        return self._tallies[1][-1]

    @functools.cached_property
    def node_count(self) -> int:
        """Return how many nodes the search visited: those the events enter, and those not kept (`unkept`)."""
        return self._tallies[0][-1] + sum(self.unkept.values())

    @functools.cached_property
    def sizes(self) -> Mapping[int, int]:
        """Return node id -> how many nodes the search visited in its subtree: itself, the nodes
        below it in the tree, and those below them that were not kept (`unkept`)."""
        nodes = self.nodes
        sizes = {i: 1 + self.unkept.get(i, 0) for i in nodes}
        for i in sorted(nodes, reverse=True):  # children have larger ids than their parents
            parent = nodes[i].parent
            if parent is not None:
                sizes[parent] += sizes[i]
        return MappingProxyType(sizes)

    def chosen_values(self) -> tuple[Optional[float], Optional[float]]:
        """Return (the root's true value, the true value after the move the recorded search chose),
        each None where unknown: the chosen move is optimal when the two are equal."""
        nodes = self.nodes
        if not nodes or self.chosen is None:
            return None, None
        root = min(nodes)
        child = next((c for c in nodes[root].children if nodes[c].move == self.chosen), None)
        return self.true_values.get(root), self.true_values.get(child) if child is not None else None

    def wrong_values(self) -> dict[int, tuple[float, float]]:
        """Return node id -> (value the search gave it, its true value) where those differ.

        Only for a recorded student search (which knows `true_values`), and only at nodes it
        searched to the end: a node with a cut-off at or below it may rightly hold a bound.
        """
        if not self.true_values:
            return {}
        nodes = self.nodes
        cut: set[int] = set()
        if self.prunes:
            for i in sorted(nodes, key=lambda i: -nodes[i].depth):  # children before parents
                node = nodes[i]
                if node.pruned or any(c in cut for c in node.children):
                    cut.add(i)
        return {
            i: (node.value, self.true_values[i])
            for i, node in nodes.items()
            if node.done and node.value is not None and i in self.true_values and i not in cut
            and node.value != self.true_values[i]
        }

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


@dataclass(frozen=True)
class Algorithm:
    """What a search that `record` runs shows, and what it needs, declared once for it.

    The first four become the fields of each `Trace` it records (see `Trace`): the pictures and
    the explorer read those, never the algorithm's name, so a new search is shown rightly once
    it declares them here. `depth_limited` says it stops at a depth and estimates there, so it
    needs a depth and the game's heuristic ``evaluate``.
    """

    reports_values: bool = True
    has_windows: bool = False
    prunes: bool = False
    has_visits: bool = False
    depth_limited: bool = False

    def shows(self) -> dict[str, bool]:
        """Return the fields a `Trace` of this search is recorded with."""
        return {"reports_values": self.reports_values, "has_windows": self.has_windows, "prunes": self.prunes,
                "has_visits": self.has_visits}


ALGORITHMS: Mapping[str, Algorithm] = MappingProxyType({  # the searches `record` runs, by name
    "minimax": Algorithm(),
    "alphabeta": Algorithm(has_windows=True, prunes=True),
    "depth-limited": Algorithm(has_windows=True, prunes=True, depth_limited=True),
    "mcts": Algorithm(has_visits=True),  # its values: each node's visits and mean result; the root's, at the end
})


def most_visited_path(nodes: dict[int, TraceNode], root: int = 0) -> list[int]:
    """Return the node ids from `root` down, each step to the most visited child (the first
    added, on a tie), as long as a child has been visited: the moves MCTS would choose."""
    path = [root]
    while True:
        children = [c for c in nodes[path[-1]].children if nodes[c].visits > 0]
        if not children:
            return path
        path.append(max(children, key=lambda c: nodes[c].visits))


def backed_up_values(nodes: dict[int, TraceNode]) -> dict[int, float]:
    """Return node id -> value for every node whose value the recorded tree decides (AIMA Fig. 5.2).

    A game-over leaf has its recorded value; an inner node has the largest (MAX) or smallest
    (MIN) of its children's values, but only when every child, and so every leaf below it, has
    one. For a search recorded through its calls (only game-over values known), this is the
    minimax value of each finished subtree as the recording shows it.
    """
    values: dict[int, float] = {}
    for i in sorted(nodes, key=lambda i: -nodes[i].depth):  # children before parents
        node = nodes[i]
        if not node.children:
            if node.done and node.value is not None:
                values[i] = node.value
        elif all(c in values for c in node.children):
            found = [values[c] for c in node.children]
            values[i] = max(found) if node.maximizing else min(found)
    return values


def record(
    game: Game,
    state: Any,
    *,
    algorithm: str = "alphabeta",
    ordered: bool = False,
    depth: Optional[int] = None,
    evaluate: Optional[Callable[[Any], float]] = None,
    max_depth: Optional[int] = None,
    max_nodes: Optional[int] = None,
    iterations: Optional[int] = None,
    seed: Optional[int] = None,
    exploration: Optional[float] = None,
) -> Trace:
    """Return the trace of one search from `state`.

    `algorithm` is 'minimax', 'alphabeta', 'depth-limited' (which needs `depth`, and uses
    `evaluate` or the game's own ``evaluate``) or 'mcts' (Monte Carlo tree search: `iterations`
    playouts, random moves from ``random.Random(seed)``, UCB1 with `exploration`, by default
    sqrt 2: the same result as ``ttt.search.mcts`` with that generator); `ordered` tries moves
    in the game's best-first order instead of row by row. `max_depth` and `max_nodes` keep only
    the events of the first nodes that deep (see `Recorder`, `MCTSRecorder`): the search is
    the same, the rest is only counted.
    """
    if algorithm == "mcts":
        if iterations is None:
            raise ValueError("mcts needs a number of iterations, for example iterations=100")
        recorder: Recorder = MCTSRecorder(max_depth=max_depth, max_nodes=max_nodes)
    else:
        recorder = Recorder(max_depth=max_depth, max_nodes=max_nodes)
    tracer = recorder if max_depth is not None or max_nodes is not None else recorder.events.append  # all kept: no checks
    order = game.order_moves if ordered else None
    if algorithm == "mcts":
        options = {} if exploration is None else {"exploration": exploration}
        result = search.mcts(game, state, rng=random.Random(seed), iterations=iterations, tracer=tracer, **options)
    elif algorithm == "minimax":
        result = search.minimax(game, state, tracer=tracer)
    elif algorithm == "alphabeta":
        result = search.alphabeta(game, state, order=order, tracer=tracer)
    elif algorithm == "depth-limited":
        if depth is None:
            raise ValueError("depth-limited search needs a depth, for example depth=2")
        evaluate = evaluate or game.evaluate
        if evaluate is None:
            raise ValueError(f"{game.name} has no evaluate(state); pass evaluate=...")
        result = search.depth_limited(game, state, depth=depth, evaluate=evaluate, order=order, tracer=tracer)
    else:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose one of: {', '.join(ALGORITHMS)}")
    return Trace(game, recorder.events, result, algorithm, unkept=recorder.unkept, **ALGORITHMS[algorithm].shows())


def __getattr__(name: str) -> Any:
    """``from ttt.trace import record_calls`` (as the lessons write it) reads ``ttt.call_recorder``'s."""
    if name in ("record_calls", "CallRecorder"):
        from ttt import call_recorder

        return getattr(call_recorder, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
