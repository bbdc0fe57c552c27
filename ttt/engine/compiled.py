"""The engine's Monte Carlo tree search compiled to machine code with numba (the ``fast`` extra).

``pip install 'ttt[fast]'`` installs numba; then the big boards' ``mcts`` and ``default``
players search with `mcts` here instead of the plain-Python ``ttt.engine.mcts``: about ten
times its simulations a CPU second (and four to five times OpenSpiel's C++ MCTSBot's). Without
numba nothing here is imported, and the plain-Python search plays (`AVAILABLE` says which).

It is ``ttt.engine.mcts`` (the same UCT, the same decisive playouts with `TAKE_BOARD`, the same
MCTS-solver and UCB constant; read that module for what each does and why) written the way a
compiler wants it, plus the heuristic's estimates backed up as minimax values on ultimate for
the default player (`mcts`'s `heuristic`). The rules are here a third time, on arrays:

- a position is one array of 23 numbers: X's nine 9-bit masks, O's nine, then the closed
  boards, X's won boards, O's won boards, the board the mover is sent to (-1: any open one) and
  the player to move; `_push` plays a move on it. The tests replay this module's playouts
  through the readable rules move by move, as they do the plain engine's;
- the tree is a set of arrays indexed by node (move, mover, first child, number of children,
  visits, results, proof, estimate). A node's children are made all at once, in random
  order, the second time the node is reached (its first visit is a playout); selection plays
  the moves down from the root on a copy of the root's position;
- the search runs in chunks of `CHUNK` iterations between readings of the CPU clock (compiled
  code cannot read it), and the arrays grow between chunks when they are nearly full;
- the first call compiles the functions (about 9 CPU seconds); numba keeps the machine code in
  its cache on disk, so later processes load it instead (about a second with the import of
  numba). The cache is `NUMBA_CACHE_DIR` when the environment sets it, else `cache_dir()`
  (``~/.cache/ttt/numba`` on Linux: a folder of the user's own, writable by a student and by
  root alike, where a package's own ``__pycache__`` may not be). The functions are plain
  module-level functions and their tables module-level arrays, which numba's cache keeps
  (as constants) and finds again by the source file's contents.

Tree reuse is ``ttt.engine.mcts.Tree``'s: this module's `Tree` keeps the arrays, and the next
search starts from a copy of the subtree below the opponent's reply.
"""

from __future__ import annotations

import importlib.util
import os
import random
import threading
import time
from typing import Any, Optional

from ttt.engine.board import CELLS, COMPLETES, FULL, O_WON, TIE, WINS, X_WON, Board
from ttt.engine import mcts as plain
from ttt.engine.mcts import ANY_BOARD, EXPLORATION, LOST, TAKE_BOARD, THREATS
from ttt.games.bigboard import BigState
from ttt.search import NO_BUDGET, SearchResult

AVAILABLE = importlib.util.find_spec("numba") is not None  # whether the fast extra is installed
INSTALL_HINT = "the compiled search needs numba: pip install 'ttt[fast]'"
CHUNK = 2048  # iterations between readings of the CPU clock
HEURISTIC = 0.3  # the default player's weight of the estimates beside the playouts' mean (see `mcts`)
ESTIMATE_SCALE = 70.0  # `_judge`: the evaluation's score that counts as odds of e to 1
UNTRIED = 1e9  # above any UCB1 score: an untried child is selected before any tried one
UNPROVEN = 2
XS, OS, CLOSED, XB, OB, SENT, TURN = 0, 9, 18, 19, 20, 21, 22  # where each field is in a position array
SIZE = 23
np: Any = None  # numpy, once `_load` has imported it
FREE_CHOICE: float  # ttt.engine.evaluate's constant and function, once `_load` has imported it
ultimate_score: Any
_KERNELS: list = []  # the functions `_load` compiles, in order
_loading = threading.RLock()  # held while `_load` puts them in place and `warm_up` compiles them


