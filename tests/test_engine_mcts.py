"""The engine's Monte Carlo tree search: legal moves, counted simulations, wins taken, losses
avoided, forced wins proven; and the `mcts` player on either engine.

Positions come from seeded random games and are judged by the readable rules (``game.play``,
``game.winner``), never by the engine's own board.
"""

from __future__ import annotations

import functools
import math
import random
import subprocess
import sys

import pytest

from big_positions import X_TO_WIN_THE_GAME, random_positions
from ttt import agents
from ttt.engine.board import O_WON, TIE, X_WON, Board
from ttt.engine import compiled, evaluate
from ttt.engine.mcts import Tree, mcts, playout
from ttt.games import get_game

GAMES = ("ultimate", "nine-board")
NO_NUMBA = pytest.mark.numba  # fails, saying why, where the fast extra is missing (tests/conftest.py)


@pytest.fixture(scope="module", params=["plain", "compiled", "compiled with estimates"])
def search(request):
    """The search under test: the plain-Python one, and the compiled one (the fast extra),
    compiled once here so that no test's budget pays for it, without and with the heuristic's
    estimates backed up (the default player's; nine-board has none, so there it is the same)."""
    if request.param == "plain":
        return mcts
    if not compiled.AVAILABLE:  # fails, saying why, where the fast extra is missing
        pytest.fail(f"the fast extra (numba) is not installed: {compiled.INSTALL_HINT}", pytrace=False)
    compiled.warm_up()
    if request.param == "compiled":
        return compiled.mcts
    return functools.partial(compiled.mcts, heuristic=compiled.HEURISTIC)



def _random_positions(game, rng: random.Random, count: int, *, keep=lambda game, state: True) -> list:
    """Return `count` positions of seeded random games (not over, 4 to 59 moves in) that `keep` accepts."""
    return random_positions(game, rng, count, fewest=4, keep=keep)


def _wins_at_once(game, state, move) -> bool:
    return game.winner(game.play(state, move)) == game.to_move(state)


def _has_a_win_at_once(game, state) -> bool:
    return any(_wins_at_once(game, state, m) for m in game.moves(state))


def _hands_over_a_win(game, state, move) -> bool:
    """After `move` the game goes on and the opponent can win it at once."""
    after = game.play(state, move)
    return not game.is_terminal(after) and _has_a_win_at_once(game, after)


def _forces_a_win(game, state, move) -> bool:
    """After `move` the game goes on, and after every reply the mover can win at once."""
    after = game.play(state, move)
    if game.is_terminal(after):
        return False
    for reply in game.moves(after):
        then = game.play(after, reply)
        if game.is_terminal(then) or not _has_a_win_at_once(game, then):
            return False
    return True


def _x_value(game, state) -> int:
    """1 if X is to move, -1 if O is: a win for the mover, as X's value."""
    return 1 if game.to_move(state) == "X" else -1


# --- the search's contract ----------------------------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
def test_moves_are_legal_values_in_range_and_simulations_counted(name, search):
    game = get_game(name)
    positions = [game.initial()] + _random_positions(
        game, random.Random(3), 30, keep=lambda g, s: not _has_a_win_at_once(g, s)
    )
    for state in positions:
        result = search(game, state, rng=random.Random(0), iterations=50)
        assert result.move is not None and None not in result.move
        game.play(state, result.move)  # raises InvalidActionError if the move is illegal
        assert -1 <= result.value <= 1
        assert result.nodes == 50 or (result.nodes < 50 and result.value in (-1, 0, 1))  # fewer only once proven
    assert search(game, game.initial(), rng=random.Random(0), iterations=300).nodes == 300


@pytest.mark.parametrize("name", GAMES)
def test_the_same_seed_and_iterations_give_the_same_search(name, search):
    game = get_game(name)
    for state in [game.initial()] + _random_positions(game, random.Random(8), 3):
        first = search(game, state, rng=random.Random(7), iterations=400)
        assert search(game, state, rng=random.Random(7), iterations=400) == first


