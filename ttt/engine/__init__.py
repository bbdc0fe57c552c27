"""A fast engine for the big boards, beside the readable teaching search of ``ttt.search``.

``ttt.engine.board.Board`` holds a position of nine-board or ultimate tic-tac-toe as bit masks,
plays and takes back moves in place without checking them, and tests wins by table look-up.
On it, ``ttt.engine.alphabeta`` (iterative-deepening alpha-beta with the heuristics of
``ttt.engine.evaluate``) and ``ttt.engine.mcts`` (Monte Carlo tree search with decisive
playouts and an MCTS-solver: ``ttt.engine.mcts.mcts`` takes the arguments of ``ttt.search.mcts``
and returns its `SearchResult`) play the big boards' ``default`` and ``mcts`` players in plain
Python. With the fast extra (numba) installed, ``ttt.engine.compiled``, the same MCTS compiled
to machine code, plays both instead: it beats the alpha-beta on both big boards. Their time
budgets are CPU seconds. The teaching search in ``ttt.search`` stays the one students
read, step through and draw.
"""
