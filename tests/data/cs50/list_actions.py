"""actions returns a list; terminal tests `actions(board) == []` and minimax loops over the list: as written they
work, so they pass (with the CS50 actions, a set, this terminal would not), while actions fails.

expect: initial_state=pass player=pass actions=fail result=pass winner=pass terminal=pass utility=pass minimax=pass
message: actions=should return a set, not a list of
"""

import math

X = "X"
O = "O"
EMPTY = None


def initial_state():
    return [[EMPTY, EMPTY, EMPTY], [EMPTY, EMPTY, EMPTY], [EMPTY, EMPTY, EMPTY]]


def player(board):
    xs = sum(row.count(X) for row in board)
    os = sum(row.count(O) for row in board)
    return X if xs <= os else O


def actions(board):
    moves = []
    for i in range(3):
        for j in range(3):
            if board[i][j] == EMPTY:
                moves.append((i, j))
    return moves


def result(board, action):
    if action not in actions(board):
        raise ValueError("not a legal action")
    new = [list(row) for row in board]
    new[action[0]][action[1]] = player(board)
    return new


def winner(board):
    for i in range(3):
        if board[i][0] == board[i][1] == board[i][2] != EMPTY:
            return board[i][0]
        if board[0][i] == board[1][i] == board[2][i] != EMPTY:
            return board[0][i]
    if board[0][0] == board[1][1] == board[2][2] != EMPTY:
        return board[1][1]
    if board[0][2] == board[1][1] == board[2][0] != EMPTY:
        return board[1][1]
    return None


def terminal(board):
    if winner(board) is not None:
        return True
    return actions(board) == []


def utility(board):
    if winner(board) == X:
        return 1
    elif winner(board) == O:
        return -1
    return 0


cache = {}


def value(board):
    key = tuple(map(tuple, board))
    if key in cache:
        return cache[key]
    if terminal(board):
        v = utility(board)
    elif player(board) == X:
        v = max(value(result(board, a)) for a in actions(board))
    else:
        v = min(value(result(board, a)) for a in actions(board))
    cache[key] = v
    return v


def minimax(board):
    if terminal(board):
        return None
    best, best_v = None, -math.inf if player(board) == X else math.inf
    for a in actions(board):
        v = value(result(board, a))
        if (player(board) == X and v > best_v) or (player(board) == O and v < best_v):
            best, best_v = a, v
    return best
