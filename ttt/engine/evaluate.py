"""The big boards' heuristics on the engine's bit masks: estimates for X of a `Board`.

Two heuristics for each game:

- ``game_ultimate`` and ``game_nine_board`` are the games' own ``evaluate``
  (``ttt.games.ultimate.evaluate``, ``ttt.games.nineboard.evaluate``, the ones the lessons read)
  rewritten on masks: the same numbers, computed from precomputed tables instead of strings.
- ``ultimate`` and ``nine_board`` are the engine's (the default player's): the same ideas,
  changed where measurement against other players said so (see their docstrings for what
  differs and why). On ultimate each board's chances come from random filling, worked out
  once for all 3**9 boards, and the board the mover is sent to is judged after its best cell.

Everything about one small board is a table look-up by ``mine << 9 | theirs`` (512 x 512
entries; only the 3**9 pairs of disjoint masks are ever read): who has a cell that wins it
(`WIN_CELLS`), its line score (`LINE_SCORE`), its value as a chance (`BOARD_VALUE`), each
player's chance of it under random filling (`RANDOM_X`, `RANDOM_O`).
"""

from __future__ import annotations

from typing import Optional

from ttt.engine.board import ANY, CELLS, COMPLETES, FULL, LINE_MASKS, O_WON, WINS, X_WON, Board
from ttt.games.bigboard import WIN_VALUE

NEAR_WIN = WIN_VALUE - 100  # decided by the next move, judged without searching it (as the games do)
POPCOUNT = tuple(bin(m).count("1") for m in range(512))
PAIRS = tuple((x, o) for x in range(512) for o in range(512) if not x & o)  # the 3**9 small boards


def _win_cells(mine: int, theirs: int) -> int:
    """Return the mask of free cells where `mine` would complete three in a row."""
    cells = 0
    for line in LINE_MASKS:
        if not line & theirs and POPCOUNT[line & mine] == 2:
            cells |= line & ~mine
    return cells


def _line_score(mine: int, theirs: int, one: int, two: int) -> int:
    """Return `mine`'s open-line score: `one` for a line with one of its marks, `two` with two,
    over the lines holding none of `theirs` (a full line scores nothing)."""
    return sum((0, one, two, 0)[POPCOUNT[line & mine]] for line in LINE_MASKS if not line & theirs)


def _table(function, default=0) -> list:
    """Return ``function(mine, theirs)`` for every small board, indexed by ``mine << 9 | theirs``."""
    table = [default] * (1 << 18)
    for mine, theirs in PAIRS:
        table[mine << 9 | theirs] = function(mine, theirs)
    return table


WIN_CELLS = _table(_win_cells)  # mine << 9 | theirs -> cells where `mine` completes a line
LINE_SCORE = _table(lambda x, o: _line_score(x, o, 1, 6) - _line_score(o, x, 1, 6))  # x << 9 | o -> X's minus O's (1, 6)


def _board_value(x: int, o: int) -> float:
    """Return ``ttt.games.ultimate.board_value`` of one small board: from -1 (O's) to 1 (X's)."""
    if WINS[x]:
        return 1.0
    if WINS[o]:
        return -1.0
    if x | o == FULL:
        return 0.0
    v = LINE_SCORE[x << 9 | o] / 24.0
    v += 0.25 * (bool(WIN_CELLS[x << 9 | o]) - bool(WIN_CELLS[o << 9 | x]))
    return max(-0.8, min(0.8, v))


BOARD_VALUE = _table(_board_value, 0.0)  # x << 9 | o -> the board's value for X, -1 to 1
LINE_WEIGHT, BOARD_WEIGHT, FREE_CHOICE = 60.0, 8.0, 3.0  # ttt.games.ultimate's weights


def outcome(board: Board) -> float:
    """Return the value for X of a finished game: WIN_VALUE plus the free squares for a win, 0 a tie."""
    result = board.result
    if result == X_WON:
        return float(WIN_VALUE + board.free)
    if result == O_WON:
        return float(-WIN_VALUE - board.free)
    return 0.0


