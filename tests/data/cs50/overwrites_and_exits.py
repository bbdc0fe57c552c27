"""result writes into the board it is given, never checks for a taken square, and calls sys.exit for a negative index: three kinds of failure, each shown with a board (minimax here is raise_exception.py's, with its own result).

expect: initial_state=pass player=pass actions=pass result=fail winner=pass terminal=pass utility=pass minimax=pass
message: result=3 kinds of failure|changed the board it was given|overwrites a taken square|SystemExit is not an Exception
"""

import sys

from raise_exception import *  # noqa: F401,F403  (the rest of the file as in raise_exception.py)
from raise_exception import player


def result(board, action):
    i, j = action
    if i < 0 or j < 0:
        sys.exit("negative index")
    board[i][j] = player(board)
    return board
