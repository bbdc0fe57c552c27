"""ttt.search: minimax and alpha-beta on every reachable 3x3 position, with pinned node counts."""

from __future__ import annotations

import math

import pytest

import oracle
from ttt import search
from ttt.games.classic import TicTacToe, parse_board
from ttt.search import Cutoff, Enter, Exit, Leaf
from ttt.trace import Recorder

GAME = TicTacToe()


def test_node_counts_from_the_empty_board_are_pinned():
    empty = GAME.initial()
    full = search.minimax(GAME, empty)
    assert (full.value, full.nodes, full.cutoffs) == (0, 549_946, 0)
    row_major = search.alphabeta(GAME, empty)
    assert (row_major.value, row_major.nodes, row_major.cutoffs) == (0, 18_297, 4_237)
    ordered = search.alphabeta(GAME, empty, order=GAME.order_moves)
    assert (ordered.value, ordered.nodes, ordered.cutoffs) == (0, 2_096, 925)
    assert ordered.move == 4


def test_minimax_and_alphabeta_on_every_reachable_position():
    """Minimax visits the whole tree and finds the oracle's value; alpha-beta agrees with fewer nodes."""
    for cells in oracle.all_positions():
        board = oracle.to_text(cells)
        expected = oracle.game_value(cells)
        full = search.minimax(GAME, board)
        assert (full.value, full.nodes) == (expected, oracle.tree_size(cells)), board
        for order in (None, GAME.order_moves):
            pruned = search.alphabeta(GAME, board, order=order)
            assert pruned.value == expected, board
            assert pruned.nodes <= full.nodes, board
            if pruned.move is not None:
                assert oracle.game_value(oracle.after(cells, divmod(pruned.move, 3))) == expected, board


def test_the_tracer_sees_every_node_once_and_cutoffs_name_the_skipped_moves():
    recorder = Recorder()
    board = parse_board("XO./.X./...")
    result = search.alphabeta(GAME, board, tracer=recorder)
    enters = [e for e in recorder.events if isinstance(e, Enter)]
    ends = [e for e in recorder.events if isinstance(e, (Leaf, Exit))]
    cutoffs = [e for e in recorder.events if isinstance(e, Cutoff)]
    assert len(enters) == len(ends) == result.nodes
    assert sorted(e.node for e in enters) == list(range(result.nodes))
    assert len(cutoffs) == result.cutoffs > 0
    for cut in cutoffs:
        assert cut.skipped and (cut.value >= cut.beta or cut.value <= cut.alpha)
    assert recorder.events[0] == Enter(0, None, None, board, 0, False, -math.inf, math.inf)


def test_depth_limited_uses_the_estimate_only_at_the_limit():
    board = parse_board("X../.O./...")
    calls = []

    def estimate(state):
        calls.append(state)
        return 0.5

    shallow = search.depth_limited(GAME, board, depth=1, evaluate=estimate)
    assert shallow.value == 0.5 and len(calls) == 7 and shallow.depth == 1
    deep = search.depth_limited(GAME, board, depth=9, evaluate=estimate)
    assert deep.value == search.minimax(GAME, board).value
    with pytest.raises(ValueError, match="depth must be at least 1"):
        search.depth_limited(GAME, board, depth=0, evaluate=estimate)


def test_iterative_deepening_stops_once_the_tree_is_exhausted():
    board = parse_board("XO./.X./...")
    result = search.iterative_deepening(GAME, board, evaluate=lambda s: 0.0, seconds=5)
    assert result.value == 1 and result.move == 8
    assert result.depth <= 5