def test_a_budget_of_cpu_seconds_is_kept(search):
    import time

    game = get_game("ultimate")
    start = time.process_time()
    result = search(game, game.initial(), rng=random.Random(0), seconds=0.2)
    spent = time.process_time() - start
    assert 0.2 <= spent < 0.5 and result.nodes > 100


def test_a_budget_is_needed_and_a_finished_game_has_no_move(search):
    game = get_game("nine-board")
    with pytest.raises(ValueError, match="give mcts a budget"):
        search(game, game.initial(), rng=random.Random(0))
    state = _random_positions(game, random.Random(6), 1, keep=_has_a_win_at_once)[0]
    over = next(game.play(state, m) for m in game.moves(state) if _wins_at_once(game, state, m))
    result = search(game, over, rng=random.Random(0), iterations=10)
    assert result.move is None and result.nodes == 0 and result.value == game.utility(over)


# --- the playouts ------------------------------------------------------------------------------


def _plain_playout(game, state, rng):
    played: list = []
    return playout(Board.of(game, state), rng.random, played), played


def _compiled_playout(game, state, rng):
    return compiled.playout(game, state, rng.getrandbits(32))


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("run", [_plain_playout, pytest.param(_compiled_playout, marks=NO_NUMBA)])
def test_a_playout_plays_legal_moves_to_the_result_it_reports(name, run):
    """Every move of 1,000 playouts is replayed through the rules. A tie is a game over without
    a winner; a win is the game won, or (a decisive move) the game going on with the winner to
    move and able to win at once."""
    game = get_game(name)
    rng = random.Random(f"playouts-{name}")
    positions = [game.initial()] * 200 + _random_positions(game, rng, 800)
    decisive = 0
    for state in positions:
        result, played = run(game, state, rng)
        for move in played:
            state = game.play(state, divmod(move, 9))  # raises InvalidActionError if the move is illegal
        if result == TIE:
            assert game.is_terminal(state) and game.winner(state) is None, game.format(state)
        elif game.is_terminal(state):
            assert game.winner(state) == {X_WON: "X", O_WON: "O"}[result], game.format(state)
        else:
            assert game.to_move(state) == {X_WON: "X", O_WON: "O"}[result], game.format(state)
            assert _has_a_win_at_once(game, state), game.format(state)
            decisive += 1
    assert decisive > len(positions) // 2  # most playouts end at a decisive move


# --- wins and losses ------------------------------------------------------------------------------


def test_the_win_of_the_game_is_taken_on_ultimate(search):
    game = get_game("ultimate")
    result = search(game, game.parse(X_TO_WIN_THE_GAME, board=2), rng=random.Random(1), iterations=100)
    assert result.move == (2, 2) and result.value == 1


@pytest.mark.parametrize("name", GAMES)
def test_a_win_at_once_is_taken(name, search):
    game = get_game(name)
    for state in _random_positions(game, random.Random(4), 40, keep=_has_a_win_at_once):
        result = search(game, state, rng=random.Random(0), iterations=200)
        assert _wins_at_once(game, state, result.move), game.format_numbered(state)
        assert result.value == _x_value(game, state)


def _one_defence(game, state) -> bool:
    """No win at once, and every move but one hands the opponent a win at once."""
    moves = game.moves(state)
    losing = [m for m in moves if _hands_over_a_win(game, state, m)]
    return not _has_a_win_at_once(game, state) and len(moves) > 2 and len(losing) == len(moves) - 1


@pytest.mark.parametrize("name", GAMES)
def test_the_only_defence_against_a_loss_at_once_is_found(name, search):
    game = get_game(name)
    for state in _random_positions(game, random.Random(5), 10, keep=_one_defence):
        result = search(game, state, rng=random.Random(0), iterations=400)
        assert not _hands_over_a_win(game, state, result.move), game.format_numbered(state)


