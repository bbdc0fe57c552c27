"""The checks of lesson 6, the CSC 242 write-up's nine-board game: `line_score`, `evaluate` and
`depth_limited_move`.
"""

from __future__ import annotations

import functools
import time
from typing import Any, Callable, Iterator

from ttt import search
from ttt.games import bigboard, nineboard

from grader.checks.failures import CheckFailed, _big_picture, _fail, _failure, _passed, _show
from grader.checks.reference import _plain
from grader.checks.student import _Student, _stood_in_note, stand_ins, substituted
from grader.checks.display import _guarded


line_score = bigboard.line_score  # the CSC 242 write-up's score of one small board for a player (5 and 10 per line)


@functools.lru_cache(maxsize=None)
def nine_board_positions(games: int = 120, start: int = 3) -> tuple:
    """Return every position of `games` random nine-board games (the start once), in order met: the same
    games on every run, the moves picked by a random generator started from the number `start`."""
    import random

    game = nineboard.NineBoard()
    rng = random.Random(start)
    seen: dict = {game.initial(): None}
    for _ in range(games):
        state = game.initial()
        while not game.is_terminal(state):
            state = game.play(state, rng.choice(list(game.moves(state))))
            seen.setdefault(state, None)
    return tuple(seen)


def _smalls() -> Iterator[str]:
    """Yield all 3**9 fillings of a small board with X, O and '.'."""
    import itertools

    for cells in itertools.product("XO.", repeat=9):
        yield "".join(cells)


def _also(note: str) -> str:
    """Return `note` as a paragraph to add to another ('' for none)."""
    return f"\n\n{note}" if note else ""


def _fail_big(call: str, state: Any, problem: str, *, expected: Any = None, got: Any = None, note: str = "", checked: str = "") -> CheckFailed:
    """Return the CheckFailed for one case on a nine-board state, drawn."""
    return _failure(call, problem, _big_picture(state), expected=expected, got=got, note=note, checked=checked)


@_guarded
def check_line_score(student_line_score: Callable) -> str:
    """Print and return a one-line summary if `line_score(small, player)` equals `line_score` on all 3**9 small boards, for X and O."""
    student = _Student(student_line_score, "line_score")
    count = 0
    checked = "all 19,683 fillings of a small board, for X and for O, are checked"
    student.expect((small, p) for small in _smalls() for p in ("X", "O"))
    for small in _smalls():
        for p in ("X", "O"):
            count += 1
            call = f"line_score({small!r}, {p!r})"
            got = student(small, p, call=call, board=None, checked=checked)
            expected = line_score(small, p)
            if isinstance(got, bool) or not isinstance(got, (int, float)) or got != expected:
                picture = "\n".join("   " + " ".join(small[r : r + 3]) for r in (0, 3, 6))
                raise _fail(call, None, f"wrong score for {p}", expected=repr(expected), got=_show(got),
                            note=f"the small board:\n{picture}\n\nEach of the 8 lines with no {'O' if p == 'X' else 'X'}: 5 for one {p}, 10 for two {p}, 0 for none or three.", checked=checked)
    return _passed("line_score", f"all {count:,} cases")


@_guarded
def check_evaluate(evaluate: Callable) -> str:
    """Print and return a one-line summary if `evaluate(state)` equals the CSC 242 write-up's heuristic (``line_count_evaluate``).

    Checked on every position of 120 random nine-board games, the same on every run. While it runs, the
    student's own ``line_score`` (if it uses one) is replaced by the write-up's (`stand_ins`), so a
    mistake there is not counted twice; a failure says so.
    """
    student = _Student(evaluate, "evaluate")
    namespace = getattr(_plain(evaluate), "__globals__", {})
    positions = nine_board_positions()
    checked = f"{len(positions):,} positions from random games are checked"
    swap = stand_ins(evaluate, "evaluate")
    with substituted(namespace, **swap):
        student.expect((state,) for state in positions)
        for state in positions:
            got = student(state, call="evaluate(state)", board=None, checked=checked)
            expected = bigboard.line_count_evaluate(state)
            if isinstance(got, bool) or not isinstance(got, (int, float)) or got != expected:
                per_board = ", ".join(f"{bigboard.line_count_small(state.small(b)):+d}" for b in range(9))
                raise _fail_big("evaluate(state)", state, "wrong estimate", expected=f"{expected:g}", got=_show(got),
                                note=f"Board by board, X's line score minus O's: {per_board}." + _also(_stood_in_note("evaluate", swap)),
                                checked=checked)
    return _passed("evaluate", f"{len(positions):,} positions")


def _limited_value(state: Any, depth: int) -> float:
    """Return the depth-limited alpha-beta value of `state` with the CSC 242 write-up's heuristic (0: the estimate itself)."""
    game = nineboard.NineBoard()
    if game.is_terminal(state):
        return game.utility(state)
    if depth == 0:
        return bigboard.line_count_evaluate(state)
    return search.depth_limited(game, state, depth=depth, evaluate=bigboard.line_count_evaluate).value