def jit(function):
    """Mark `function` to be compiled by `_load`; until then it is the plain function."""
    _KERNELS.append(function.__name__)
    return function


def cache_dir() -> str:
    """Return the folder where numba caches the compiled search unless `NUMBA_CACHE_DIR` says
    another: ``numba`` in this user's cache folder for ``ttt`` (platformdirs': ``~/.cache/ttt/numba``
    on Linux, or under ``XDG_CACHE_HOME``)."""
    import platformdirs

    return os.path.join(platformdirs.user_cache_dir("ttt"), "numba")


def _load() -> None:
    """`_compile`, once a process (a front end may prepare the search in a thread while
    another thread starts one: the second waits)."""
    if np is None:
        with _loading:
            if np is None:
                _compile()


def _compile() -> None:
    """Import numba (about half a second and 100 MB, so only when a search first runs), build
    the tables as arrays, and put the compiled functions in place of the plain ones (numba
    compiles each on its first call, or loads it from its cache: `cache_dir()` unless the
    environment's `NUMBA_CACHE_DIR` names another)."""
    global np, _WINS, _THREATS, _GOALS, _CELLS, _COUNT, _TERNARY, _CHANCES, FREE_CHOICE, ultimate_score
    if not AVAILABLE:
        raise ImportError(INSTALL_HINT)
    if not os.environ.get("NUMBA_CACHE_DIR"):
        os.environ["NUMBA_CACHE_DIR"] = cache_dir()
    import numba
    import numpy

    numba.config.reload_config()  # (numba reads the environment when it is imported: it may have been already)

    from ttt.engine import evaluate  # (its tables take a fifth of a second to build: not at import)

    _WINS = numpy.array(WINS, dtype=numpy.bool_)
    _THREATS = numpy.array(THREATS, dtype=numpy.int64)
    _GOALS = numpy.array([COMPLETES, ANY_BOARD], dtype=numpy.int64)  # [0] ultimate, [1] nine-board
    _CELLS = numpy.zeros((512, 9), dtype=numpy.int64)
    _COUNT = numpy.zeros(512, dtype=numpy.int64)
    for mask in range(512):
        _COUNT[mask] = len(CELLS[mask])
        _CELLS[mask, : len(CELLS[mask])] = CELLS[mask]
    _TERNARY, _CHANCES = _chance_tables(numpy, evaluate)
    FREE_CHOICE, ultimate_score = evaluate.FREE_CHOICE, evaluate.ultimate_score
    for name in _KERNELS:  # compiled in order, so each finds the ones it calls already compiled
        try:
            globals()[name] = numba.njit(cache=True, nogil=True)(globals()[name])
        except RuntimeError:  # no cache folder numba can write to: compiled in every process
            globals()[name] = numba.njit(nogil=True)(globals()[name])
    np = numpy  # (last: a search that finds numpy here finds the functions in place)


def _chance_tables(numpy, evaluate) -> tuple:
    """``ttt.engine.evaluate``'s tables of each small board's chances, indexed by the board in
    base 3 (`_TERNARY[x] + 2 * _TERNARY[o]`, 3**9 entries, where the evaluation's
    ``x << 9 | o`` would need 2**18: small enough to stay in the processor's cache). Rows:
    X's and O's chances under random filling, then after X's best cell there, then after O's."""
    ternary = numpy.array([sum(3 ** c for c in range(9) if m >> c & 1) for m in range(512)], dtype=numpy.int64)
    rows = (evaluate.RANDOM_X, evaluate.RANDOM_O, evaluate.AFTER_X_X, evaluate.AFTER_X_O,
            evaluate.AFTER_O_X, evaluate.AFTER_O_O)
    chances = numpy.zeros((len(rows), 3 ** 9), dtype=numpy.float64)
    for x, o in evaluate.PAIRS:
        for row, table in enumerate(rows):
            chances[row, ternary[x] + 2 * ternary[o]] = table[x << 9 | o]
    return ternary, chances


