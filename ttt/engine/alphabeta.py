"""Fast depth-limited alpha-beta for the big boards, on the engine's `Board`.

The same search as ``ttt.search.depth_limited`` and ``ttt.search.iterative_deepening`` (the
values are the same at the same depth with the same estimate: the tests check it), written for
speed instead of for reading:

- negamax: one function for both players, values from the mover's point of view (X's value
  is the negation when O moves); the position is changed in place by `Board.push` and `pop`;
- a transposition table by a Zobrist hash (a random number for each mark on each square,
  combined by xor as moves are played and taken back), holding each position's value or bound
  and best move. Every move fills a square, so a position is always the same number of moves
  from the root: within one search the table's entries are of the depth being searched, and
  its values are exact alpha-beta values, never deeper ones;
- moves tried in the order most likely to cut off: the table's best move, the killer moves (the
  last two that cut off at the same ply), then a static order: wins of a board, blocks, quiet
  moves, then moves that give the opponent a free choice of board, and last those that send it
  to a board it wins at once;
- principal variation search: after the first move, each move is first searched on a null
  window (is it better than the best so far?), and again on the full window only if it is
  (measured: 10% fewer nodes to the same depth, the same values);
- a mover who can win the game with one move has that value at once (the quickest win is the
  best value there is), without trying the other moves;
- the time budget is CPU time (``time.process_time``), so a busy machine does not make it weaker.

Wins are worth ``WIN_VALUE`` plus the free squares left, as in ``ttt.games.bigboard``.
"""

from __future__ import annotations

import math
import random
import time
from typing import Callable, Optional

from ttt.engine import evaluate as heuristics
from ttt.engine.board import ANY, CELLS, COMPLETES, FULL, TIE, WINS, Board
from ttt.engine.evaluate import WIN_CELLS
from ttt.errors import bad_depth
from ttt.games.bigboard import WIN_VALUE, BigState
from ttt.search import OutOfTime, SearchResult

Evaluate = Callable[[Board], float]  # a Board -> an estimate for X

NULL_WINDOW = 1e-9  # the width of the window that only asks "is this move better than alpha?"
EXACT, LOWER, UPPER = 0, 1, 2  # what a table entry's value is: the value, at least it, at most it
_RANDOM = random.Random(20240229)
ZOBRIST = tuple(tuple(_RANDOM.getrandbits(64) for _ in range(81)) for _turn in range(2))  # [turn][move]
SENT_KEY = tuple(_RANDOM.getrandbits(64) for _ in range(10))  # [sent_to + 1]
CELL_RANK = (1, 3, 1, 3, 0, 3, 1, 3, 1)  # quiet moves: the centre, then corners, then edges
# The static order's ranks, lowest first (a move's rank is its own rank plus its target's):
WIN_BOARD, KILLER, BLOCK, QUIET = 0, 5, 10, 20
FREE_CHOICE, SENDS_TO_THREAT = 40, 60


def _local_ranks(mine: int, theirs: int) -> tuple:
    """Return each cell's own rank on a small board: a win of the board, a block, or quiet."""
    wins, blocks = WIN_CELLS[mine << 9 | theirs], WIN_CELLS[theirs << 9 | mine]
    return tuple(
        WIN_BOARD if wins >> c & 1 else BLOCK if blocks >> c & 1 else QUIET + CELL_RANK[c] for c in range(9)
    )


def _local_rank_table() -> list:
    """Return `_local_ranks` of every small board, indexed by ``mine << 9 | theirs``."""
    table: list = [None] * (1 << 18)
    for mine, theirs in heuristics.PAIRS:
        table[mine << 9 | theirs] = _local_ranks(mine, theirs)
    return table


LOCAL_RANKS = _local_rank_table()  # mine << 9 | theirs -> each cell's own rank


def zobrist(board: Board) -> int:
    """Return the hash of the marks on `board` (without the board the mover is sent to)."""
    h = 0
    for b in range(9):
        for c in CELLS[board.xs[b]]:
            h ^= ZOBRIST[0][9 * b + c]
        for c in CELLS[board.os[b]]:
            h ^= ZOBRIST[1][9 * b + c]
    return h


