"""result raises KeyboardInterrupt for an invalid action: not an Exception, so it fails with a sentence saying why.

expect: initial_state=pass player=pass actions=pass result=fail winner=pass terminal=pass utility=pass minimax=pass
message: result=KeyboardInterrupt is not an Exception
"""

import copy
from functools import lru_cache

X = "X"
O = "O"
EMPTY = None


def initial_state():
    return [[EMPTY, EMPTY, EMPTY], [EMPTY, EMPTY, EMPTY], [EMPTY, EMPTY, EMPTY]]


def player(board):
    flat = [cell for row in board for cell in row]
    return X if flat.count(X) == flat.count(O) else O


def actions(board):
    return {(i, j) for i in range(3) for j in range(3) if board[i][j] is EMPTY}


def result(board, action):
    if action not in actions(board):
        raise KeyboardInterrupt("This action is not a legal move.")
    board_copy = copy.deepcopy(board)
    board_copy[action[0]][action[1]] = player(board)
    return board_copy


def winner(board):
    flat = [cell for row in board for cell in row]
    for a, b, c in ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)):
        if flat[a] is not None and flat[a] == flat[b] == flat[c]:
            return flat[a]
    return None


def terminal(board):
    return winner(board) is not None or not any(cell is EMPTY for row in board for cell in row)


def utility(board):
    return 1 if winner(board) == X else -1 if winner(board) == O else 0


@lru_cache(maxsize=None)
def _value(frozen):
    board = [list(r) for r in frozen]
    if terminal(board):
        return utility(board)
    children = [_value(tuple(map(tuple, result(board, a)))) for a in actions(board)]
    return max(children) if player(board) == X else min(children)


def minimax(board):
    if terminal(board):
        return None
    turn = player(board)
    ranked = sorted(actions(board), key=lambda a: _value(tuple(map(tuple, result(board, a)))))
    return ranked[-1] if turn == X else ranked[0]