@jit
def _seed(seed):
    np.random.seed(seed)


@jit
def _result(p, ultimate):
    """The game's result in position `p`: 0 going on, ``X_WON``, ``O_WON`` or ``TIE``. (In
    nine-board the search never plays past a won small board; see `_push`.)"""
    if ultimate:
        if _WINS[p[XB]]:
            return 1
        if _WINS[p[OB]]:
            return 2
    if p[CLOSED] == FULL:
        return 3
    return 0


@jit
def _push(p, move, ultimate):
    """Play `move` (``9 * board + cell``) for the player to move; return the game's result
    after it (in nine-board a small board's line wins the game)."""
    b, c = move // 9, move % 9
    me = p[TURN]
    mask = p[9 * me + b] | (1 << c)
    p[9 * me + b] = mask
    won = 0
    if _WINS[mask]:
        if not ultimate:
            won = 1 + me
        p[CLOSED] |= 1 << b
        p[XB + me] |= 1 << b
    elif (p[XS + b] | p[OS + b]) == FULL:
        p[CLOSED] |= 1 << b
    p[SENT] = -1 if (p[CLOSED] >> c) & 1 else c
    p[TURN] = 1 - me
    if won:
        return won
    return _result(p, ultimate)


@jit
def _winning_move(p, ultimate):
    """A move that wins the game at once for the player to move, or -1."""
    me = p[TURN]
    mine, theirs = 9 * me, 9 - 9 * me
    allowed = (FULL ^ p[CLOSED]) if p[SENT] < 0 else (1 << p[SENT])
    allowed &= _GOALS[0 if ultimate else 1, p[XB + me]]
    for i in range(_COUNT[allowed]):
        b = _CELLS[allowed, i]
        cells = _THREATS[p[mine + b]] & ~p[theirs + b]
        if cells:
            return 9 * b + _CELLS[cells, 0]
    return -1


@jit
def _moves(p, out):
    """Write the legal moves into `out`; return how many there are."""
    n = 0
    boards = (FULL ^ p[CLOSED]) if p[SENT] < 0 else (1 << p[SENT])
    for i in range(_COUNT[boards]):
        b = _CELLS[boards, i]
        free = FULL ^ (p[XS + b] | p[OS + b])
        for j in range(_COUNT[free]):
            out[n] = 9 * b + _CELLS[free, j]
            n += 1
    return n


@jit
def _playout(p, ultimate, take_board, record):
    """`ttt.engine.mcts.playout` on a position array (changed in place); moves go to `record`
    (its first number counts them) when it is longer than 1."""
    goal = 0 if ultimate else 1
    recording = record.shape[0] > 1
    while True:
        me = p[TURN]
        mine, theirs = 9 * me, 9 - 9 * me
        my_goal = _GOALS[goal, p[XB + me]]
        sent = p[SENT]
        if sent < 0:
            open_boards = FULL ^ p[CLOSED]
            wins = my_goal & open_boards
            for i in range(_COUNT[wins]):
                b = _CELLS[wins, i]
                if _THREATS[p[mine + b]] & ~p[theirs + b]:
                    return 1 + me
            b = _CELLS[open_boards, int(np.random.random() * _COUNT[open_boards])]
            cells = _THREATS[p[mine + b]] & ~p[theirs + b]
        else:
            b = sent
            cells = _THREATS[p[mine + b]] & ~p[theirs + b]
            if cells and (my_goal >> b) & 1:
                return 1 + me
        if cells == 0 or np.random.random() >= take_board:
            cells = FULL ^ (p[XS + b] | p[OS + b])
        c = _CELLS[cells, int(np.random.random() * _COUNT[cells])]
        if recording:
            record[0] += 1
            record[record[0]] = 9 * b + c
        result = _push(p, 9 * b + c, ultimate)
        if result:
            return result


_KERNELS.append("ultimate_score")  # ttt.engine.evaluate's own function, put here and compiled by `_load`