def _playable(board: Board) -> int:
    """Return the mask of the boards the mover may play on."""
    return FULL & ~board.closed if board.sent_to == ANY else 1 << board.sent_to


# --- ultimate -------------------------------------------------------------------------------


def game_ultimate(board: Board) -> float:
    """Return ``ttt.games.ultimate.evaluate`` of the position, computed on masks.

    The big board's lines, each weighted by how likely each player is to take its three boards;
    each board's own value weighted by the lines through it; 3 for a free choice of board;
    ±``NEAR_WIN`` when the mover wins the game by winning a board it may play on.
    """
    decided = _decided_ultimate(board)
    if decided is not None:
        return decided
    keys = _keys(board)
    score = ultimate_score([X_CHANCE[k] for k in keys], [O_CHANCE[k] for k in keys])
    if board.sent_to == ANY:
        score += -FREE_CHOICE if board.turn else FREE_CHOICE
    return max(-NEAR_WIN + 1, min(NEAR_WIN - 1, score))


def _decided_ultimate(board: Board) -> Optional[float]:
    """Return the value for X of an ultimate position its heuristics need not estimate: the game
    is over (`outcome`), or the mover wins it with one move (±``NEAR_WIN``); else None."""
    if board.result:
        return outcome(board)
    if _wins_a_line_now(board):
        return -NEAR_WIN if board.turn else NEAR_WIN
    return None


def _keys(board: Board) -> list[int]:
    """Return each small board's key in the tables: X's mask << 9 | O's mask."""
    return [x << 9 | o for x, o in zip(board.xs, board.os)]


def _wins_a_line_now(board: Board) -> bool:
    """Return True if the mover can win a board it may play on that completes its big line."""
    mine, theirs, held = (board.os, board.xs, board.o_boards) if board.turn else (board.xs, board.os, board.x_boards)
    for b in CELLS[COMPLETES[held] & _playable(board)]:
        if WIN_CELLS[mine[b] << 9 | theirs[b]]:
            return True
    return False


def ultimate_score(x: list, o: list) -> float:
    """Return the big lines' and the boards' score from each board's chances.

    `x[b]` is X's chance of taking board b, ``(1 + value) / 2``, and 0 when O holds it or it
    is dead (full without a line); `o[b]` the same for O. A line scores `LINE_WEIGHT` times
    X's chance of all three boards minus O's, so a line O holds a board of (or a dead one)
    gives X nothing: ``ttt.games.ultimate.evaluate``'s skipped lines. A board's value is X's
    chance minus O's (the game's `board_value`, 0 for a dead board), times `BOARD_WEIGHT` for
    each big line through it. Written out line by line for speed (this runs at every leaf), and
    on plain numbers, so that ``ttt.engine.compiled`` compiles this same function.
    """
    lines = (
        x[0] * x[1] * x[2] + x[3] * x[4] * x[5] + x[6] * x[7] * x[8]
        + x[0] * x[3] * x[6] + x[1] * x[4] * x[7] + x[2] * x[5] * x[8]
        + x[0] * x[4] * x[8] + x[2] * x[4] * x[6]
        - o[0] * o[1] * o[2] - o[3] * o[4] * o[5] - o[6] * o[7] * o[8]
        - o[0] * o[3] * o[6] - o[1] * o[4] * o[7] - o[2] * o[5] * o[8]
        - o[0] * o[4] * o[8] - o[2] * o[4] * o[6]
    )
    boards = (  # each board's value, times the lines through it
        3 * (x[0] + x[2] + x[6] + x[8] - o[0] - o[2] - o[6] - o[8])
        + 2 * (x[1] + x[3] + x[5] + x[7] - o[1] - o[3] - o[5] - o[7])
        + 4 * (x[4] - o[4])
    )
    return LINE_WEIGHT * lines + BOARD_WEIGHT * boards


