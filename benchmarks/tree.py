"""How long the search-tree pictures take: record, build DOT, render SVG, and one explorer step.

For alpha-beta (moves row by row, and best first) from positions with 5, 6 and 7 empty squares,
prints the nodes and cut-offs, the time to record the search, to build its DOT text, to render
it to SVG with dot, and the explorer's time per step, measured through the widget itself
(``SearchExplorer.step()``: the trace is laid out once and each step swaps a stylesheet). The
baseline is what an explorer that ran dot at every step would pay: building and rendering the
tree of the first k events, averaged over steps spread through the search. The explorer must
stay under 100 ms per step on trees of up to 500 nodes.

    python benchmarks/tree.py
"""

from __future__ import annotations

import statistics
import time

from ttt.draw import TreeLayout, draw_tree, render_svg
from ttt.games.classic import TicTacToe, parse_board
from ttt.trace import record
from ttt.widgets import SearchExplorer

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


def explorer_step_ms(board: str, ordered: bool) -> tuple[float, float, int]:
    """Return (mean, worst) ms of SearchExplorer.step() over the whole search, and the steps taken."""
    explorer = SearchExplorer(board, algorithm="alphabeta", ordered=ordered, max_nodes=MAX_NODES)
    times = []
    for _ in range(len(explorer.trace)):
        start = time.perf_counter()
        explorer.step()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.mean(times), 1000 * max(times), len(times)


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
        f"{'SVG':>8} {'layout':>8} {'step':>8} {'worst':>8} {'dot/step':>9} {'faster':>7}"
    )
    print("alpha-beta search trees: times in ms; 'step' is the explorer (laid out once, restyled per step),")
    print(f"'dot/step' the baseline that runs dot at every step; drawings capped at {MAX_NODES} nodes")
    print(header)
    print("-" * len(header))
    for empty, board in POSITIONS.items():
        state = parse_board(board)
        for ordered in (False, True):
            record_ms, trace = timed(lambda: record(game, state, algorithm="alphabeta", ordered=ordered))
            dot_ms, dot = timed(lambda: draw_tree(trace, max_nodes=MAX_NODES))
            svg_ms, _ = timed(lambda: render_svg(dot), repeat=2)
            layout_ms, _ = timed(lambda: TreeLayout(trace, max_nodes=MAX_NODES), repeat=2)
            step_ms, worst_ms, _ = explorer_step_ms(board, ordered)
            baseline_ms = dot_per_step_ms(trace)
            print(
                f"{empty:>5} {'best' if ordered else 'row':>7} {trace.node_count:>6} {trace.cutoffs:>5} "
                f"{len(trace):>6} {record_ms:>8.2f} {dot_ms:>8.1f} {svg_ms:>8.1f} {layout_ms:>8.1f} "
                f"{step_ms:>8.2f} {worst_ms:>8.2f} {baseline_ms:>9.1f} {baseline_ms / step_ms:>6.0f}x"
            )


if __name__ == "__main__":
    main()
