"""Fast Monte Carlo tree search for the big boards, on the engine's `Board`.

The same search as ``ttt.search.mcts`` (UCT: select by UCB1, expand one child, play random
moves to the end, back the result up; AIMA 4th ed., Fig. 5.11), written for speed instead of
for reading, with additions that make it stronger for the same time. Where it departs from
the readable search:

- **Speed.** Selection plays no moves: a node keeps its position (`Board.snapshot`) while it
  has untried moves, so an iteration sets one scratch `Board` to the expanded node's position
  and plays one move with `push`, never checked. A new node's moves are worked out only when it
  is reached a second time (most leaves never are). The playout is one loop over local
  variables and the engine's tables (a move is a bit set in a mask, a won board one table
  look-up). A node keeps its mean result and ``1 / sqrt(visits)`` up to date, so UCB1 over its
  children is a multiply and an add each; that and ``sqrt(ln visits)`` are read from tables
  (`_SPREAD`, `_SCALE`) instead of computed at every step. The CPU clock is read every
  `CLOCK_EVERY` iterations. Python's cycle collector is paused while the search runs: the tree
  has no cycles, yet the collector would walk the whole growing tree again and again (nearly a
  fifth of a one-second search from a late position).
- **Decisive playouts.** A playout ends as soon as the player to move can win the game with
  one move (a free cell that completes a line on a board that, in ultimate, completes a line
  of boards: `THREATS` below, `ttt.engine.board.COMPLETES`), scored as that player's win. A random playout
  misses such wins about as often as it takes them; this costs nothing (the playouts get
  shorter, so there are more of them). And a player sent to a small board it can win with one
  move takes that cell half the time (`TAKE_BOARD`), as players do, instead of one time in as
  many as there are free cells.
- **MCTS-solver.** Results that are certain are proven and backed up as in Winands, Björnsson
  and Saito, "Monte-Carlo Tree Search Solver" (2008): a node where the game is over, or where
  the player to move can win at once, is proven for the player who moved into it (a win, a
  tie, a loss); a node with a child proven won for its mover is proven lost for the player who
  moved into it; a node whose children are all expanded and all proven takes the best of them.
  A child proven lost is never selected again (so the search stops handing the opponent wins),
  a proven draw counts as ½, and the search stops when the root is proven.
- **Tree reuse.** Given a `Tree` (the `mcts` player keeps one), a search starts from the node
  of the position in the player's last tree, with the simulations already run below it.
- **Less exploration.** UCB1's constant is 0.6 unless given (the teaching search's is sqrt(2)):
  with tens of thousands of simulations a move rather than millions, exploring less plays better.

Results are scored for the player who moved into a node (1 a win, ½ a tie, 0 a loss), as in
the teaching search. The time budget is CPU time (``time.process_time``), so a busy machine
does not make the player weaker. The value returned is the chosen move's mean result from X's
point of view, from -1 to 1 (exactly 1 or -1 when proven), and `nodes` counts the simulations
(iterations), fewer than `iterations` when the root was proven first.
"""

from __future__ import annotations

import gc
import math
import time
from typing import Any, Callable, Optional

from ttt.engine.board import ANY, CELLS, COMPLETES, FULL, MOVES_ON, O_WON, TIE, WINS, X_WON, Board
from ttt.games.bigboard import BigState
from ttt.search import NO_BUDGET, SearchResult

THREATS = tuple(  # a player's cells on a small board -> the cells (free or not) that would complete a line
    sum(1 << c for c in range(9) if not m >> c & 1 and WINS[m | 1 << c]) for m in range(512)
)
FREE_CELLS = tuple(CELLS[FULL ^ occupied] for occupied in range(512))  # a small board's taken cells -> its free cells
ANY_BOARD = (FULL,) * 512  # nine-board's `COMPLETES`: a small board's line wins the game on any board
TAKE_BOARD = 0.5  # how often a playout takes a cell that wins the small board it is sent to
EXPLORATION = 0.6  # UCB1's constant: below the teaching search's sqrt(2), as measured (see `mcts`)
UNPROVEN = 2  # `_Node.proven` when nothing is proven; else 1, 0 or -1 for the player who moved into it
CLOCK_EVERY = 16  # iterations between readings of the CPU clock (a system call), about half a millisecond
LOST = -1e9  # a proven-lost child's mean: below any UCB1 score, so it is never selected
BELOW_LOST = LOST - 1.0  # below every child's score, even a proven-lost one's

# visits -> 1 / sqrt(visits), and visits -> sqrt(ln visits), grown by `_grow` to cover the most
# visits a node has (a table look-up is cheaper than the calls, made at every node of every path)
_SPREAD = [0.0]
_SCALE = [0.0]