def _chance(x: int, o: int, mark: int) -> float:
    """Return X's chance (`mark` 1) or O's (-1) of taking a small board: ``(1 + value) / 2`` for
    its value for that player, and 0 for a board full without a line (dead)."""
    dead = x | o == FULL and not WINS[x] and not WINS[o]
    return 0.0 if dead else (1 + mark * BOARD_VALUE[x << 9 | o]) / 2


X_CHANCE = _table(lambda x, o: _chance(x, o, 1), 0.0)  # x << 9 | o -> X's chance of the board
O_CHANCE = _table(lambda x, o: _chance(x, o, -1), 0.0)  # x << 9 | o -> O's chance of the board


# --- ultimate: each board's chances under random filling ------------------------------------


def _random_fill(x: int, o: int, memo: dict) -> tuple:
    """Return (X's chance, O's chance) of taking a small board whose free cells are filled one
    at a time, each cell in random order and by X or O with even odds (0, 0 when it fills up
    without a line). It stands for play on that board when no one knows yet who will be sent
    there: a board with two ways to win counts more than one with a single threat."""
    key = x << 9 | o
    if key not in memo:
        if WINS[x]:
            memo[key] = (1.0, 0.0)
        elif WINS[o]:
            memo[key] = (0.0, 1.0)
        elif x | o == FULL:
            memo[key] = (0.0, 0.0)
        else:
            cells = CELLS[FULL & ~(x | o)]
            px = po = 0.0
            for c in cells:
                for after in (_random_fill(x | 1 << c, o, memo), _random_fill(x, o | 1 << c, memo)):
                    px, po = px + after[0], po + after[1]
            memo[key] = (px / (2 * len(cells)), po / (2 * len(cells)))
    return memo[key]


def _chance_tables() -> tuple:
    """Return the tables, by ``x << 9 | o``, of X's and O's chances of each board (`_random_fill`),
    and of the chances after X's best cell there and after O's best cell there."""
    memo: dict = {}
    for x, o in PAIRS:
        _random_fill(x, o, memo)
    rx, ro, xx, xo, ox, oo = ([0.0] * (1 << 18) for _ in range(6))
    for x, o in PAIRS:
        k = x << 9 | o
        rx[k], ro[k] = memo[k]
        free = CELLS[FULL & ~(x | o)]
        if WINS[x] or WINS[o] or not free:
            xx[k], xo[k], ox[k], oo[k] = rx[k], ro[k], rx[k], ro[k]
            continue
        xx[k], xo[k] = max((memo[(x | 1 << c) << 9 | o] for c in free), key=lambda p: p[0] - p[1])
        ox[k], oo[k] = max((memo[x << 9 | o | 1 << c] for c in free), key=lambda p: p[1] - p[0])
    return rx, ro, xx, xo, ox, oo


RANDOM_X, RANDOM_O, AFTER_X_X, AFTER_X_O, AFTER_O_X, AFTER_O_O = _chance_tables()