@jit
def _estimate(p, chances):
    """``ttt.engine.evaluate.ultimate``'s score for X of an ultimate position the mover cannot
    win at once (the same numbers, before its clipping; `chances`, 18 numbers of scratch)."""
    for b in range(9):
        k = _TERNARY[p[XS + b]] + 2 * _TERNARY[p[OS + b]]
        chances[b], chances[9 + b] = _CHANCES[0, k], _CHANCES[1, k]
    b = p[SENT]
    if b >= 0:  # the mover plays there: judged after the mover's best cell
        k = _TERNARY[p[XS + b]] + 2 * _TERNARY[p[OS + b]]
        row = 2 + 2 * p[TURN]
        chances[b], chances[9 + b] = _CHANCES[row, k], _CHANCES[row + 1, k]
    score = ultimate_score(chances[:9], chances[9:])
    if b < 0:
        score += FREE_CHOICE if p[TURN] == 0 else -FREE_CHOICE
    return score


@jit
def _judge(p, move, after, chances):
    """The estimate, from 0 to 1, of `move` for the player making it in ultimate position `p`
    (`after`, a scratch position): 1 or ½ when it ends the game, 0 when the opponent then wins
    at once, else `_estimate` as a chance, ``1 / (1 + exp(-score / ESTIMATE_SCALE))``."""
    after[:] = p
    over = _push(after, move, True)
    if over:
        return 0.5 if over == TIE else 1.0
    if _winning_move(after, True) >= 0:
        return 0.0
    chance = 1.0 / (1.0 + np.exp(-_estimate(after, chances) / ESTIMATE_SCALE))
    return chance if p[TURN] == 0 else 1.0 - chance


@jit
def _proof(proof, lost):
    """A proof's value for the player who moved into its node: 1 won, ½ a tie, `lost` lost."""
    if proof == 1:
        return 1.0
    if proof == 0:
        return 0.5
    return lost


@jit
def _known(estimate, proven, node):
    """What the minimax backups read for `node`: its proof's value when proven, else its estimate."""
    if proven[node] == UNPROVEN:
        return estimate[node]
    return _proof(proven[node], 0.0)


@jit
def _mean(wins, visits, proven, node):
    """The mean result UCB1 reads for `node`: a proof's value when proven (a loss `LOST`, so
    that it is never selected)."""
    if proven[node] == UNPROVEN:
        return wins[node] / visits[node]
    return _proof(proven[node], LOST)