@functools.lru_cache(maxsize=None)
def depth_limited_cases() -> tuple:
    """Return the (state, depth) pairs `check_depth_limited` asks about: 40 positions, depths 1-3."""
    import random

    game = nineboard.NineBoard()
    rng = random.Random(6)
    live = [s for s in nine_board_positions() if not game.is_terminal(s)]
    picked = [game.initial()] + rng.sample(live, 39)
    cases = []
    for k, state in enumerate(picked):
        depths = (1, 2) if state.sent_to is None else (1, 2, 3)
        cases += [(state, d) for d in depths]
    return tuple(cases)


@_guarded
def check_depth_limited(depth_limited_move: Callable) -> str:
    """Print and return a one-line summary if `depth_limited_move(state, depth)` returns a move with the best depth-limited value.

    For each case of `depth_limited_cases`, the move's child, searched one level less deep
    (with the CSC 242 write-up's heuristic at the limit and true utilities where the game ends), must
    have the value of the position searched `depth` deep: any move that achieves it is
    accepted. While it runs, the student's own ``evaluate`` and ``line_score`` (if it uses them) are
    replaced by the write-up's (`stand_ins`), so a mistake there is not counted twice; a failure says so.
    """
    student = _Student(depth_limited_move, "depth_limited_move", kind="depth_limited")
    namespace = getattr(_plain(depth_limited_move), "__globals__", {})
    game = nineboard.NineBoard()
    cases = depth_limited_cases()
    where = f"{len(cases)} moves: {len({state for state, _ in cases})} positions from random games, at depths 1 to 3"
    checked = f"{where} are checked"
    swap = stand_ins(depth_limited_move, "depth_limited_move")
    start = time.perf_counter()
    with substituted(namespace, **swap):
        for state, depth in cases:
            call = f"depth_limited_move(state, {depth})"
            got = student(state, depth, call=call, board=None, checked=checked)
            if got not in game.moves(state):
                raise _fail_big(call, state, "not a legal move", expected=f"a move (board, cell) from {list(game.moves(state))}", got=_show(got),
                                note=_stood_in_note("depth_limited_move", swap), checked=checked)
            target = _limited_value(state, depth)
            value = _limited_value(game.play(state, got), depth - 1)
            if value != target:
                better = [m for m in game.moves(state) if _limited_value(game.play(state, m), depth - 1) == target]
                raise _fail_big(
                    call, state, f"{got} is not the best move looking {depth} move{'s' if depth > 1 else ''} ahead",
                    expected=f"{' or '.join(map(str, better))}, worth {target:g} for X",
                    got=f"{got}, worth {value:g} for X",
                    note="Values are for X: X takes the largest, O the smallest. At the depth limit a position that is not over gets evaluate(state); one that is over keeps game.utility(state)."
                         + _also(_stood_in_note("depth_limited_move", swap)),
                    checked=checked,
                )
    return _passed("depth_limited_move", where, time.perf_counter() - start)


NODE_BUDGET = 400_000  # lesson 6's match: the moves a student's search may make (its game.play calls) in all


def play_depths(depth_limited_move: Callable, *, game: Any, opponent: Callable[[], Callable], depths: tuple = (1, 2, 3, 4),
                games: int = 10, nodes: int = NODE_BUDGET, seconds: float = 10, slow: str = "",
                progress: Callable[[], Any] = lambda: None) -> tuple[dict, int]:
    """Return ({depth: {"wins", "ties", "losses"}}, the moves its search made) for `depth_limited_move` at each
    depth against a fresh `opponent()`, `games` games a depth, taking turns to move first.

    The budget counts work, not time: the moves the search makes while it chooses its moves (its
    calls to `game`'s ``play``) over the whole match. No game starts once `nodes` are spent, so
    every machine, quiet or busy, plays the same games. Each move is stopped after `seconds` of
    CPU time (`legal_only`); `progress` is called after each game. A depth with no game played is
    left out.
    """
    from ttt.play import play_game

    from grader.checks.visible import legal_only

    made, searching = [0], [False]
    play = game.play

    def counted(state: Any, move: Any) -> Any:
        made[0] += searching[0]
        return play(state, move)

    @functools.wraps(depth_limited_move)  # the checks look through it, at the student's own function
    def search_counted(state: Any, depth: int) -> Any:
        searching[0] = True
        try:
            return depth_limited_move(state, depth)
        finally:
            searching[0] = False

    results = {}
    game.play = counted  # on this game object only, while the match runs
    try:
        for depth in depths:
            mine = legal_only(search_counted, game=game, args=(depth,), seconds=seconds, slow=slow)
            theirs = opponent()
            tally = {"wins": 0, "ties": 0, "losses": 0}
            for k in range(games):
                if made[0] >= nodes:
                    break
                mine_is_x = k % 2 == 0
                won = play_game(game, mine, theirs) if mine_is_x else play_game(game, theirs, mine)
                tally["ties" if won is None else "wins" if (won == "X") == mine_is_x else "losses"] += 1
                progress()
            if sum(tally.values()):
                results[depth] = tally
    finally:
        del game.play
    return results, made[0]
