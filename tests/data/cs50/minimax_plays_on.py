"""minimax never asks whether the game is over: on a won board it still returns a move (a full board has none, so there it returns None).

expect: initial_state=pass player=pass actions=pass result=pass winner=pass terminal=pass utility=pass minimax=fail
message: minimax=the game is over
"""

from raise_exception import *  # noqa: F401,F403  (the rest of the file as in raise_exception.py)
from raise_exception import X, actions, freeze, player, result, value


def minimax(board):
    if not actions(board):
        return None
    best = max if player(board) == X else min
    return best(actions(board), key=lambda a: value(freeze(result(board, a))))