@jit
def _search(root_position, ultimate, iterations, exploration, take_board, weight,
            move, by, first, count, visits, wins, proven, estimate, used):
    """Run `iterations` iterations on the tree in the arrays, whose first `used[0]` nodes are
    in use (node 0 is the root); stop early when the root is proven or fewer than 81 nodes are
    left. Return the iterations run. With `weight` above 0 (ultimate only) the children are
    judged when made and their estimates backed up as minimax values (see `mcts`)."""
    capacity = move.shape[0]
    p = np.empty(SIZE, dtype=np.int64)
    path = np.empty(82, dtype=np.int64)
    found = np.empty(81, dtype=np.int64)
    no_record = np.zeros(1, dtype=np.int64)
    after = np.empty(SIZE, dtype=np.int64)
    chances = np.empty(18, dtype=np.float64)
    for done in range(iterations):
        if proven[0] != UNPROVEN or used[0] + 81 > capacity:
            return done
        p[:] = root_position
        node, depth = 0, 1
        path[0] = 0
        result = 0
        proved = False
        while True:
            if proven[node] != UNPROVEN:
                if proven[node] == 0:
                    result = TIE
                else:
                    result = 1 + (by[node] if proven[node] == 1 else 1 - by[node])
                break
            if first[node] < 0:
                if visits[node] == 0 and node != 0:  # a new leaf: one playout
                    result = _playout(p, ultimate, take_board, no_record)
                    break
                if _winning_move(p, ultimate) >= 0:  # the player to move wins at once
                    proven[node] = -1
                    result = 1 + p[TURN]
                    proved = True
                    break
                n = _moves(p, found)
                for i in range(n - 1, 0, -1):  # the children in random order
                    j = int(np.random.random() * (i + 1))
                    found[i], found[j] = found[j], found[i]
                start = used[0]
                for i in range(n):
                    k = start + i
                    move[k], by[k], first[k], count[k] = found[i], p[TURN], -1, 0
                    visits[k], wins[k], proven[k] = 0, 0.0, UNPROVEN
                    estimate[k] = _judge(p, found[i], after, chances) if weight > 0 else 0.5
                first[node], count[node] = start, n
                used[0] = start + n
            best, best_score = -1, LOST - 1.0
            scale = exploration * np.sqrt(np.log(visits[node]))
            for k in range(first[node], first[node] + count[node]):
                if visits[k] == 0:
                    if proven[k] == UNPROVEN:
                        if weight == 0:
                            best = k
                            break
                        score = UNTRIED + estimate[k]  # untried first, the best judged first
                    else:
                        score = _mean(wins, visits, proven, k)
                elif weight > 0 and proven[k] == UNPROVEN:
                    score = ((1 - weight) * wins[k] / visits[k] + weight * estimate[k]
                             + scale / np.sqrt(visits[k]))
                else:
                    score = _mean(wins, visits, proven, k) + scale / np.sqrt(visits[k])
                if score > best_score:
                    best, best_score = k, score
            node = best
            path[depth] = node
            depth += 1
            over = _push(p, move[node], ultimate)
            if over:  # the game ends: proven for the player who moved
                proven[node] = 0 if over == TIE else 1
                result = over
                proved = True
                break
        for i in range(depth):  # back up
            k = path[i]
            visits[k] += 1
            if result == TIE:
                wins[k] += 0.5
            elif result == 1 + by[k]:
                wins[k] += 1.0
        if proved:  # carry the proof up
            for i in range(depth - 1, 0, -1):
                k, parent = path[i], path[i - 1]
                if proven[parent] != UNPROVEN:
                    break
                if proven[k] == 1:
                    proven[parent] = -1
                    continue
                best_proof, all_proven = -1, True
                for j in range(first[parent], first[parent] + count[parent]):
                    if proven[j] == UNPROVEN:
                        all_proven = False
                        break
                    best_proof = max(best_proof, proven[j])
                if not all_proven:
                    break
                proven[parent] = -best_proof
        if weight > 0:  # back the estimates up: a node's is 1 - its best child's
            for i in range(depth - 1, -1, -1):
                k = path[i]
                if first[k] < 0:
                    continue
                top = 0.0
                for j in range(first[k], first[k] + count[k]):
                    top = max(top, _known(estimate, proven, j))
                if estimate[k] == 1.0 - top and not proved:
                    break  # (so the nodes above are unchanged too)
                estimate[k] = 1.0 - top
    return iterations


@jit
def _size(root, first, count):
    """The number of nodes in the subtree of `root`."""
    size, stack = 0, [root]
    while stack:
        node = stack.pop()
        size += 1
        for k in range(first[node], first[node] + count[node]):
            stack.append(k)
    return size


@jit
def _copy(root, move, by, first, count, visits, wins, proven, estimate,
          new_move, new_by, new_first, new_count, new_visits, new_wins, new_proven, new_estimate, origin):
    """Copy the subtree of `root` into the new arrays, breadth first, `root` becoming node 0
    (a node's children stay side by side); `origin` gets each new node's old index. Return the
    number of nodes copied."""
    origin[0] = root
    used, i = 1, 0
    while i < used:
        old = origin[i]
        new_move[i], new_by[i], new_visits[i] = move[old], by[old], visits[old]
        new_wins[i], new_proven[i], new_count[i] = wins[old], proven[old], count[old]
        new_estimate[i] = estimate[old]
        new_first[i] = -1
        if first[old] >= 0:
            new_first[i] = used
            for j in range(count[old]):
                origin[used + j] = first[old] + j
            used += count[old]
        i += 1
    return used