class _Node:
    """A node of the tree: the move into it (``9 * board + cell``), `by` the player who moved
    (0 X, 1 O), its children and untried moves, its visits and the results of its playouts for
    `by`, the mean result and ``1 / sqrt(visits)`` that UCB1 reads, and what is proven.

    A new node is looked at lazily: its moves (`untried`, None until then) and whether the
    player to move can win at once are worked out when it is first selected again, not when it
    is made, because most leaves are played out once and never reached again. (Its first
    playout already scores such a win: a playout's first step is the same test.)"""

    __slots__ = ("move", "by", "children", "untried", "position", "visits", "wins", "mean", "spread", "proven")

    def __init__(self, move: int, by: int, board: Board) -> None:
        self.move = move
        self.by = by
        self.children: list[_Node] = []
        self.visits = 0
        self.wins = 0.0
        self.mean = 0.0
        self.spread = 0.0
        self.proven = UNPROVEN
        self.untried: Optional[list[int]] = None
        self.position: Optional[tuple] = None  # the board's snapshot, kept while moves are untried
        if board.result:  # the game is over: `by` won it or it is a tie
            self.untried = []
            self._settle(0 if board.result == TIE else 1)
        else:
            self.position = board.snapshot()

    def look(self, board: Board) -> bool:
        """Set `board` to this node's position and work out its moves; return True when that
        proves it (the player to move can win at once: lost for `by`)."""
        board.restore(self.position)
        if winning_move(board) >= 0:
            self.position = None
            self.untried = []
            self._settle(-1)
            return True
        self.untried = board.moves()
        return False

    def _settle(self, proven: int) -> None:
        """Record a proof (1 `by` wins, 0 a tie, -1 `by` loses) and the mean UCB1 reads from now on."""
        self.proven = proven
        self.mean = LOST if proven < 0 else 0.5 if proven == 0 else 1.0


def winning_move(board: Board) -> int:
    """Return a move (``9 * board + cell``) that wins the game at once for the player to move, or -1."""
    if board.turn:
        mine, theirs, held = board.os, board.xs, board.o_boards
    else:
        mine, theirs, held = board.xs, board.os, board.x_boards
    allowed = FULL ^ board.closed if board.sent_to == ANY else 1 << board.sent_to
    if board.ultimate:  # only a board that completes a line of boards wins the game
        allowed &= COMPLETES[held]
    for b in CELLS[allowed]:
        cells = THREATS[mine[b]] & ~theirs[b]
        if cells:
            return 9 * b + CELLS[cells][0]
    return -1


def playout(board: Board, random: Callable[[], float], record: Optional[list] = None) -> int:
    """Play random moves on `board` (its masks changed in place) until the game is decided;
    return the result, ``X_WON``, ``O_WON`` or ``TIE``. Appends the moves played to `record`
    when given one (the tests replay them through the rules).

    The policy: a player who can win the game with one move is counted as winning it then
    (decisive moves), without playing it out. A player sent to a board plays on it; a player
    who may play on any open board picks one of them at random, as OpenSpiel's rollouts do
    (choosing the board, then the cell), not a cell among all the free ones. On the board, a
    cell that wins it is taken half the time when there is one (`TAKE_BOARD`), else any free
    cell at random.

    In nine-board a small board's three in a row wins the game, so any such cell is a decisive
    move, found before a move is chosen: the loop only ever closes a nine-board small board by
    filling it, and the game is a tie when every board is closed, in both games."""
    if board.result:
        return board.result
    if board.turn:
        mine, theirs, my_boards, their_boards, me, you = board.os, board.xs, board.o_boards, board.x_boards, O_WON, X_WON
    else:
        mine, theirs, my_boards, their_boards, me, you = board.xs, board.os, board.x_boards, board.o_boards, X_WON, O_WON
    closed, b = board.closed, board.sent_to  # b: the board to play on, or ANY
    goal = COMPLETES if board.ultimate else ANY_BOARD  # the boards whose taking wins the game
    wins, cells_of, threats, free_cells, full = WINS, CELLS, THREATS, FREE_CELLS, FULL  # locals: read fastest
    while True:
        if b < 0:  # any open board: a win at once on one of them, else one at random
            for b in cells_of[goal[my_boards] & ~closed]:
                if threats[mine[b]] & ~theirs[b]:
                    return me
            open_boards = cells_of[full ^ closed]
            b = open_boards[int(random() * len(open_boards))]
            m, t = mine[b], theirs[b]
            cells = threats[m] & ~t  # the cells that win this small board
        else:
            m, t = mine[b], theirs[b]
            cells = threats[m] & ~t
            if cells and goal[my_boards] >> b & 1:
                return me
        if cells and random() < TAKE_BOARD:
            cells = cells_of[cells]
        else:
            cells = free_cells[m | t]
        c = cells[int(random() * len(cells))]
        if record is not None:
            record.append(9 * b + c)
        m |= 1 << c
        mine[b] = m
        if wins[m]:  # a small board won (ultimate only: see above); a win of the game was found above
            closed |= 1 << b
            my_boards |= 1 << b
            if closed == full:
                return TIE
        elif m | t == full:
            closed |= 1 << b
            if closed == full:
                return TIE
        b = ANY if closed >> c & 1 else c
        # three swaps of two, not one of six: Python swaps two names without building a tuple
        mine, theirs = theirs, mine
        my_boards, their_boards = their_boards, my_boards
        me, you = you, me


