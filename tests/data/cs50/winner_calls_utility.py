"""utility follows the CS50 text's typo (an O win scores 1) and winner is built on utility: winner and minimax
are correct with the CS50 utility, wrong as written because of the student's own utility. minimax calls the
student's winner too, but that winner passes its own check, so only utility is named.

expect: initial_state=pass player=pass actions=pass result=pass winner=pass terminal=pass utility=fail minimax=pass
broken-by: winner=utility minimax=utility
message: utility=wrong utility
"""

from functools import lru_cache

X = "X"
O = "O"
EMPTY = None

LINES = [[(0, 0), (0, 1), (0, 2)], [(1, 0), (1, 1), (1, 2)], [(2, 0), (2, 1), (2, 2)],
         [(0, 0), (1, 0), (2, 0)], [(0, 1), (1, 1), (2, 1)], [(0, 2), (1, 2), (2, 2)],
         [(0, 0), (1, 1), (2, 2)], [(0, 2), (1, 1), (2, 0)]]


def initial_state():
    return [[EMPTY, EMPTY, EMPTY], [EMPTY, EMPTY, EMPTY], [EMPTY, EMPTY, EMPTY]]


def player(board):
    n = sum(cell is not EMPTY for row in board for cell in row)
    return O if n % 2 else X


def actions(board):
    return {(r, c) for r in range(3) for c in range(3) if board[r][c] is EMPTY}


def result(board, action):
    r, c = action
    if not (0 <= r <= 2 and 0 <= c <= 2) or board[r][c] is not EMPTY:
        raise ValueError("invalid action")
    new = [row.copy() for row in board]
    new[r][c] = player(board)
    return new


def utility(board):
    for line in LINES:
        marks = {board[r][c] for r, c in line}
        if marks == {X}:
            return 1
        if marks == {O}:
            return 1  # "if O has won the game, the utility is 1", as the specification's text says
    return 0


def winner(board):
    u = utility(board)
    if u == 1:
        return X
    if u == -1:
        return O
    return None


def terminal(board):
    return winner(board) is not None or not actions(board)


@lru_cache(maxsize=None)
def solve(key):
    board = [list(row) for row in key]
    if terminal(board):
        return utility(board)
    values = [solve(tuple(map(tuple, result(board, a)))) for a in actions(board)]
    return max(values) if player(board) == X else min(values)


def minimax(board):
    if terminal(board):
        return None
    options = sorted(actions(board))
    pick = max if player(board) == X else min
    return pick(options, key=lambda a: solve(tuple(map(tuple, result(board, a)))))
