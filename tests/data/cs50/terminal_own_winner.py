"""winner returns False, not None, when no one has won; terminal is written for that winner (`is not False`):
as written it is right, so it passes; winner fails.

expect: initial_state=pass player=pass actions=pass result=pass winner=fail terminal=pass utility=pass minimax=pass
message: winner=wrong winner
"""

import copy
import math

X = "X"
O = "O"
EMPTY = None


def initial_state():
    return [[EMPTY, EMPTY, EMPTY], [EMPTY, EMPTY, EMPTY], [EMPTY, EMPTY, EMPTY]]


def player(board):
    x = o = 0
    for row in board:
        for cell in row:
            x += cell == X
            o += cell == O
    return X if x == o else O


def actions(board):
    return {(i, j) for i in range(3) for j in range(3) if board[i][j] == EMPTY}


def result(board, action):
    if action not in actions(board):
        raise Exception("invalid action")
    new = copy.deepcopy(board)
    new[action[0]][action[1]] = player(board)
    return new


def winner(board):
    wins = [[(0, 0), (0, 1), (0, 2)], [(1, 0), (1, 1), (1, 2)], [(2, 0), (2, 1), (2, 2)],
            [(0, 0), (1, 0), (2, 0)], [(0, 1), (1, 1), (2, 1)], [(0, 2), (1, 2), (2, 2)],
            [(0, 0), (1, 1), (2, 2)], [(0, 2), (1, 1), (2, 0)]]
    for line in wins:
        a, b, c = (board[i][j] for i, j in line)
        if a == b == c and a is not None:
            return a
    return False


def terminal(board):
    if winner(board) is not False:
        return True
    return all(cell is not EMPTY for row in board for cell in row)


def utility(board):
    w = winner(board)
    return 1 if w == X else (-1 if w == O else 0)


seen = {}


def max_value(board, alpha=-math.inf, beta=math.inf):
    key = (str(board), "max")
    if key in seen:
        return seen[key]
    if terminal(board):
        return utility(board)
    v = -math.inf
    for a in actions(board):
        v = max(v, min_value(result(board, a)))
    seen[key] = v
    return v


def min_value(board, alpha=-math.inf, beta=math.inf):
    key = (str(board), "min")
    if key in seen:
        return seen[key]
    if terminal(board):
        return utility(board)
    v = math.inf
    for a in actions(board):
        v = min(v, max_value(result(board, a)))
    seen[key] = v
    return v


def minimax(board):
    if terminal(board):
        return None
    if player(board) == X:
        return max(actions(board), key=lambda a: (min_value(result(board, a)), a))
    return min(actions(board), key=lambda a: (max_value(result(board, a)), a))
