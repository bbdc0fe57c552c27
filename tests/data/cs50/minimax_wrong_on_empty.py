"""minimax is right everywhere but on the empty board, where it returns None (found only because the empty board is always checked).

expect: initial_state=pass player=pass actions=pass result=pass winner=pass terminal=pass utility=pass minimax=fail
message: minimax=should return an action (i, j) on an empty square
"""

import raise_exception
from raise_exception import *  # noqa: F401,F403  (the rest of the file as in raise_exception.py)


def minimax(board):
    if board == initial_state():  # noqa: F405
        return None
    return raise_exception.minimax(board)