def _proven_result(node: _Node) -> int:
    """Return the result a proven node stands for: ``X_WON``, ``O_WON`` or ``TIE``."""
    if node.proven == 0:
        return TIE
    return X_WON if (node.by == 0) == (node.proven == 1) else O_WON


def _iterate(root: _Node, board: Board, random: Callable[[], float], exploration: float) -> None:
    """One iteration: select by UCB1, expand one untried move (chosen at random), play out from
    it on `board` (a scratch board, set to the expanded node's position), back the result up and
    carry any proof up. Selection plays no moves: a node keeps its position while it has untried
    moves, so only the expansion's move is played."""
    scales = _SCALE
    node, path = root, [root]
    append = path.append
    proved = False
    while True:
        if node.proven != UNPROVEN:  # a proven draw, selected: no playout needed
            untried = None
            break
        untried = node.untried
        if untried is None:  # reached again after its first playout: look at it, then expand it
            proved = node.look(board)
            untried = node.untried
            break
        if untried:
            board.restore(node.position)
            break
        scale = exploration * scales[node.visits]
        best_score = BELOW_LOST
        for child in node.children:  # UCB1: mean + exploration * sqrt(ln N / n)
            score = child.mean + scale * child.spread
            if score > best_score:
                node, best_score = child, score
        append(node)
    if untried:  # expansion
        k = int(random() * len(untried))
        untried[k], untried[-1] = untried[-1], untried[k]
        move = untried.pop()
        if not untried:
            node.position = None
        by = board.turn
        board.push(move)
        node = _Node(move, by, board)
        path[-1].children.append(node)
        append(node)
        proved = node.proven != UNPROVEN  # the game is over
    result = _proven_result(node) if node.proven != UNPROVEN else playout(board, random)
    # back-up: count the result in every node of the path, for the player who moved into each
    spreads = _SPREAD
    gains = (1.0, 0.0) if result == X_WON else (0.0, 1.0) if result == O_WON else (0.5, 0.5)  # by X, by O
    for node in path:
        visits = node.visits = node.visits + 1
        wins = node.wins = node.wins + gains[node.by]
        if node.proven == UNPROVEN:
            node.mean = wins / visits
        node.spread = spreads[visits]
    if proved:
        _prove(path)


def _grow(size: int) -> None:
    """Extend `_SPREAD` and `_SCALE` to `size` entries."""
    sqrt, log = math.sqrt, math.log
    for n in range(len(_SPREAD), size):
        _SPREAD.append(1 / sqrt(n))
        _SCALE.append(sqrt(log(n)))


def _prove(path: list) -> None:
    """The last node of `path` has just been proven: carry the proof up as far as it goes."""
    for i in range(len(path) - 1, 0, -1):
        node, parent = path[i], path[i - 1]
        if parent.proven != UNPROVEN:
            return
        if node.proven == 1:  # the parent's mover has a winning move
            parent._settle(-1)
        elif not parent.untried and all(c.proven != UNPROVEN for c in parent.children):
            parent._settle(-max(c.proven for c in parent.children))
        else:
            return


def _run(root: _Node, board: Board, random: Callable[[], float], exploration: float,
         iterations: Optional[int], deadline: Optional[float]) -> int:
    """Run iterations from `root` until `iterations` are done, the CPU clock passes `deadline`
    or the root is proven; return how many ran."""
    clock, iterate = time.process_time, _iterate
    done = 0
    while root.proven == UNPROVEN:
        if root.visits + 2 >= len(_SPREAD):  # the back-up reads `_SPREAD[root.visits + 1]`
            _grow(2 * root.visits + 1024)
        iterate(root, board, random, exploration)
        done += 1
        if done == iterations or (deadline is not None and done % CLOCK_EVERY == 0 and clock() >= deadline):
            break
    return done