class Search:
    """One search from one position: the board walked up and down, the table, the counters."""

    def __init__(self, board: Board, evaluate: Evaluate, deadline: Optional[float] = None) -> None:
        self.board = board
        self.evaluate = evaluate
        self.deadline = deadline  # process_time() after which the search stops (None: never)
        self.table: dict[int, tuple] = {}  # hash -> (depth, value, flag, best move)
        self.killers = [[-1, -1] for _ in range(82)]
        self.nodes = 0
        self.cutoffs = 0
        self.reached_limit = False  # did a line stop at the depth limit (not at the game's end)?
        self.partial: Optional[tuple] = None  # (value, move): the best of the root's moves searched so far
        self.ranked = self._ranked_ultimate if board.ultimate else self._ranked_nine_board

    # --- move ordering ----------------------------------------------------------------------

    def _ranked_ultimate(self, ply: int) -> Optional[list]:
        """Return the mover's moves as (rank, move), lowest rank best, or None if one of them
        wins the game at once."""
        board = self.board
        if board.turn:
            mine, theirs, held = board.os, board.xs, board.o_boards
        else:
            mine, theirs, held = board.xs, board.os, board.x_boards
        closed = board.closed
        boards = CELLS[FULL & ~closed] if board.sent_to == ANY else (board.sent_to,)
        completes = COMPLETES[held]
        for b in boards:
            if completes >> b & 1 and WIN_CELLS[mine[b] << 9 | theirs[b]]:
                return None
        target = [
            FREE_CHOICE if closed >> c & 1 else SENDS_TO_THREAT if WIN_CELLS[theirs[c] << 9 | mine[c]] else 0
            for c in range(9)
        ]
        killers = self.killers[ply]
        ranked = []
        for b in boards:
            m, t = mine[b], theirs[b]
            local = LOCAL_RANKS[m << 9 | t]
            after = m | 1 << b  # board b after a move on its own cell b
            if WINS[after] or after | t == FULL:
                target_b = FREE_CHOICE
            else:
                target_b = SENDS_TO_THREAT if WIN_CELLS[t << 9 | after] else 0
            for c in CELLS[FULL & ~(m | t)]:
                move = 9 * b + c
                rank = local[c] + (target_b if c == b else target[c])
                if move in killers and rank > KILLER:
                    rank = KILLER
                ranked.append((rank, move))
        return ranked

    def _ranked_nine_board(self, ply: int) -> Optional[list]:
        """Return the mover's moves as (rank, move), lowest rank best, or None if one of them
        wins the game at once."""
        board = self.board
        mine, theirs = (board.os, board.xs) if board.turn else (board.xs, board.os)
        boards = CELLS[FULL & ~board.closed] if board.sent_to == ANY else (board.sent_to,)
        for b in boards:
            if WIN_CELLS[mine[b] << 9 | theirs[b]]:
                return None
        threats = [WIN_CELLS[theirs[c] << 9 | mine[c]] != 0 for c in range(9)]
        anywhere = SENDS_TO_THREAT if any(threats) else FREE_CHOICE
        killers = self.killers[ply]
        ranked = []
        for b in boards:
            m, t = mine[b], theirs[b]
            local = LOCAL_RANKS[m << 9 | t]
            for c in CELLS[FULL & ~(m | t)]:
                move = 9 * b + c
                mc, tc = (m | 1 << c, t) if c == b else (mine[c], theirs[c])
                if mc | tc == FULL:
                    rank = local[c] + anywhere
                elif (WIN_CELLS[tc << 9 | mc] != 0) if c == b else threats[c]:
                    rank = local[c] + SENDS_TO_THREAT
                else:
                    rank = local[c]
                if move in killers and rank > KILLER:
                    rank = KILLER
                ranked.append((rank, move))
        return ranked

    # --- the search -------------------------------------------------------------------------

    def value(self, depth: int, alpha: float, beta: float, h: int, ply: int) -> float:
        """Return the alpha-beta value of the board for the mover, looking `depth` moves ahead."""
        board = self.board
        self.nodes += 1
        if self.deadline is not None and not self.nodes & 1023 and time.process_time() > self.deadline:
            raise OutOfTime
        if board.result:  # the last move ended the game: a tie, or the mover has lost
            return 0.0 if board.result == TIE else -float(WIN_VALUE + board.free)
        if depth <= 0:
            self.reached_limit = True
            v = self.evaluate(board)
            return -v if board.turn else v
        key = h ^ SENT_KEY[board.sent_to + 1]
        entry = self.table.get(key)
        best_move = -1
        if entry is not None:
            e_depth, e_value, e_flag, best_move = entry
            if e_depth == depth and (
                e_flag == EXACT or (e_value >= beta if e_flag == LOWER else e_value <= alpha)
            ):
                return e_value
        ranked = self.ranked(ply)
        if ranked is None:  # the mover wins with its next move: the quickest win there is
            return float(WIN_VALUE + board.free - 1)
        ranked.sort()
        moves = [move for _, move in ranked]
        if best_move >= 0 and best_move in moves:
            moves.remove(best_move)
            moves.insert(0, best_move)
        if depth == 1:
            best, best_move = self._frontier(moves, alpha, beta, ply)
        else:
            best, best_move = self._children(moves, depth, alpha, beta, h, ply)
        flag = UPPER if best <= alpha else LOWER if best >= beta else EXACT
        self.table[key] = (depth, best, flag, best_move)
        return best

    def _children(self, moves: list, depth: int, alpha: float, beta: float, h: int, ply: int) -> tuple[float, int]:
        """Return (value, best move) of the board by searching `moves` in order, `depth` - 1 deeper."""
        board = self.board
        best, best_move = -math.inf, moves[0]
        zob = ZOBRIST[board.turn]
        push, pop, value = board.push, board.pop, self.value
        first = True
        for move in moves:
            push(move)
            if first:
                v = -value(depth - 1, -beta, -alpha, h ^ zob[move], ply + 1)
                first = False
            else:  # principal variation search: prove the move no better than alpha, on a null window
                v = -value(depth - 1, -alpha - NULL_WINDOW, -alpha, h ^ zob[move], ply + 1)
                if alpha < v < beta:  # it is better: find by how much
                    v = -value(depth - 1, -beta, -alpha, h ^ zob[move], ply + 1)
            pop()
            if v > best:
                best, best_move = v, move
                if v > alpha:
                    alpha = v
                    if v >= beta:
                        self._cut_by(move, ply)
                        break
        return best, best_move

    def _frontier(self, moves: list, alpha: float, beta: float, ply: int) -> tuple[float, int]:
        """Return (value, best move) of a board one move above the depth limit: each child is
        judged by the estimate (or the game's end) here, without a call of `value` each."""
        board = self.board
        evaluate, push, pop = self.evaluate, board.push, board.pop
        x_moves = not board.turn
        best, best_move = -math.inf, moves[0]
        for move in moves:
            push(move)
            self.nodes += 1
            if board.result:  # the mover's move ended the game: a tie, or the mover won
                v = 0.0 if board.result == TIE else float(WIN_VALUE + board.free)
            else:
                self.reached_limit = True
                v = evaluate(board) if x_moves else -evaluate(board)
            pop()
            if v > best:
                best, best_move = v, move
                if v > alpha:
                    alpha = v
                    if v >= beta:
                        self._cut_by(move, ply)
                        break
        return best, best_move

    def _cut_by(self, move: int, ply: int) -> None:
        """Count a cut-off by `move` at `ply`, and keep it as one of the ply's two killer moves."""
        self.cutoffs += 1
        killers = self.killers[ply]
        if killers[0] != move:
            killers[1], killers[0] = killers[0], move

    def root(self, moves: list, depth: int) -> tuple[float, int]:
        """Return (value for the mover, best move) at `depth`, trying `moves` in that order."""
        board = self.board
        h = zobrist(board)
        zob = ZOBRIST[board.turn]
        best, best_move = -math.inf, moves[0]
        self.partial = None
        for move in moves:
            board.push(move)
            v = -self.value(depth - 1, -math.inf, -best, h ^ zob[move], 1)
            board.pop()
            if v > best:
                best, best_move = v, move
            self.partial = (best, best_move)
        return best, best_move