def _subtree(arrays: tuple, root: int) -> tuple:
    """New tree arrays holding the subtree of node `root`, `root` as node 0, with room to grow."""
    *fields, _ = arrays
    size = _size(root, fields[2], fields[3])
    copy = _tree(max(1 << 20, 2 * size + 81 * CHUNK))
    copy[-1][0] = _copy(root, *fields, *copy[:-1],
                        np.empty(size, dtype=np.int64))
    return copy


def _position(board: Board) -> "np.ndarray":
    p = np.zeros(SIZE, dtype=np.int64)
    p[XS:XS + 9], p[OS:OS + 9] = board.xs, board.os
    p[CLOSED], p[XB], p[OB], p[SENT], p[TURN] = board.closed, board.x_boards, board.o_boards, board.sent_to, board.turn
    return p


_warm = False  # whether this process has compiled (or loaded) the search


def warm_up() -> None:
    """Compile the search now (a few seconds; a second or less when numba's cache has it), so
    that no move's clock pays for it. Only the first call in a process does anything."""
    global _warm
    if AVAILABLE and not _warm:
        from ttt.games import get_game

        with _loading:
            if not _warm:
                game = get_game("nine-board")
                mcts(game, game.initial(), rng=random.Random(0), iterations=CHUNK + 1)
                _subtree(_tree(1), 0)
                _warm = True


def playout(game: Any, state: BigState, seed: int) -> tuple[int, list[int]]:
    """Play one compiled playout from `state`; return its result and the moves it played (for
    the tests, which replay them through the rules)."""
    _load()
    board = Board.of(game, state)
    if board.result:
        return board.result, []
    _seed(seed)
    record = np.zeros(82, dtype=np.int64)
    result = _playout(_position(board), board.ultimate, TAKE_BOARD, record)
    return int(result), [int(m) for m in record[1:1 + record[0]]]