def _choose(root: _Node) -> _Node:
    """Return the root's child to play: a proven win, else the most visited child not proven
    lost (the most visited of all when every move loses)."""
    return max(root.children, key=lambda c: (c.proven != -1, c.proven == 1, c.visits))


class Tree:
    """The tree a player keeps from one of its moves to the next (tree reuse).

    After a search, `keep` remembers the chosen move's subtree and the squares after it. On the
    player's next move the opponent has played one move: `take` finds that move's node in the
    subtree and the new search starts from it, with every simulation already run below it,
    instead of from nothing. Any other position (a new game, a different game, a state that is
    not one move on) starts afresh.
    """

    def __init__(self) -> None:
        self._rules: Optional[str] = None
        self._squares: Optional[str] = None  # the squares after the move the player chose
        self._node: Optional[_Node] = None  # that move's node

    def take(self, game: Any, state: BigState) -> Any:
        """Return the node of `state` if it is one move on from the kept position, else None;
        forget the kept tree either way."""
        node, squares, rules = self._node, self._squares, self._rules
        self._node = self._squares = self._rules = None
        if node is None or rules != game.name:
            return None
        changed = [i for i, (a, b) in enumerate(zip(squares, state.squares)) if a != b]
        if len(changed) != 1 or squares[changed[0]] != ".":
            return None
        return self.child(node, changed[0])

    def keep(self, game: Any, state: BigState, node: Any) -> None:
        """Remember `node`, the move chosen from `state`, and the squares after it."""
        i, by = self.placed(node)
        mark = "X" if by == 0 else "O"
        self._rules, self._node = game.name, node
        self._squares = state.squares[:i] + mark + state.squares[i + 1:]

    # How a search's nodes are read (``ttt.engine.compiled.Tree`` reads its arrays instead):

    @staticmethod
    def placed(node: _Node) -> tuple[int, int]:
        """The move into `node` (``9 * board + cell``, its square's index) and who made it."""
        return node.move, node.by

    @staticmethod
    def child(node: _Node, move: int) -> Optional[_Node]:
        """The child of `node` that `move` leads to, if the search made it."""
        for child in node.children:
            if child.move == move:
                return child
        return None


def mcts(
    game: Any,
    state: BigState,
    *,
    rng: Any,
    seconds: Optional[float] = None,
    iterations: Optional[int] = None,
    exploration: float = EXPLORATION,
    tree: Optional[Tree] = None,
) -> SearchResult:
    """Return the most visited move of Monte Carlo tree search (UCT) from `state`, a position of
    nine-board or ultimate tic-tac-toe, as ``ttt.search.mcts`` does, faster and stronger.

    It runs `iterations` times, or until `seconds` of CPU time have passed (at least once), or
    until the root is proven. A move that wins the game at once is returned without searching.
    The move is ``(board, cell)``; the value is the chosen move's mean result for X, from -1 to
    1 (exactly 1 or -1 when proven); `nodes` counts the simulations run by this call. Given a
    `Tree`, the search starts from what the player's last search found below this position
    (see `Tree`), and keeps its tree there for the next move.

    `exploration` is 0.6 unless given, not the teaching search's sqrt(2): against OpenSpiel's
    MCTSBot on ultimate (20 games each, 0.2 CPU seconds a move, playouts without `TAKE_BOARD`)
    this search scored 0.40 with sqrt(2), 0.475 with 1.0 and 0.50 with 0.6; with few
    simulations a move, exploring less pays (the difference is within the noise of 20 games).
    """
    if seconds is None and iterations is None:
        raise ValueError(NO_BUDGET)
    start = Board.of(game, state)
    if start.result:
        return SearchResult(game.utility(state), None, 0)
    sign = 1 if start.turn == 0 else -1  # the root's mover's values, as X's
    win = winning_move(start)
    if win >= 0:
        return SearchResult(sign, divmod(win, 9), 0)
    root = tree.take(game, state) if tree is not None else None
    if root is None:
        root = _Node(-1, start.turn ^ 1, start)
    deadline = None if seconds is None else time.process_time() + seconds
    collecting = gc.isenabled()
    gc.disable()  # see the module's docstring (reference counting still frees what is dropped)
    try:
        done = _run(root, start.copy(), rng.random, exploration, iterations, deadline)
    finally:
        if collecting:
            gc.enable()
    best = _choose(root)
    if tree is not None:
        tree.keep(game, state, best)
    value = best.proven if best.proven != UNPROVEN else 2 * best.wins / best.visits - 1
    return SearchResult(sign * value, divmod(best.move, 9), done)
