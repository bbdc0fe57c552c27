"""A student's own search, recorded through its calls: `record_calls` watches a notebook's
namespace while a CS50-style search runs, and its `CallRecorder` builds a ``ttt.trace.Trace``
of what the search did.

The recorder is a spy on the student's functions: ``result`` (and ``utility``), the value
functions (`VALUE_NAMES`) and the searches (`SEARCH_NAMES`) are wrapped for the duration of a
``with`` block and put back afterwards; the wrappers pass every call, answer and exception
through unchanged. The tree is told from the boards passed to ``result``; the values, from what
the student's functions returned; the cut-offs, from the legal moves the search never tried.
The trace it returns is read like any other (``ttt.trace``): drawn by ``ttt.draw``, stepped
through by the explorer, shown by the board widget's "Show the computer's thinking".
"""

from __future__ import annotations

import contextlib
import functools
import math
from typing import Any, Callable, Iterator, MutableMapping, Optional

from ttt.search import Cutoff, Enter, Event, Exit, Leaf
from ttt.trace import Trace

SEARCH_NAMES = ("minimax", "alphabeta")  # a recorded search's move: what these return at the root
VALUE_NAMES = ("max_value", "min_value", "value")  # its values: what these return, where they exist


class CallRecorder:
    """Builds a trace from the calls a CS50-style search makes to ``result`` and ``utility``,
    and from what its own ``max_value``, ``min_value`` or ``value`` return.

    The parent of each ``result(board, action)`` call is the most recent node holding `board`,
    which is right both for searches that recurse at once and for ones that make all children
    first. Each node's value is what the student's value function returned for its board (when
    the notebook has one: otherwise only the game-over values are known, and the drawing backs
    the others up); the move the search chose at the root is what its ``minimax`` or
    ``alphabeta`` returned (`chose`). A node where the search tried only some of the legal
    moves is a cut-off: the moves it never tried are its skipped moves. Recording never changes
    what the student's code does: a board it cannot read is left out of the tree.

    `max_depth` and `max_nodes` keep only the first nodes that deep (moves below the first
    board the search made a move from), as `Recorder` does: the others are only counted, under
    their nearest kept ancestor (`Trace.unkept`), after a look at how many marks their board
    holds, so recording a whole game's search costs little more than the search itself.
    """

    def __init__(self, *, max_depth: Optional[int] = None, max_nodes: Optional[int] = None) -> None:
        from ttt.games.classic import TicTacToe

        self.game = TicTacToe()
        self.max_depth = math.inf if max_depth is None else max_depth
        self.max_nodes = math.inf if max_nodes is None else max_nodes
        self.unkept: dict[int, int] = {}
        self._root_marks: Optional[int] = None
        self._marks_limit: Optional[float] = None  # a board with more marks than this is not kept
        self._path: list[int] = []  # the kept nodes on the way down to the newest node, by depth
        self._tried: dict[int, set] = {}  # a kept node -> the moves tried from it whose nodes were not kept
        self._first_values: dict[Any, Any] = {}  # a move from the root whose node was not kept -> its value
        self.events: list[Event] = []
        self._latest: dict[str, int] = {}  # board -> the newest node holding it
        self._depth: list[int] = []  # node id -> depth
        self._states: list[str] = []  # node id -> board
        self._valued: dict[int, Any] = {}  # node -> its game-over value (Leaf)
        self._exited: dict[int, int] = {}  # node -> index of its Exit event
        self.chosen: Any = None

    def _node_for(self, text: str, parent: Optional[int], move: Any, depth: int) -> int:
        node = len(self._depth)
        self._depth.append(depth)
        self._states.append(text)
        self._latest[text] = node
        self.events.append(Enter(node, parent, move, text, depth, self.game.to_move(text) == "X", -math.inf, math.inf))
        return node

    def _beyond(self, board: Any) -> bool:
        """Return True if `board`'s node is deeper than the nodes kept (told by its marks alone: called once a node)."""
        limit = self._marks_limit
        if limit is None:
            return False
        try:
            first, second, third = board
            return (first.count("X") + first.count("O") + second.count("X") + second.count("O")
                    + third.count("X") + third.count("O")) > limit
        except Exception:  # noqa: BLE001  (not a board: the slow way decides)
            return False

    def on_result(self, board: Any, action: Any, child: Any) -> None:
        marks = _marks(child)
        if self._root_marks is None and marks is not None:
            self._root_marks = marks - 1
            self._marks_limit = self._root_marks + self.max_depth
        if marks is not None:
            depth = marks - self._root_marks
            path = self._path
            del path[max(depth, 0):]
            if depth > self.max_depth or len(self._depth) >= self.max_nodes:  # only counted
                if path:
                    self.unkept[path[-1]] = self.unkept.get(path[-1], 0) + 1
                    if len(path) == depth:  # a move tried from a kept node
                        try:
                            self._tried.setdefault(path[-1], set()).add(3 * action[0] + action[1])
                        except (TypeError, IndexError):
                            pass
                return
        before, after = _text(board), _text(child)
        if before is None or after is None:
            return
        try:
            square = 3 * action[0] + action[1]
        except (TypeError, IndexError):
            return
        parent = self._latest.get(before)
        if parent is None:
            parent = self._node_for(before, None, None, 0)
            self._path[:] = [parent]
        node = self._node_for(after, parent, square, self._depth[parent] + 1)
        if marks is not None:
            self._path.append(node)

    def on_utility(self, board: Any, value: Any) -> None:
        text = _text(board)
        node = self._latest.get(text) if text is not None else None
        if node is not None and node not in self._valued and _is_number(value):
            self._valued[node] = value
            self.events.append(Leaf(node, value, True))

    def on_value(self, board: Any, value: Any) -> None:
        """Record that the student's value function returned `value` for `board`."""
        if self._beyond(board):  # (record_calls asks first, but other callers may not)
            return
        text = _text(board)
        if text is None or not _is_number(value):
            return
        node = self._latest.get(text)
        if node is None and self._depth:  # a board whose node was not kept: only a root's move's value is
            if self._root_marks is not None and _marks(board) == self._root_marks + 1:
                moved = [s for s in range(9) if text[s] != self._states[0][s]]
                if len(moved) == 1:
                    self._first_values[moved[0]] = value
            return
        if node is None:  # a value asked for at the root, before any move was tried
            node = self._node_for(text, None, None, 0)
        if node in self._valued and self._valued[node] == value:
            return
        if node in self._exited:
            self.events[self._exited[node]] = Exit(node, value, None, -math.inf, math.inf)
            return
        self._exited[node] = len(self.events)
        self.events.append(Exit(node, value, None, -math.inf, math.inf))

    def chose(self, board: Any, action: Any) -> None:
        """Record that the search returned `action` (i, j) for `board`, the root of the tree.

        `record_calls` does this itself when the search is called through the namespace's
        ``minimax`` or ``alphabeta``; code that calls the search function object directly
        (a widget holding it, say) tells the recorder here.
        """
        text = _text(board)
        try:
            square = 3 * action[0] + action[1]
        except (TypeError, IndexError):
            return
        if text is not None and self._states and self._states[0] == text:
            self.chosen = square

    def trace(self) -> Trace:
        """Return what was recorded so far as a Trace (no search result: it was the student's).

        Its nodes' values are the student's own where they are known (each inner node's best
        move is then the first child holding its value; the root's, the move the search chose),
        a node where the search skipped legal moves has a cut-off naming them, and
        `true_values` holds each node's value with perfect play, so that a value the student's
        code got wrong can be shown as such (`Trace.wrong_values`).
        """
        from ttt.games import classic

        events = list(self.events)
        children: dict[int, list[int]] = {}
        moves_of: dict[int, dict[Any, int]] = {}
        for e in events:
            if isinstance(e, Enter) and e.parent is not None:
                children.setdefault(e.parent, []).append(e.node)
                moves_of.setdefault(e.parent, {})[e.move] = e.node
        values = {e.node: e.value for e in events if isinstance(e, (Leaf, Exit))}
        exits = {e.node for e in events if isinstance(e, Exit)}
        if 0 in moves_of and 0 not in exits and (exits or self._first_values):  # the root's value: its chosen child's
            if self.chosen in moves_of[0] and moves_of[0][self.chosen] in values:
                events.append(Exit(0, values[moves_of[0][self.chosen]], self.chosen, -math.inf, math.inf))
            elif self.chosen in self._first_values:  # that child was not kept
                events.append(Exit(0, self._first_values[self.chosen], self.chosen, -math.inf, math.inf))
            elif self.chosen is None and all(c in values for c in moves_of[0].values()):  # chosen not told (`chose`)
                found = [values[c] for c in moves_of[0].values()]
                maximizing = self.game.to_move(self._states[0]) == "X"
                events.append(Exit(0, max(found) if maximizing else min(found), None, -math.inf, math.inf))
        # best moves of the inner nodes whose values the student's code gave (the root's: the chosen one, when told)
        for k, e in enumerate(events):
            if isinstance(e, Exit) and e.move is None and e.node in moves_of:
                move = self.chosen if e.node == 0 and self.chosen in moves_of[0] else next(
                    (m for m, c in moves_of[e.node].items() if values.get(c) == e.value), None)
                events[k] = Exit(e.node, e.value, move, e.alpha, e.beta)
        # cut-offs: the legal moves a node's search never tried, just after its last child's events
        before_exit: dict[int, int] = {}  # node -> index of the last event of its subtree, before its own Exit
        whole: dict[int, int] = {}  # node -> index of the last event of its subtree, its Exit included
        parent_of: dict[int, Optional[int]] = {}
        move_of: dict[int, Any] = {}
        for k, e in enumerate(events):
            if isinstance(e, Enter):
                parent_of[e.node], move_of[e.node] = e.parent, e.move
            if not isinstance(e, Exit):
                before_exit[e.node] = k
            whole[e.node] = k
        for node in sorted(whole, reverse=True):  # ids grow down the tree: children before parents
            parent = parent_of.get(node)
            if parent is not None:
                before_exit[parent] = max(before_exit[parent], whole[node])
                whole[parent] = max(whole[parent], whole[node])
        inserts = []
        for node in set(children) | set(self._tried):
            state = self._states[node]
            tried = {move_of[c] for c in children.get(node, ())} | self._tried.get(node, set())
            try:
                skipped = () if classic.is_terminal(state) else tuple(m for m in classic.moves(state) if m not in tried)
            except Exception:  # noqa: BLE001  (a board the rules cannot read: no cut-off to show)
                skipped = ()
            if skipped:
                inserts.append((before_exit[node] + 1, Cutoff(node, values.get(node, math.nan), -math.inf, math.inf, skipped)))
        for k, cutoff in sorted(inserts, key=lambda x: -x[0]):
            events.insert(k, cutoff)
        truth: dict[str, Optional[float]] = {}
        for state in set(self._states):
            try:
                classic.check_reachable(state)
                truth[state] = classic.value(state)
            except ValueError:
                truth[state] = None
        true_values = {node: truth[state] for node, state in enumerate(self._states) if truth[state] is not None}
        return Trace(self.game, events, None, "your search", self.chosen, true_values, dict(self.unkept),
                     reports_values=any(isinstance(e, Exit) for e in events), has_windows=False,
                     prunes=any(isinstance(e, Cutoff) for e in events), has_visits=False)