def mcts(
    game: Any,
    state: BigState,
    *,
    rng: Any,
    seconds: Optional[float] = None,
    iterations: Optional[int] = None,
    exploration: float = EXPLORATION,
    nodes: int = 1 << 20,
    tree: Optional["Tree"] = None,
    heuristic: float = 0.0,
) -> SearchResult:
    """``ttt.engine.mcts.mcts``, compiled: the same arguments (`nodes`, the tree's first
    capacity, grows as needed; `tree`, this module's `Tree`) and the same kind of result, many
    more simulations a second, and, with `heuristic` above 0, one addition on ultimate.

    **Implicit minimax backups** (Lanctot, Winands, Pepels and Sturtevant, "Monte Carlo Tree
    Search with Heuristic Evaluations using Implicit Minimax Backups", 2014). When a node's
    children are made, each is judged by the engine's evaluation (`_judge`: the default
    alpha-beta's ``ttt.engine.evaluate.ultimate``, turned into a chance from 0 to 1 for the
    player who moved, 0 when that move lets the opponent win at once); a node's estimate is
    then 1 minus the best of its children's, kept up to date along each iteration's path (a
    proven child counts as its proof). Selection reads ``(1 - heuristic) * mean + heuristic *
    estimate`` in place of the mean, so a few plies of the evaluation's minimax steer the
    search where the playouts alone are still noisy, and untried children are tried best
    judged first. The ``default`` player uses `HEURISTIC` (0.3); ``mcts`` uses none. Measured
    at 0.5 CPU s a move on ultimate, 40 games alternating sides, the search with it scored
    0.65 against the same search without it, though it runs 11-18 % fewer simulations a
    second; against OpenSpiel's MCTSBot it scored 0.91 at 0.5 s and 0.83 at 2 s (60 games
    each), where the search without it scored 0.79 and 0.63-0.69. The weight and
    `ESTIMATE_SCALE` (which fits the evaluation's score to the results of 120 self-play games:
    1 / (1 + e^(-score / 70))) were not tuned further. Nine-board has no evaluation here, so
    `heuristic` is ignored there.

    The random numbers are numba's, seeded from `rng` (the same `rng` and `iterations` give the
    same search). It raises ImportError, saying what to install, without numba.
    """
    _load()
    if seconds is None and iterations is None:
        raise ValueError(NO_BUDGET)
    board = Board.of(game, state)
    if board.result:
        return SearchResult(game.utility(state), None, 0)
    sign = 1 if board.turn == 0 else -1
    weight = heuristic if board.ultimate else 0.0
    position = _position(board)
    win = _winning_move(position, board.ultimate)
    if win >= 0:
        return SearchResult(sign, divmod(int(win), 9), 0)
    _seed(rng.getrandbits(32))
    clock = time.process_time
    deadline = None if seconds is None else clock() + seconds  # (copying a kept subtree counts)
    arrays = tree.take(game, state) if tree is not None else None
    if arrays is None:
        arrays = _tree(nodes)
        arrays[-1][0] = 1  # the root, not yet expanded
    move, by, first, count, visits, wins, proven, estimate, used = arrays
    by[0] = 1 - board.turn
    done = 0
    while proven[0] == UNPROVEN:
        chunk = CHUNK if iterations is None else min(CHUNK, iterations - done)
        done += _search(position, board.ultimate, chunk, exploration, TAKE_BOARD, weight, *arrays)
        if iterations is not None and done >= iterations:
            break
        if deadline is not None and clock() >= deadline:
            break
        if used[0] + 81 * CHUNK > move.shape[0]:  # nearly full: twice the room
            arrays = _grow(arrays)
            move, by, first, count, visits, wins, proven, estimate, used = arrays
    children = range(first[0], first[0] + count[0])  # (the first iteration expands the root)
    best = max(children, key=lambda k: (proven[k] != -1, proven[k] == 1, visits[k]))
    if tree is not None:
        tree.keep(game, state, (arrays, best))
    if proven[best] != UNPROVEN:
        value = float(proven[best])
    else:
        value = 2 * wins[best] / max(1, visits[best]) - 1
    return SearchResult(sign * float(value), divmod(int(move[best]), 9), done)


class Tree(plain.Tree):
    """``ttt.engine.mcts.Tree`` for the compiled search. A kept node is the tree's arrays and an
    index; the node of the opponent's reply comes back as new arrays holding its subtree, the
    reply as node 0 (copied, so that the rest of the old tree is freed)."""

    @staticmethod
    def placed(node: tuple) -> tuple[int, int]:
        arrays, k = node
        return int(arrays[0][k]), int(arrays[1][k])

    @staticmethod
    def child(node: tuple, move: int) -> Optional[tuple]:
        arrays, k = node
        moves, first, count, proven = arrays[0], arrays[2], arrays[3], arrays[6]
        for child in range(first[k], first[k] + count[k]):
            if moves[child] == move:
                if first[child] < 0 and proven[child] != UNPROVEN:
                    return None  # a proven leaf: the game is over or won at once, answered before searching
                return _subtree(arrays, child)
        return None


def _tree(capacity: int) -> tuple:
    """Empty tree arrays with room for `capacity` nodes: move, mover, first child, number of
    children, visits, results, proof, estimate, and the count of nodes in use."""
    return (np.zeros(capacity, np.int8), np.zeros(capacity, np.int8), np.full(capacity, -1, np.int32),
            np.zeros(capacity, np.int8), np.zeros(capacity, np.int32), np.zeros(capacity, np.float64),
            np.full(capacity, UNPROVEN, np.int8), np.full(capacity, 0.5, np.float64), np.zeros(1, np.int64))


def _grow(arrays: tuple) -> tuple:
    """The same tree in arrays twice as long."""
    *fields, used = arrays
    bigger = _tree(2 * fields[0].shape[0])
    for old, new in zip(fields, bigger):
        new[: old.shape[0]] = old
    return (*bigger[:-1], used)
