"""EMPTY is the empty string, not None: on CS50 boards (None for an empty square) initial_state, actions and
terminal are wrong; result and minimax are right with the CS50 helpers, wrong as written because of the
student's actions and terminal.

expect: initial_state=fail player=pass actions=fail result=pass winner=pass terminal=fail utility=pass minimax=pass
broken-by: result=actions minimax=terminal
message: initial_state=should return the empty board
"""

import copy

X = "X"
O = "O"
EMPTY = ""


def initial_state():
    return [[EMPTY for _ in range(3)] for _ in range(3)]


def cells(board):
    return [board[k // 3][k % 3] for k in range(9)]


def player(board):
    flat = cells(board)
    return O if flat.count(X) > flat.count(O) else X


def actions(board):
    return {(k // 3, k % 3) for k, cell in enumerate(cells(board)) if cell == EMPTY}


def result(board, action):
    if action not in actions(board):
        raise RuntimeError("that square is not free")
    after = copy.deepcopy(board)
    after[action[0]][action[1]] = player(board)
    return after


def winner(board):
    flat = cells(board)
    for a, b, c in ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)):
        if flat[a] in (X, O) and flat[a] == flat[b] == flat[c]:
            return flat[a]
    return None


def terminal(board):
    return winner(board) is not None or EMPTY not in cells(board)


def utility(board):
    return (winner(board) == X) - (winner(board) == O)


def minimax(board):
    if terminal(board):
        return None
    table = {}

    def score(b):
        key = "".join(c or "." for c in cells(b))
        if key not in table:
            if terminal(b):
                table[key] = utility(b)
            else:
                values = [score(result(b, a)) for a in actions(b)]
                table[key] = max(values) if player(b) == X else min(values)
        return table[key]

    options = sorted(actions(board))
    values = [score(result(board, a)) for a in options]
    return options[values.index(max(values) if player(board) == X else min(values))]