def _root_moves(search: Search, rng: Optional[random.Random]) -> list:
    """Return the root's moves: shuffled by `rng`, then in the static order (stable among equals)."""
    board = search.board
    moves = board.moves()
    if rng is not None:
        rng.shuffle(moves)
    ranked = search.ranked(0)
    if ranked is None:  # a move wins at once: the winning moves first
        return sorted(moves, key=lambda move: not _wins_at_once(board, move))
    rank = {move: r for r, move in ranked}
    return sorted(moves, key=rank.__getitem__)


def _wins_at_once(board: Board, move: int) -> bool:
    """Return True if `move` ends the game with a win for the mover."""
    board.push(move)
    won = board.result not in (0, TIE)
    board.pop()
    return won


def _start(game, state: BigState, evaluate: Optional[Evaluate]) -> tuple[Board, Evaluate]:
    """Return the engine's board of `state` and the evaluation to use (the engine's by default)."""
    board = Board.of(game, state)
    if not board.moves():
        raise ValueError(f"the game is over: there is no move to search in\n{game.format(state)}")
    return board, evaluate or heuristics.for_rules(game.name)


def depth_limited(game, state: BigState, *, depth: int, evaluate: Optional[Evaluate] = None) -> SearchResult:
    """Return alpha-beta's value for X and a best move `(board, cell)` looking `depth` moves ahead.

    The value is the one ``ttt.search.depth_limited`` finds with the same estimate (on the
    game's state rather than a `Board`): the table and the move order only save work.
    """
    if depth < 1:
        raise bad_depth(depth)
    board, evaluate = _start(game, state, evaluate)
    search = Search(board, evaluate)
    value, move = search.root(_root_moves(search, None), depth)
    sign = -1 if board.turn else 1
    return SearchResult(sign * value, divmod(move, 9), search.nodes, search.cutoffs, depth)


