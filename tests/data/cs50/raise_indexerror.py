"""result raises IndexError off the board and Exception on a taken square; minimax is alpha-beta, no memo.

expect: initial_state=pass player=pass actions=pass result=pass winner=pass terminal=pass utility=pass minimax=pass
"""

import math
from copy import deepcopy

X = "X"
O = "O"
EMPTY = None


def initial_state():
    return [[EMPTY] * 3 for _ in range(3)]


def player(board):
    filled = sum(1 for row in board for cell in row if cell is not EMPTY)
    return X if filled % 2 == 0 else O


def actions(board):
    moves = set()
    for i, row in enumerate(board):
        for j, cell in enumerate(row):
            if cell is EMPTY:
                moves.add((i, j))
    return moves


def result(board, action):
    i, j = action
    if not (0 <= i < 3 and 0 <= j < 3):
        raise IndexError("action out of bounds")
    if board[i][j] is not EMPTY:
        raise Exception("square already taken")
    new = deepcopy(board)
    new[i][j] = player(board)
    return new


def winner(board):
    for p in (X, O):
        for k in range(3):
            if all(board[k][c] == p for c in range(3)) or all(board[r][k] == p for r in range(3)):
                return p
        if all(board[k][k] == p for k in range(3)) or all(board[k][2 - k] == p for k in range(3)):
            return p
    return None


def terminal(board):
    if winner(board):
        return True
    return not actions(board)


def utility(board):
    return {X: 1, O: -1}.get(winner(board), 0)


def max_value(board, alpha, beta):
    if terminal(board):
        return utility(board)
    v = -math.inf
    for action in actions(board):
        v = max(v, min_value(result(board, action), alpha, beta))
        if v >= beta:
            return v
        alpha = max(alpha, v)
    return v


def min_value(board, alpha, beta):
    if terminal(board):
        return utility(board)
    v = math.inf
    for action in actions(board):
        v = min(v, max_value(result(board, action), alpha, beta))
        if v <= alpha:
            return v
        beta = min(beta, v)
    return v


def minimax(board):
    if terminal(board):
        return None
    if player(board) == X:
        best, value = None, -math.inf
        for action in actions(board):
            v = min_value(result(board, action), value, math.inf)
            if v > value:
                best, value = action, v
        return best
    best, value = None, math.inf
    for action in actions(board):
        v = max_value(result(board, action), -math.inf, value)
        if v < value:
            best, value = action, v
    return best