def _a_loss_to_avoid(game, state) -> bool:
    """Some moves hand the opponent a win at once, some do not, and none wins at once."""
    moves = game.moves(state)
    losing = [m for m in moves if _hands_over_a_win(game, state, m)]
    return not _has_a_win_at_once(game, state) and 0 < len(losing) < len(moves)


@pytest.mark.parametrize("name", GAMES)
def test_a_move_that_hands_the_opponent_a_win_at_once_is_avoided(name, search):
    game = get_game(name)
    for state in _random_positions(game, random.Random(5), 15, keep=_a_loss_to_avoid):
        result = search(game, state, rng=random.Random(0), iterations=1000)
        proven_lost = result.value == -_x_value(game, state)  # then every move loses, soon or at once
        assert proven_lost or not _hands_over_a_win(game, state, result.move), game.format_numbered(state)


def _a_forced_win_in_three(game, state) -> bool:
    """No win at once, few moves, and some (not all) of them force a win on the next move."""
    moves = game.moves(state)
    if len(moves) > 9 or _has_a_win_at_once(game, state):
        return False
    forcing = [m for m in moves if _forces_a_win(game, state, m)]
    return 0 < len(forcing) < len(moves)


@pytest.mark.parametrize("name", GAMES)
def test_the_solver_proves_a_forced_win(name, search):
    """The mover plays, every reply leaves a win at once: the search proves it (value exactly
    +-1 for the mover, a forcing move) and stops before its budget is spent."""
    game = get_game(name)
    for state in _random_positions(game, random.Random(11), 3, keep=_a_forced_win_in_three):
        result = search(game, state, rng=random.Random(0), iterations=20_000)
        assert _forces_a_win(game, state, result.move), game.format_numbered(state)
        assert result.value == _x_value(game, state) and result.nodes < 20_000


def test_a_forced_loss_is_proven_and_a_move_still_returned(search):
    """Every move hands the opponent a win at once: the value is a proven loss, the move legal."""
    game = get_game("ultimate")
    keep = lambda g, s: not _has_a_win_at_once(g, s) and all(_hands_over_a_win(g, s, m) for m in g.moves(s))
    for state in _random_positions(game, random.Random(12), 3, keep=keep):
        result = search(game, state, rng=random.Random(0), iterations=5_000)
        game.play(state, result.move)
        assert result.value == -_x_value(game, state) and result.nodes < 5_000