def _text(board: Any) -> Optional[str]:
    """Return a CS50 board as text, or None if it is not one (recording must never fail the search)."""
    from ttt.tictactoe import to_text

    try:
        return to_text(board)
    except Exception:  # noqa: BLE001
        return None


def _marks(board: Any) -> Optional[int]:
    """Return how many X and O a CS50 board holds, quickly, or None if it is not one."""
    try:
        first, second, third = board
        return (first.count("X") + first.count("O") + second.count("X") + second.count("O")
                + third.count("X") + third.count("O"))
    except Exception:  # noqa: BLE001  (recording must never fail the search)
        return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@contextlib.contextmanager
def record_calls(namespace: MutableMapping[str, Any], *, max_depth: Optional[int] = None,
                 max_nodes: Optional[int] = None) -> Iterator[CallRecorder]:
    """Record the tree a search explores through ``namespace['result']`` while inside the block.

    `namespace` is where the search looks its functions up: a notebook's ``globals()``, or a
    module's ``vars(module)``. ``result`` and, when present, ``utility``, the value functions
    (`VALUE_NAMES`) and the searches (`SEARCH_NAMES`) are wrapped for the duration and put
    back afterwards, even if the search raises. The wrappers pass every call and every
    exception through unchanged. `max_depth` and `max_nodes` keep only the first nodes that
    deep, counting the others (see `CallRecorder`).
    """
    recorder = CallRecorder(max_depth=max_depth, max_nodes=max_nodes)
    names = ("result", "utility") + VALUE_NAMES + SEARCH_NAMES
    originals = {name: namespace.get(name) for name in names if callable(namespace.get(name))}
    if "result" not in originals:
        raise ValueError("there is no result() function here to record: define result(board, action) first")
    searching = [0]

    def wrap(name: str, original: Callable) -> Callable:
        if name in SEARCH_NAMES:
            return wrap_search(original)
        if name == "result":
            on_result = recorder.on_result

            @functools.wraps(original)
            def wrapped_result(*args: Any, **kwargs: Any) -> Any:  # called once a node: kept short
                answer = original(*args, **kwargs)
                if len(args) >= 2:
                    on_result(args[0], args[1], answer)
                return answer

            return wrapped_result
        hook = recorder.on_utility if name == "utility" else recorder.on_value
        beyond = recorder._beyond

        @functools.wraps(original)
        def wrapped(*args: Any, **kwargs: Any) -> Any:  # called once a node: kept short
            answer = original(*args, **kwargs)
            if args and not beyond(args[0]):
                hook(args[0], answer)
            return answer

        return wrapped

    def wrap_search(original: Callable) -> Callable:
        @functools.wraps(original)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            searching[0] += 1
            try:
                answer = original(*args, **kwargs)
            finally:
                searching[0] -= 1
            if args and searching[0] == 0:
                recorder.chose(args[0], answer)
            return answer

        return wrapped

    for name, original in originals.items():
        namespace[name] = wrap(name, original)
    try:
        yield recorder
    finally:
        for name, original in originals.items():
            namespace[name] = original
