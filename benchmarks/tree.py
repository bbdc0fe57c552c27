"""How long the search-tree pictures take: record, build DOT, render SVG, and the explorer's data.

For alpha-beta (moves row by row, and best first) from positions with 5, 6 and 7 empty squares,
prints the nodes and cut-offs, the time to record the search, to build its DOT text, to render
it to SVG with dot, and to prepare the explorer's data (``ttt.widgets.explorer.tree_data``: made
and sent once per search, with its size; the browser then steps by itself, timed in
``benchmarks/browser.py``). The baseline is what an explorer that ran dot at every step would
pay: building and rendering the tree of the first k events, averaged over steps spread through
the search.

    python benchmarks/tree.py
"""

from __future__ import annotations

import json
import statistics
import time

from ttt.draw import draw_tree, render_svg
from ttt.games.classic import TicTacToe, parse_board
from ttt.trace import record
from ttt.widgets.explorer import tree_data

POSITIONS = {5: "XO./.X./..O", 6: "XO./.X./...", 7: "X../.O./..."}
MAX_NODES = 500  # the explorer's default drawing limit
BASELINE_STEPS = 8  # how many steps the dot-per-step baseline samples


def best(seconds: list[float]) -> float:
    """Return the fastest of several timings, in milliseconds."""
    return 1000 * min(seconds)


def timed(function, repeat: int = 3) -> tuple[float, object]:
    """Return (fastest time in ms over `repeat` runs, the last result)."""
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = function()
        times.append(time.perf_counter() - start)
    return best(times), out


def dot_per_step_ms(trace, steps: int = BASELINE_STEPS) -> float:
    """Return the mean ms to build and render the tree of the first k events, for `steps` values of k."""
    ks = [max(1, round(len(trace) * (j + 1) / steps)) for j in range(steps)]
    times = []
    for k in ks:
        start = time.perf_counter()
        render_svg(draw_tree(trace.upto(k), max_nodes=MAX_NODES))
        times.append(time.perf_counter() - start)
    return 1000 * statistics.mean(times)


def main() -> None:
    game = TicTacToe()
    header = (
        f"{'empty':>5} {'order':>7} {'nodes':>6} {'cuts':>5} {'events':>6} {'record':>8} {'DOT':>8} "
        f"{'SVG':>8} {'explorer':>9} {'KB sent':>8} {'dot/step':>9}"
    )
    print("alpha-beta search trees: times in ms; 'explorer' prepares the explorer's data once (then the")
    print(f"browser steps alone); 'dot/step' the baseline that runs dot at every step; at most {MAX_NODES} nodes")
    print(header)
    print("-" * len(header))
    for empty, board in POSITIONS.items():
        state = parse_board(board)
        for ordered in (False, True):
            record_ms, trace = timed(lambda: record(game, state, algorithm="alphabeta", ordered=ordered))
            dot_ms, dot = timed(lambda: draw_tree(trace, max_nodes=MAX_NODES))
            svg_ms, _ = timed(lambda: render_svg(dot), repeat=2)
            data_ms, data = timed(lambda: tree_data(trace, max_nodes=MAX_NODES), repeat=2)
            baseline_ms = dot_per_step_ms(trace)
            print(
                f"{empty:>5} {'best' if ordered else 'row':>7} {trace.node_count:>6} {trace.cutoffs:>5} "
                f"{len(trace):>6} {record_ms:>8.2f} {dot_ms:>8.1f} {svg_ms:>8.1f} {data_ms:>9.1f} "
                f"{len(json.dumps(data)) / 1024:>8.0f} {baseline_ms:>9.1f}"
            )


if __name__ == "__main__":
    main()
