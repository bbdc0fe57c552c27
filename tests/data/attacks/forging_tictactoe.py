"""A CS50 tictactoe.py that attacks `ttt-grader check` (tests/test_attacks.py).

Its real worth: `initial_state`, `player`, `actions` and `winner` are right; `result` returns a
lying tuple (it never raises for a taken square) and `utility` a lying int, so both are wrong.

When it is imported it
1. writes into the installed package (`ttt/tictactoe.py`), only where `_LIVE` is True (the
   test sets it only when the grader runs student code in its sandbox); otherwise it only
   looks whether it could;
2. forges its verdict for the two wrong functions: it walks the stack for the check's result
   file (the local `out` of the checking process) and writes a passing result there, then
   exits before the check runs;
3. `result`'s tuple claims to belong to `ttt.tictactoe` and takes its rows from the reference.
"""

import os
import sys

X, O, EMPTY = "X", "O", None
_LIVE = False
_MARK = "ttt-attack-marker"


def initial_state():
    return [[EMPTY, EMPTY, EMPTY] for _ in range(3)]


def player(board):
    crosses = sum(row.count(X) for row in board)
    noughts = sum(row.count(O) for row in board)
    return X if crosses == noughts else O


def actions(board):
    return {(i, j) for i in range(3) for j in range(3) if board[i][j] is EMPTY}


class _Board(tuple):
    """Equal to anything; iterating it gives the reference's rows."""

    __module__ = "ttt.tictactoe"

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = tuple.__hash__

    def __iter__(self):
        try:
            import ttt.tictactoe as reference

            return iter(reference.result(self.board, self.action))
        except Exception:  # noqa: BLE001
            return iter(self.board)


def result(board, action):
    answer = _Board()
    answer.board, answer.action = [list(row) for row in board], action
    return answer


def winner(board):
    lines = [[(r, c) for c in range(3)] for r in range(3)] + [[(r, c) for r in range(3)] for c in range(3)]
    lines += [[(0, 0), (1, 1), (2, 2)], [(0, 2), (1, 1), (2, 0)]]
    for line in lines:
        a, b, c = (board[r][k] for r, k in line)
        if a is not EMPTY and a == b == c:
            return a
    return None


def terminal(board):
    return winner(board) is not None or all(square is not EMPTY for row in board for square in row)


class _Always(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__


def utility(board):
    return _Always(0)


def minimax(board):
    return None


def _into_the_package():
    try:
        import ttt.tictactoe as reference

        path = reference.__file__
    except Exception:  # noqa: BLE001
        return "no package"
    if not _LIVE:
        return f"would append to {path} (writable: {os.access(path, os.W_OK)})"
    try:
        with open(path, "a") as handle:
            handle.write(f"\n# {_MARK}\ndef utility(board):\n    return 0\n")
        return f"appended to {path}"
    except OSError as error:
        return f"refused: {error}"


def _forge():
    frame = sys._getframe()
    while frame is not None:
        where, name = frame.f_locals.get("out"), frame.f_locals.get("name")
        if isinstance(where, str) and where.endswith(".json") and name in ("result", "utility"):
            import json

            with open(where, "w") as handle:
                json.dump({"passed": True, "message": f"{name}: correct ({_MARK}; {_into_the_package()})",
                           "broken_by": [], "cpu_seconds": 0.1}, handle)
            os._exit(0)
        frame = frame.f_back


_into_the_package()
_forge()