def test_importing_the_compiled_search_builds_nothing_until_a_search_runs():
    """``ttt players`` and making a player import ``ttt.engine.compiled``: neither numba nor the
    evaluation's tables (a fifth of a second to build) are loaded then, only by the first search."""
    code = ("import sys, ttt.engine.compiled; "
            "print(sorted(m for m in ('numba', 'ttt.engine.evaluate') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


# --- the heuristic's estimates (the compiled search, ultimate) ---------------------------------------


@NO_NUMBA
def test_the_compiled_estimate_is_the_engines_evaluation():
    """`_estimate` on arrays gives ``ttt.engine.evaluate.ultimate``'s number (before its clipping,
    which these positions never reach) in every position of 150 random games the mover cannot
    win at once."""
    game = get_game("ultimate")
    compiled.warm_up()
    scratch, rng, checked = compiled.np.empty(18), random.Random(30), 0
    for _ in range(150):
        state = game.initial()
        while not game.is_terminal(state):
            board = Board.of(game, state)
            position = compiled._position(board)
            if compiled._winning_move(position, True) < 0:
                assert compiled._estimate(position, scratch) == pytest.approx(evaluate.ultimate(board), abs=1e-9), \
                    game.format_numbered(state)
                checked += 1
            state = game.play(state, rng.choice(game.moves(state)))
    assert checked > 5_000


@NO_NUMBA
def test_every_estimate_is_backed_up_as_a_minimax_value():
    """After searches from ten positions, each expanded node's estimate is 1 minus the best of its
    children's (a proven child counting 1, 1/2 or 0); and after one iteration, when the root's
    children are just made, each has the judged chance of its move: 0 when the opponent can
    then win at once."""
    game = get_game("ultimate")
    checked, judged, losing = 0, 0, 0
    for state in [game.initial()] + _random_positions(game, random.Random(31), 9, keep=lambda g, s: not _has_a_win_at_once(g, s)):
        tree = compiled.Tree()
        compiled.mcts(game, state, rng=random.Random(0), iterations=30_000, tree=tree, heuristic=compiled.HEURISTIC)
        arrays, _ = tree._node
        moves, _, firsts, counts, _, _, proven, estimates, used = arrays
        expanded = [k for k in range(int(used[0])) if firsts[k] >= 0]
        checked += len(expanded)
        for k in expanded:
            children = range(firsts[k], firsts[k] + counts[k])
            known = [compiled._known(estimates, proven, c) for c in children]
            assert estimates[k] == pytest.approx(1 - max(known)), game.format_numbered(state)
        tree = compiled.Tree()  # (after 30,000 iterations nearly every root child is expanded)
        compiled.mcts(game, state, rng=random.Random(0), iterations=1, tree=tree, heuristic=compiled.HEURISTIC)
        arrays, _ = tree._node
        moves, _, firsts, counts, _, _, _, estimates, _ = arrays
        root = Board.of(game, state)
        for c in range(firsts[0], firsts[0] + counts[0]):
            after = game.play(state, divmod(int(moves[c]), 9))
            if not game.is_terminal(after) and _has_a_win_at_once(game, after):
                assert estimates[c] == 0.0
                losing += 1
            elif not game.is_terminal(after):
                chance = 1 / (1 + math.exp(-evaluate.ultimate(Board.of(game, after)) / compiled.ESTIMATE_SCALE))
                assert estimates[c] == pytest.approx(chance if root.turn == 0 else 1 - chance)
                judged += 1
    assert checked > 10_000 and judged > 30 and losing > 5


# --- the tree kept from move to move -------------------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
def test_the_next_search_starts_from_the_node_of_the_opponents_reply(name):
    game = get_game(name)
    state = random_positions(game, random.Random(21), 1, fewest=10, most=20,
                             keep=lambda g, s: not _has_a_win_at_once(g, s))[0]
    tree = Tree()
    first = mcts(game, state, rng=random.Random(0), iterations=3000, tree=tree)
    after = game.play(state, first.move)
    kept = tree._node
    assert kept is not None and kept.move == 9 * first.move[0] + first.move[1]
    reply = max(kept.children, key=lambda c: c.visits)  # the reply the search looked at most
    then = game.play(after, divmod(reply.move, 9))
    assert tree.take(game, then) is reply and reply.visits > 1
    tree.keep(game, state, kept)
    second = mcts(game, then, rng=random.Random(0), iterations=500, tree=tree)
    game.play(then, second.move)
    assert second.nodes == 500 and reply.visits >= 500  # the new simulations were added to the kept ones


@NO_NUMBA
@pytest.mark.parametrize("name", GAMES)
def test_the_compiled_search_starts_from_a_copy_of_the_replys_subtree(name):
    game = get_game(name)
    state = random_positions(game, random.Random(21), 1, fewest=10, most=20,
                             keep=lambda g, s: not _has_a_win_at_once(g, s))[0]
    tree = compiled.Tree()
    first = compiled.mcts(game, state, rng=random.Random(0), iterations=20_000, tree=tree,
                          heuristic=compiled.HEURISTIC)
    arrays, kept = tree._node
    moves, _, firsts, counts, visits, _, proven, *_ = arrays
    assert moves[kept] == 9 * first.move[0] + first.move[1]

    def below(arrays, node, depth=2):  # moves and visits of a node and its descendants, two deep
        moves, _, firsts, counts, visits, _, _, estimates, _ = arrays
        children = range(firsts[node], firsts[node] + counts[node]) if depth else ()
        return (int(moves[node]), int(visits[node]), float(estimates[node]),
                sorted(below(arrays, c, depth - 1) for c in children))

    reply = max(range(firsts[kept], firsts[kept] + counts[kept]), key=lambda c: visits[c])
    assert visits[reply] > 1 and proven[reply] == compiled.UNPROVEN
    then = game.play(game.play(state, first.move), divmod(int(moves[reply]), 9))
    copy = tree.take(game, then)
    assert below(copy, 0) == below(arrays, reply)
    assert tree.take(game, then) is None  # forgotten once taken
    tree.keep(game, state, (arrays, kept))
    second = compiled.mcts(game, then, rng=random.Random(0), iterations=500, tree=tree,
                           heuristic=compiled.HEURISTIC)
    game.play(then, second.move)
    grown, _ = tree._node
    assert second.nodes == 500 and grown[4][0] == visits[reply] + 500  # the new simulations were added to the kept ones


ENGINE_TREES = ["plain", pytest.param("compiled", marks=NO_NUMBA)]


def _engine(name: str) -> tuple:
    """The `mcts` function and the `Tree` class of engine `name`."""
    return (mcts, Tree) if name == "plain" else (compiled.mcts, compiled.Tree)


@pytest.mark.parametrize("engine", ENGINE_TREES)
def test_a_position_that_is_not_one_move_on_starts_afresh(engine):
    """The same game from the opening, the position before the opponent moved, two moves on,
    and the other big-board game: `take` finds nothing, and forgets the kept tree."""
    mcts, Tree = _engine(engine)
    game, nine = get_game("ultimate"), get_game("nine-board")
    opening = game.initial()
    probe = Tree()
    chosen = mcts(game, opening, rng=random.Random(0), iterations=5000, tree=probe)
    kept = probe._node
    after = game.play(opening, chosen.move)
    reply = game.moves(after)[0]
    one_on = game.play(after, reply)
    two_on = game.play(one_on, game.moves(one_on)[0])
    for game_now, elsewhere in ((game, opening), (game, after), (game, two_on), (nine, nine.play(nine.initial(), reply))):
        tree = Tree()
        tree.keep(game, opening, kept)
        assert tree.take(game_now, elsewhere) is None
        assert tree.take(game, one_on) is None  # forgotten
    tree.keep(game, opening, kept)
    assert tree.take(game, one_on) is not None


@pytest.mark.parametrize("engine", ENGINE_TREES)
def test_the_mcts_player_keeps_its_tree_through_a_game(engine, monkeypatch):
    """A whole game of the player against random moves: every move legal, the tree reused."""
    _, Tree = _engine(engine)
    game = get_game("ultimate")
    rng = random.Random(4)
    play = agents.make("mcts", 3, game="ultimate", engine=engine, iterations=400)
    state, taken = game.initial(), []
    take = Tree.take

    def spy(self, g, s):
        node = take(self, g, s)
        taken.append(node is not None)
        return node

    monkeypatch.setattr(Tree, "take", spy)
    while not game.is_terminal(state):
        state = game.play(state, play(state) if game.to_move(state) == "X" else rng.choice(game.moves(state)))
    assert len(taken) > 10 and sum(taken) >= len(taken) // 2  # the random reply was in the tree at least half the time


# --- the player ---------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["fast", pytest.param("compiled", marks=NO_NUMBA), "plain", "teaching"])
def test_the_mcts_player_runs_on_every_engine(engine):
    game = get_game("ultimate")
    play = agents.make("mcts", 1, game="ultimate", engine=engine, iterations=30)
    game.play(game.initial(), play(game.initial()))
    assert agents.make("mcts", 0, game="ultimate", engine=engine, iterations=200)(
        game.parse(X_TO_WIN_THE_GAME, board=2)
    ) == (2, 2)


def test_an_unknown_engine_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="unknown engine 'turbo': choose one of 'fast', 'compiled', 'plain', 'teaching'"):
        agents.make("mcts", 1, game="ultimate", engine="turbo")
