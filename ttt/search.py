"""Adversarial search over any game on the protocol: minimax, alpha-beta, depth-limited search.

The algorithms read like AIMA's pseudocode (4th ed., Fig. 5.3 MINIMAX-SEARCH and Fig. 5.7
ALPHA-BETA-SEARCH): X is MAX, O is MIN, values are from X's point of view. Each search returns
a `SearchResult` (value, best move, nodes visited, cut-offs) and sends every step to an optional
`tracer`, a callable that receives the events below. ``ttt.trace`` records those events into a
tree; the drawings and the step-by-step explorer are built on that recording, never on a second
copy of the search. Monte Carlo tree search (AIMA Fig. 5.11) sends the four phases of each
iteration: `Select`, `Enter` (the node expanded), `Rollout` and `Backup`.

Counting: a *node* is one call on one state (the root included), so a full minimax from the
empty 3x3 board visits 549,946 nodes, every node of the game tree. A *cut-off* is counted when
alpha-beta stops at a node with moves still untried (the moves it skips).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Optional, Sequence

from ttt.errors import bad_depth
from ttt.games.base import Game

Move = Hashable
State = Hashable
Evaluate = Callable[[Any], float]  # state -> estimated value for X, used at the depth limit
Order = Callable[[Any, Sequence[Any]], Sequence[Any]]  # (state, moves) -> moves, best first


# --- events ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Enter:
    """The search arrives at `node` (its parent's child via `move`), with the window (alpha, beta)."""

    node: int
    parent: Optional[int]
    move: Any
    state: Any
    depth: int
    maximizing: bool
    alpha: float
    beta: float


@dataclass(frozen=True)
class Leaf:
    """`node` is not expanded: the game is over (`terminal`) or the depth limit gave an estimate."""

    node: int
    value: float
    terminal: bool


@dataclass(frozen=True)
class Exit:
    """The search leaves `node` with its `value`, best `move` and the window it ended with."""

    node: int
    value: float
    move: Any
    alpha: float
    beta: float


@dataclass(frozen=True)
class Cutoff:
    """Alpha-beta stops at `node`: `value` falls outside (alpha, beta), so `skipped` are never tried."""

    node: int
    value: float
    alpha: float
    beta: float
    skipped: tuple


@dataclass(frozen=True)
class Score:
    """One child as MCTS's selection scores it (UCB1): `ucb` = `mean` + `bonus`.

    `mean` is the child's mean result for the player choosing (the one who moves into it: 1 a
    win, 0.5 a tie, 0 a loss) over its `visits`; `bonus` is the exploration term, exploration *
    sqrt(ln N / visits) with N the parent's visits, large for a child seldom tried.
    """

    node: int
    move: Any
    visits: int
    mean: float
    bonus: float

    @property
    def ucb(self) -> float:
        """Return the UCB1 score: the mean result plus the exploration bonus."""
        return self.mean + self.bonus


@dataclass(frozen=True)
class Select:
    """MCTS's selection at `node` (every move tried): of its `children`, scored, it goes on to `chosen` (a node id)."""

    node: int
    children: tuple[Score, ...]
    chosen: int


@dataclass(frozen=True)
class Rollout:
    """MCTS's simulation from `node`: `moves` random moves to the end of the game, won by `winner` (None: a tie).

    `moves` is 0 when the game is already over at `node`.
    """

    node: int
    winner: Optional[str]
    moves: int


@dataclass(frozen=True)
class Tally:
    """A node's counts in MCTS: its `visits` (playouts through it) and `total`, their results summed
    for the player who moved into it (1 a win, 0.5 a tie, 0 a loss)."""

    node: int
    visits: int
    total: float


@dataclass(frozen=True)
class Backup:
    """MCTS's back-propagation: the result of the rollout from `node` (won by `winner`, None: a tie)
    is added to each node on `path`, from the root down to `node`, each with its new counts."""

    node: int
    winner: Optional[str]
    path: tuple[Tally, ...]


Event = Enter | Leaf | Exit | Cutoff | Select | Rollout | Backup
Tracer = Callable[[Event], None]


NO_BUDGET = "give mcts a budget: seconds=... or iterations=..."  # what each MCTS says when given neither


@dataclass(frozen=True)
class SearchResult:
    """What a search found: the value for X, a best move, and how much work it took."""

    value: float
    move: Any
    nodes: int
    cutoffs: int = 0
    depth: Optional[int] = None  # the depth searched, for depth-limited and iterative deepening


# --- the searches -------------------------------------------------------------------------


class _Search:
    """One run of a search: the counters and the tracer, shared by the recursive calls."""

    def __init__(
        self,
        game: Game,
        *,
        tracer: Optional[Tracer] = None,
        order: Optional[Order] = None,
        evaluate: Optional[Evaluate] = None,
        deadline: Optional[float] = None,
    ) -> None:
        self.game = game
        self.tracer = tracer
        self.order = order
        self.evaluate = evaluate
        self.deadline = deadline
        self.nodes = 0
        self.cutoffs = 0
        self.reached_limit = False  # did any line stop at the depth limit (not at the game's end)?

    def _moves(self, state: State) -> Sequence[Move]:
        moves = self.game.moves(state)
        return self.order(state, moves) if self.order is not None else moves

    def _check_time(self) -> None:
        if self.deadline is not None and self.nodes & 255 == 0 and time.perf_counter() > self.deadline:
            raise OutOfTime

    def minimax(self, state: State, parent: Optional[int], move: Move, depth: int) -> tuple[float, Move]:
        """Return (value, best move) of `state` by plain minimax (AIMA Fig. 5.3)."""
        game, tracer = self.game, self.tracer
        node = self.nodes
        self.nodes += 1
        maximizing = game.to_move(state) == "X"
        if tracer:
            tracer(Enter(node, parent, move, state, depth, maximizing, -math.inf, math.inf))
        if game.is_terminal(state):
            value = game.utility(state)
            if tracer:
                tracer(Leaf(node, value, True))
            return value, None
        best_value, best_move = (-math.inf if maximizing else math.inf), None
        for m in self._moves(state):
            v, _ = self.minimax(game.play(state, m), node, m, depth + 1)
            if (v > best_value) if maximizing else (v < best_value):
                best_value, best_move = v, m
        if tracer:
            tracer(Exit(node, best_value, best_move, -math.inf, math.inf))
        return best_value, best_move

    def alphabeta(
        self, state: State, parent: Optional[int], move: Move, depth: int, alpha: float, beta: float, limit: Optional[int]
    ) -> tuple[float, Move]:
        """Return (value, best move) of `state` by alpha-beta (AIMA Fig. 5.7), cut at depth `limit`."""
        game, tracer = self.game, self.tracer
        node = self.nodes
        self.nodes += 1
        self._check_time()
        maximizing = game.to_move(state) == "X"
        if tracer:
            tracer(Enter(node, parent, move, state, depth, maximizing, alpha, beta))
        if game.is_terminal(state):
            value = game.utility(state)
            if tracer:
                tracer(Leaf(node, value, True))
            return value, None
        if limit is not None and depth >= limit:
            value = self.evaluate(state)
            self.reached_limit = True
            if tracer:
                tracer(Leaf(node, value, False))
            return value, None
        moves = self._moves(state)
        best_value, best_move = (-math.inf if maximizing else math.inf), None
        for k, m in enumerate(moves):
            v, _ = self.alphabeta(game.play(state, m), node, m, depth + 1, alpha, beta, limit)
            if maximizing:
                if v > best_value:
                    best_value, best_move = v, m
                if best_value >= beta:
                    return self._cut(node, best_value, best_move, alpha, beta, moves[k + 1 :])
                alpha = max(alpha, best_value)
            else:
                if v < best_value:
                    best_value, best_move = v, m
                if best_value <= alpha:
                    return self._cut(node, best_value, best_move, alpha, beta, moves[k + 1 :])
                beta = min(beta, best_value)
        if tracer:
            tracer(Exit(node, best_value, best_move, alpha, beta))
        return best_value, best_move

    def _cut(self, node: int, value: float, move: Move, alpha: float, beta: float, skipped: Sequence[Move]):
        if skipped:
            self.cutoffs += 1
            if self.tracer:
                self.tracer(Cutoff(node, value, alpha, beta, tuple(skipped)))
        if self.tracer:
            self.tracer(Exit(node, value, move, alpha, beta))
        return value, move


class OutOfTime(Exception):
    """Raised inside a search when its time budget is spent (iterative deepening catches it and
    keeps the last depth it finished: here, and in the fast engine's ``ttt.engine.alphabeta``)."""


def minimax(game: Game, state: State, *, tracer: Optional[Tracer] = None) -> SearchResult:
    """Return the minimax value and a best move of `state`, visiting the whole game tree below it."""
    run = _Search(game, tracer=tracer)
    value, move = run.minimax(state, None, None, 0)
    return SearchResult(value, move, run.nodes)


def alphabeta(
    game: Game, state: State, *, order: Optional[Order] = None, tracer: Optional[Tracer] = None
) -> SearchResult:
    """Return the minimax value and a best move of `state` by alpha-beta pruning.

    `order` (for example ``game.order_moves``) sorts each node's moves before they are tried;
    by default they are tried in the game's own order (row by row). The value always equals
    minimax's; better ordering only prunes more.
    """
    run = _Search(game, tracer=tracer, order=order)
    value, move = run.alphabeta(state, None, None, 0, -math.inf, math.inf, None)
    return SearchResult(value, move, run.nodes, run.cutoffs)


def depth_limited(
    game: Game,
    state: State,
    *,
    depth: int,
    evaluate: Evaluate,
    order: Optional[Order] = None,
    tracer: Optional[Tracer] = None,
) -> SearchResult:
    """Return alpha-beta's value and best move looking `depth` moves ahead.

    Positions at the depth limit that are not over get `evaluate(state)`, an estimate for X
    (AIMA's H-MINIMAX, section 5.3). Game-over positions keep their true utility.
    """
    if depth < 1:
        raise bad_depth(depth)
    run = _Search(game, tracer=tracer, order=order, evaluate=evaluate)
    value, move = run.alphabeta(state, None, None, 0, -math.inf, math.inf, depth)
    return SearchResult(value, move, run.nodes, run.cutoffs, depth)


def iterative_deepening(
    game: Game,
    state: State,
    *,
    evaluate: Evaluate,
    seconds: float,
    max_depth: int = 64,
    order: Optional[Order] = None,
) -> SearchResult:
    """Return the result of the deepest depth-limited search that finished within `seconds`.

    Searches depth 1, 2, 3, ... and keeps the last complete answer; the best move found so far
    is tried first at the next depth. Depth 1 always finishes, however small the budget.
    """
    deadline = time.perf_counter() + seconds
    best: Optional[SearchResult] = None
    nodes = cutoffs = 0
    previous = None
    for depth in range(1, max_depth + 1):

        def ordered(s: State, moves: Sequence[Move], _root=state, _first=previous) -> Sequence[Move]:
            moves = order(s, moves) if order is not None else list(moves)
            if s == _root and _first in moves:
                moves = [_first] + [m for m in moves if m != _first]
            return moves

        run = _Search(game, order=ordered, evaluate=evaluate, deadline=deadline if best else None)
        try:
            value, move = run.alphabeta(state, None, None, 0, -math.inf, math.inf, depth)
        except OutOfTime:
            nodes += run.nodes
            cutoffs += run.cutoffs
            break
        nodes += run.nodes
        cutoffs += run.cutoffs
        best = SearchResult(value, move, nodes, cutoffs, depth)
        previous = move
        if not run.reached_limit or abs(value) >= game.win_value or time.perf_counter() > deadline:
            break
    assert best is not None
    return SearchResult(best.value, best.move, nodes, cutoffs, best.depth)


# --- Monte Carlo tree search -----------------------------------------------------------------


class _Node:
    """One node of the Monte Carlo tree: its children by move, visits and total result."""

    __slots__ = ("id", "state", "mover", "untried", "children", "visits", "total")

    def __init__(self, game: Game, state: State, rng: Any, id: int = 0) -> None:
        self.id = id  # the order it was added in: the root is 0 (what a tracer's events name it by)
        self.state = state
        self.mover = game.to_move(state)
        self.untried = [] if game.is_terminal(state) else list(game.moves(state))
        rng.shuffle(self.untried)
        self.children: dict[Any, _Node] = {}
        self.visits = 0
        self.total = 0.0  # results for the player who moved *into* this node: 1 win, 0.5 tie


def _scores(node: _Node, log_n: float, exploration: float) -> tuple[Score, ...]:
    """Return each child of `node` as selection scores it, for a tracer (the same sums as in `mcts`)."""
    return tuple(
        Score(c.id, m, c.visits, c.total / c.visits, exploration * math.sqrt(log_n / c.visits))
        for m, c in node.children.items()
    )


def mcts(
    game: Game,
    state: State,
    *,
    rng: Any,
    seconds: Optional[float] = None,
    iterations: Optional[int] = None,
    exploration: float = math.sqrt(2),
    tracer: Optional[Tracer] = None,
) -> SearchResult:
    """Return the most visited move of Monte Carlo tree search (UCT) from `state`.

    Each iteration selects down the tree by UCB1 (mean result + `exploration` * sqrt(ln N / n)),
    adds one child, plays random moves (from `rng`) to the end of the game and backs the result
    up (AIMA 4th ed., Fig. 5.11 MONTE-CARLO-TREE-SEARCH). It runs `iterations` times, or until
    `seconds` have passed. The value is the chosen move's mean result from X's point of view,
    from -1 (O always won) to 1 (X always won); `nodes` counts the iterations (one playout each).

    A `tracer` receives, for the root and then each iteration, its phases as events: `Select`
    at each node on the way down, `Enter` for the node expanded, `Rollout`, and `Backup`; at
    the end, `Exit` at the root with the value and the move chosen. Tracing changes nothing the
    search does: the same `rng` gives the same result.
    """
    if seconds is None and iterations is None:
        raise ValueError(NO_BUDGET)
    deadline = None if seconds is None else time.perf_counter() + seconds
    root = _Node(game, state, rng)
    added = 1  # nodes in the tree
    if tracer:
        tracer(Enter(root.id, None, None, state, 0, root.mover == "X", -math.inf, math.inf))
    done = 0
    while (iterations is None or done < iterations) and (deadline is None or done == 0 or time.perf_counter() < deadline):
        node, path = root, [root]
        while not node.untried and node.children:  # selection
            log_n = math.log(node.visits)
            child = max(  # UCB1: mean result + exploration * sqrt(ln N / n)
                node.children.values(),
                key=lambda c: c.total / c.visits + exploration * math.sqrt(log_n / c.visits),
            )
            if tracer:
                tracer(Select(node.id, _scores(node, log_n, exploration), child.id))
            node = child
            path.append(node)
        if node.untried:  # expansion
            move = node.untried.pop()
            child = _Node(game, game.play(node.state, move), rng, added)
            added += 1
            node.children[move] = child
            if tracer:
                tracer(Enter(child.id, node.id, move, child.state, len(path), child.mover == "X", -math.inf, math.inf))
            node, path = child, path + [child]
        s, moves = node.state, 0  # simulation
        while not game.is_terminal(s):
            s = game.play(s, rng.choice(game.moves(s)))
            moves += 1
        won = game.winner(s)
        if tracer:
            tracer(Rollout(node.id, won, moves))
        for n in path:  # back-propagation, scored for the player who moved into each node
            n.visits += 1
            n.total += 0.5 if won is None else float(won != n.mover)
        if tracer:
            tracer(Backup(node.id, won, tuple(Tally(n.id, n.visits, n.total) for n in path)))
        done += 1
    if not root.children:
        value, move = game.utility(state), None
    else:
        move, best = max(root.children.items(), key=lambda item: item[1].visits)
        mean = best.total / best.visits  # for the player who moved into `best`, the root's mover
        value = 2 * mean - 1
        value = value if root.mover == "X" else -value
    if tracer:
        tracer(Exit(root.id, value, move, -math.inf, math.inf))
    return SearchResult(value, move, done)
