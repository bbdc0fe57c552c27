"""result raises a plain Exception for an invalid action, as the CS50 specification allows; minimax memoised with lru_cache.

expect: initial_state=pass player=pass actions=pass result=pass winner=pass terminal=pass utility=pass minimax=pass
"""

import copy
from functools import lru_cache

X = "X"
O = "O"
EMPTY = None


def initial_state():
    return [[EMPTY, EMPTY, EMPTY],
            [EMPTY, EMPTY, EMPTY],
            [EMPTY, EMPTY, EMPTY]]


def player(board):
    count_x = sum(row.count(X) for row in board)
    count_o = sum(row.count(O) for row in board)
    return O if count_x > count_o else X


def actions(board):
    return {(i, j) for i in range(3) for j in range(3) if board[i][j] == EMPTY}


def result(board, action):
    i, j = action
    if i not in range(3) or j not in range(3) or board[i][j] != EMPTY:
        raise Exception("Invalid move")
    new_board = copy.deepcopy(board)
    new_board[i][j] = player(board)
    return new_board


def winner(board):
    lines = [row for row in board]
    lines += [[board[r][c] for r in range(3)] for c in range(3)]
    lines += [[board[k][k] for k in range(3)], [board[k][2 - k] for k in range(3)]]
    for line in lines:
        if line[0] is not None and line.count(line[0]) == 3:
            return line[0]
    return None


def terminal(board):
    return winner(board) is not None or all(cell is not EMPTY for row in board for cell in row)


def utility(board):
    w = winner(board)
    if w == X:
        return 1
    if w == O:
        return -1
    return 0


@lru_cache(maxsize=None)
def value(key):
    board = [list(row) for row in key]
    if terminal(board):
        return utility(board)
    scores = [value(freeze(result(board, a))) for a in actions(board)]
    return max(scores) if player(board) == X else min(scores)


def freeze(board):
    return tuple(tuple(row) for row in board)


def minimax(board):
    if terminal(board):
        return None
    best = max if player(board) == X else min
    return best(actions(board), key=lambda a: value(freeze(result(board, a))))
