"""result raises the student's own exception class; helpers call each other in unusual directions (player
counts actions, terminal asks utility and actions, utility asks winner); minimax memoised in a dict.

expect: initial_state=pass player=pass actions=pass result=pass winner=pass terminal=pass utility=pass minimax=pass
"""

X = "X"
O = "O"
EMPTY = None


class InvalidMoveError(Exception):
    pass


def initial_state():
    return [[EMPTY for _ in range(3)] for _ in range(3)]


def player(board):
    return X if len(actions(board)) % 2 == 1 else O


def actions(board):
    return set((i, j) for i in range(3) for j in range(3) if board[i][j] is None)


def result(board, action):
    if action not in actions(board):
        raise InvalidMoveError(f"{action} is not a valid move")
    new = [row[:] for row in board]
    new[action[0]][action[1]] = player(board)
    return new


def winner(board):
    for a, b, c in [((0, 0), (0, 1), (0, 2)), ((1, 0), (1, 1), (1, 2)), ((2, 0), (2, 1), (2, 2)),
                    ((0, 0), (1, 0), (2, 0)), ((0, 1), (1, 1), (2, 1)), ((0, 2), (1, 2), (2, 2)),
                    ((0, 0), (1, 1), (2, 2)), ((0, 2), (1, 1), (2, 0))]:
        if board[a[0]][a[1]] and board[a[0]][a[1]] == board[b[0]][b[1]] == board[c[0]][c[1]]:
            return board[a[0]][a[1]]
    return None


def terminal(board):
    return utility(board) != 0 or winner(board) is not None or len(actions(board)) == 0


def utility(board):
    w = winner(board)
    return 1 if w == X else -1 if w == O else 0


memo = {}


def score(board):
    key = str(board)
    if key not in memo:
        if terminal(board):
            memo[key] = utility(board)
        else:
            values = [score(result(board, a)) for a in actions(board)]
            memo[key] = max(values) if player(board) == X else min(values)
    return memo[key]


def minimax(board):
    if terminal(board):
        return None
    moves = sorted(actions(board))
    if player(board) == X:
        return max(moves, key=lambda a: score(result(board, a)))
    return min(moves, key=lambda a: score(result(board, a)))
