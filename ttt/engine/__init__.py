"""A fast engine for the big boards, beside the readable teaching search of ``ttt.search``.

``ttt.engine.board.Board`` holds a position of nine-board or ultimate tic-tac-toe as bit masks,
plays and takes back moves in place without checking them, and tests wins by table look-up.
The searches on it play the big boards' players (``ttt.agents``); the teaching search in
``ttt.search`` stays the one students read, step through and draw.
"""