def iterative_deepening(
    game,
    state: BigState,
    *,
    seconds: float,
    evaluate: Optional[Evaluate] = None,
    rng: Optional[random.Random] = None,
    max_depth: int = 64,
) -> SearchResult:
    """Return the deepest search that finished within `seconds` of CPU time: value for X, move.

    Searches depth 1, 2, 3, ... on one table (each depth tries the last one's best moves first)
    and keeps the last complete answer, or the move the unfinished depth found better than that
    answer's (its value then is that depth's). Depth 1 always finishes, however small the budget. It
    stops early when the game's end is in sight: a win or loss found, or no line cut short.
    The root's moves are shuffled by `rng` first, so among equally good moves the choice is
    random and matches do not repeat one game.
    """
    start = time.process_time()
    board, evaluate = _start(game, state, evaluate)
    search = Search(board, evaluate)
    moves = _root_moves(search, rng)
    sign = -1 if board.turn else 1
    result = None
    for depth in range(1, max_depth + 1):
        search.deadline = None if result is None else start + seconds
        search.reached_limit = False
        try:
            value, move = search.root(moves, depth)
        except OutOfTime:  # (the board is left mid-line; it is this search's own copy)
            if search.partial is not None and search.partial[1] != result[1]:
                result = (*search.partial, depth - 1)  # a move that beat the last best one at this depth
            break
        result = (value, move, depth)
        moves.remove(move)
        moves.insert(0, move)
        if not search.reached_limit or abs(value) >= WIN_VALUE or time.process_time() > start + seconds:
            break
    assert result is not None
    value, move, depth = result
    return SearchResult(sign * value, divmod(move, 9), search.nodes, search.cutoffs, depth)
