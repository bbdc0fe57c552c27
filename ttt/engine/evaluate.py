"""The big boards' heuristics on the engine's bit masks: estimates for X of a `Board`.

Two heuristics for each game:

- ``game_ultimate`` and ``game_nine_board`` are the games' own ``evaluate``
  (``ttt.games.ultimate.evaluate``, ``ttt.games.nineboard.evaluate``, the ones the lessons read)
  rewritten on masks: the same numbers, computed from precomputed tables instead of strings.
- ``ultimate`` and ``nine_board`` are the engine's: the same ideas, changed where measurement
  against other players said so (see their docstrings for what differs and why).

Everything about one small board is a table look-up by ``mine << 9 | theirs`` (512 x 512
entries; only the 3**9 pairs of disjoint masks are ever read): who has a cell that wins it
(`WIN_CELLS`), its line score (`LINE_SCORE`), its value as a chance (`BOARD_VALUE`).
"""

from __future__ import annotations

from ttt.engine.board import ANY, FULL, LINE_MASKS, O_WON, TIE, WINS, X_WON, Board
from ttt.games.bigboard import WIN_VALUE

NEAR_WIN = WIN_VALUE - 100  # decided by the next move, judged without searching it (as the games do)
CELLS = tuple(tuple(c for c in range(9) if m >> c & 1) for m in range(512))  # mask -> its cells
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
BIG_LINES = tuple((line, *CELLS[line]) for line in LINE_MASKS)  # (mask, a, b, c)
COMPLETES = tuple(  # boards held (mask) -> the boards whose taking would make three in a row
    sum(1 << b for b in range(9) if not held >> b & 1 and WINS[held | 1 << b]) for held in range(512)
)
LINES_THROUGH = tuple(sum(1 for line in LINE_MASKS if line >> b & 1) for b in range(9))  # 3, 2, 3, 2, 4, ...
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
    if board.result:
        return outcome(board)
    if _wins_a_line_now(board):
        return -NEAR_WIN if board.turn else NEAR_WIN
    xs, os = board.xs, board.os
    keys = [xs[b] << 9 | os[b] for b in range(9)]
    score = _ultimate_score([X_CHANCE[k] for k in keys], [O_CHANCE[k] for k in keys], [BOARD_VALUE[k] for k in keys])
    if board.sent_to == ANY:
        score += -FREE_CHOICE if board.turn else FREE_CHOICE
    return max(-NEAR_WIN + 1, min(NEAR_WIN - 1, score))


def _wins_a_line_now(board: Board) -> bool:
    """Return True if the mover can win a board it may play on that completes its big line."""
    mine, theirs, held = (board.os, board.xs, board.o_boards) if board.turn else (board.xs, board.os, board.x_boards)
    for b in CELLS[COMPLETES[held] & _playable(board)]:
        if WIN_CELLS[mine[b] << 9 | theirs[b]]:
            return True
    return False


def _ultimate_score(x: list, o: list, v: list) -> float:
    """Return the big lines' and the boards' score from each board's chances and value.

    `x[b]` is X's chance of taking board b, ``(1 + value) / 2``, and 0 when O holds it or it
    is dead (full without a line); `o[b]` the same for O. A line scores `LINE_WEIGHT` times
    X's chance of all three boards minus O's, so a line O holds a board of (or a dead one)
    gives X nothing: ``ttt.games.ultimate.evaluate``'s skipped lines. Written out line by line
    for speed (this runs at every leaf of the search).
    """
    lines = (
        x[0] * x[1] * x[2] + x[3] * x[4] * x[5] + x[6] * x[7] * x[8]
        + x[0] * x[3] * x[6] + x[1] * x[4] * x[7] + x[2] * x[5] * x[8]
        + x[0] * x[4] * x[8] + x[2] * x[4] * x[6]
        - o[0] * o[1] * o[2] - o[3] * o[4] * o[5] - o[6] * o[7] * o[8]
        - o[0] * o[3] * o[6] - o[1] * o[4] * o[7] - o[2] * o[5] * o[8]
        - o[0] * o[4] * o[8] - o[2] * o[4] * o[6]
    )
    boards = 3 * (v[0] + v[2] + v[6] + v[8]) + 2 * (v[1] + v[3] + v[5] + v[7]) + 4 * v[4]  # lines through each
    return LINE_WEIGHT * lines + BOARD_WEIGHT * boards


def _chance(x: int, o: int, mark: int) -> float:
    """Return X's chance (`mark` 1) or O's (-1) of taking a small board: ``(1 + value) / 2`` for
    its value for that player, and 0 for a board full without a line (dead)."""
    dead = x | o == FULL and not WINS[x] and not WINS[o]
    return 0.0 if dead else (1 + mark * BOARD_VALUE[x << 9 | o]) / 2


X_CHANCE = _table(lambda x, o: _chance(x, o, 1), 0.0)  # x << 9 | o -> X's chance of the board
O_CHANCE = _table(lambda x, o: _chance(x, o, -1), 0.0)  # x << 9 | o -> O's chance of the board


def ultimate(board: Board) -> float:
    """Return the engine's estimate for X of an ultimate position (the default player's).

    It is `game_ultimate` (``ttt.games.ultimate.evaluate`` on masks) and differs from it in one
    way: it knows whose move it is. ``ttt.games.ultimate.evaluate`` counts a cell that wins a
    board the same for both players; but the mover sent to a board where it has such a cell
    takes that board now. So that board counts as nearly won (`TEMPO_VALUE`) before the lines
    are scored.
    """
    if board.result:
        return outcome(board)
    if _wins_a_line_now(board):
        return -NEAR_WIN if board.turn else NEAR_WIN
    xs, os = board.xs, board.os
    keys = [xs[b] << 9 | os[b] for b in range(9)]
    x, o, v = [X_CHANCE[k] for k in keys], [O_CHANCE[k] for k in keys], [BOARD_VALUE[k] for k in keys]
    sign = -1.0 if board.turn else 1.0
    b = board.sent_to
    if b != ANY:
        mine, theirs = (os[b], xs[b]) if board.turn else (xs[b], os[b])
        if WIN_CELLS[mine << 9 | theirs]:
            v[b] = sign * TEMPO_VALUE
            x[b], o[b] = (1 + v[b]) / 2, (1 - v[b]) / 2
    score = _ultimate_score(x, o, v)
    if b == ANY:
        score += sign * FREE_CHOICE_ENGINE
    return max(-NEAR_WIN + 1, min(NEAR_WIN - 1, score))


TEMPO_VALUE = 0.9  # a board the mover is sent to and can win at once: nearly won
FREE_CHOICE_ENGINE = 3.0


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

    The same as `game_nine_board` (``ttt.games.nineboard.evaluate`` on masks): measured against
    the `mcts` player it loses no game, and the search, not the estimate, makes it strong.
    """
    return game_nine_board(board)


def for_rules(rules: str):
    """Return the engine's evaluation for 'ultimate' or 'nine-board'."""
    return ultimate if rules == "ultimate" else nine_board
