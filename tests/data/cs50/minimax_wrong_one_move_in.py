"""minimax takes the first free square when the board holds a single mark: wrong only one move in (after X in a corner, O must take the centre).

expect: initial_state=pass player=pass actions=pass result=pass winner=pass terminal=pass utility=pass minimax=fail
message: minimax=is not an optimal move for O
"""

import raise_exception
from raise_exception import *  # noqa: F401,F403  (the rest of the file as in raise_exception.py)
from raise_exception import EMPTY, actions


def minimax(board):
    if sum(cell is not EMPTY for row in board for cell in row) == 1:
        return sorted(actions(board))[0]
    return raise_exception.minimax(board)