def ultimate(board: Board) -> float:
    """Return the engine's estimate for X of an ultimate position (the default player's).

    The shape of ``ttt.games.ultimate.evaluate`` (`game_ultimate`): each big line scores X's
    chance of taking its three boards minus O's, times 60; each board its value (X's chance
    minus O's) times 8 for each big line through it; 3 for a free choice of board; ±``NEAR_WIN``
    when the mover wins a board that completes its line. It differs in the chances:

    - a board's chances are those of random filling (`_random_fill`), worked out exactly for
      each of the 3**9 boards, where the game's are its open lines and whether each player has
      a cell that wins it, capped at ±0.8. Random filling tells two ways to win from one, a
      threat the other player can block from one it cannot, and a board that will fill up
      without a line (chances near 0 for both, so it weighs little in its lines);
    - it knows whose move it is: the mover plays on the board it is sent to, so that board is
      judged after the mover's best cell there (by the same chances). The game's heuristic
      counts a cell that wins a board the same for both players.

    Why: measured against OpenSpiel's MCTS at 0.2 CPU s a move (20 games each, alternating
    sides), the engine's search scored 0.625 with the game's heuristic and the board it is sent
    to counted nearly won when the mover has a winning cell there, and 0.725 with this one.
    """
    decided = _decided_ultimate(board)
    if decided is not None:
        return decided
    keys = _keys(board)
    x, o = [RANDOM_X[k] for k in keys], [RANDOM_O[k] for k in keys]
    b = board.sent_to
    if b != ANY:
        k = keys[b]
        x[b], o[b] = (AFTER_O_X[k], AFTER_O_O[k]) if board.turn else (AFTER_X_X[k], AFTER_X_O[k])
    score = ultimate_score(x, o)
    if b == ANY:
        score += -FREE_CHOICE if board.turn else FREE_CHOICE
    return max(-NEAR_WIN + 1, min(NEAR_WIN - 1, score))


# --- nine-board -------------------------------------------------------------------------------

POISON = 4  # ttt.games.nineboard's weight of a square poisoned for the opponent


def game_nine_board(board: Board) -> float:
    """Return ``ttt.games.nineboard.evaluate`` of the position, computed on masks.

    ±``NEAR_WIN`` when the mover can win at once, or (one less) when every square the mover
    may take sends the opponent to a board the opponent wins; otherwise the boards' open-line
    scores plus 4 for each free square whose number is a board the other player threatens.
    """
    if board.result:
        return outcome(board)
    xs, os = board.xs, board.os
    x_threat = [WIN_CELLS[xs[b] << 9 | os[b]] != 0 for b in range(9)]
    o_threat = [WIN_CELLS[os[b] << 9 | xs[b]] != 0 for b in range(9)]
    sign = -1 if board.turn else 1
    mine, theirs = (o_threat, x_threat) if board.turn else (x_threat, o_threat)
    playable = CELLS[_playable(board)]
    if any(mine[b] for b in playable):
        return sign * NEAR_WIN
    if not _has_safe_move(xs, os, playable, theirs):
        return -sign * (NEAR_WIN - 1)
    score = 0
    for c in range(9):
        if x_threat[c] or o_threat[c]:
            free_c = sum(not (xs[b] | os[b]) >> c & 1 for b in range(9))
            score += POISON * free_c * (x_threat[c] - o_threat[c])
    score += sum(LINE_SCORE[xs[b] << 9 | os[b]] for b in range(9))
    return float(max(-NEAR_WIN + 2, min(NEAR_WIN - 2, score)))


def _has_safe_move(xs: list, os: list, playable: tuple, theirs: list) -> bool:
    """Return True if some move does not send the opponent to a board the opponent wins at once
    (as the game's `evaluate` judges it: the opponent's threats as they are before the move)."""
    they_win_anywhere = any(theirs)
    for b in playable:
        for c in CELLS[FULL & ~(xs[b] | os[b])]:
            free_after = POPCOUNT[FULL & ~(xs[c] | os[c])] - (c == b)
            if not (they_win_anywhere if free_after == 0 else theirs[c]):
                return True
    return False


def nine_board(board: Board) -> float:
    """Return the engine's estimate for X of a nine-board position (the default player's).

    The same as `game_nine_board` (``ttt.games.nineboard.evaluate`` on masks): the deeper
    search, not a new estimate, is what makes the default player stronger here. Measured at 0.5
    CPU s a move, alternating sides: against the teaching MCTS (``ttt.search.mcts``) it won 6
    games of 6; against the engine's MCTS (``ttt.engine.mcts``) 6 of 10, losing 4 as O, where
    the teaching search with the same estimate won 4 of 10.
    """
    return game_nine_board(board)


def for_rules(rules: str):
    """Return the engine's evaluation for 'ultimate' or 'nine-board'."""
    return ultimate if rules == "ultimate" else nine_board
