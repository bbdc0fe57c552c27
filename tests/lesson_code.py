"""The lessons' own code, for tests: a lesson's set-up cell and solution cells, run in a namespace.

Tests take the reference answers from the notebooks themselves (the code between
``### BEGIN SOLUTION`` and ``### END SOLUTION``), so the checks are tested against exactly what
the lessons ship, and planted bugs are made by editing that code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

import nbformat

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
LESSONS = [
    "01-boards-and-moves",
    "02-who-won",
    "03-rule-based-players",
    "04-minimax",
    "05-alpha-beta",
    "06-heuristics-and-depth-limits",
]


def notebook(lesson: str) -> nbformat.NotebookNode:
    """Return the source notebook of `lesson` (a file stem such as '04-minimax')."""
    return nbformat.read(NOTEBOOKS / f"{lesson}.ipynb", as_version=4)


def is_solution(cell) -> bool:
    return cell.get("metadata", {}).get("nbgrader", {}).get("solution", False)


def is_grade(cell) -> bool:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade", False)


def solution_namespace(lesson: str, *, edit: Optional[Callable[[str], str]] = None) -> dict:
    """Return the globals after running `lesson`'s first code cell and its solution cells.

    `edit` rewrites each solution cell's source first (to plant a bug).
    """
    namespace: dict = {"__name__": f"lesson_{lesson.replace('-', '_')}"}
    cells = [c for c in notebook(lesson).cells if c.cell_type == "code"]
    setup = cells[0]
    exec(compile(setup.source, f"<{lesson} set-up>", "exec"), namespace)
    for k, cell in enumerate(c for c in cells if is_solution(c)):
        source = edit(cell.source) if edit else cell.source
        exec(compile(source, f"<{lesson} solution {k}>", "exec"), namespace)
    return namespace


# --- planted bugs: the common mistakes, each made by editing the lessons' own solutions -----------


class Bug:
    """A mistake planted in one lesson's solution cells: `replacements` (old, new) applied in order.

    `endless`: the function never returns on some boards (only a test with a time limit can run it).
    """

    def __init__(self, name: str, lesson: str, function: str, *replacements: tuple[str, str], endless: bool = False) -> None:
        self.name, self.lesson, self.function, self.replacements = name, lesson, function, replacements
        self.endless = endless

    def __repr__(self) -> str:
        return self.name

    def plant(self, source: str) -> str:
        for old, new in self.replacements:
            source = source.replace(old, new)
        return source

    def applies(self) -> bool:
        """Return True if every replacement finds its text in the lesson's solution cells."""
        text = "\n".join(c.source for c in notebook(self.lesson).cells if is_solution(c))
        return all(old in text for old, _ in self.replacements)


BUGS = [
    # lesson 1
    Bug("player-counts-only-x", "01-boards-and-moves", "player",
        ("return X if xs == os else O", "return X if xs % 2 == 0 else O")),
    Bug("actions-returns-a-list", "01-boards-and-moves", "actions",
        ("return {(i, j) for i in range(3) for j in range(3) if board[i][j] is EMPTY}",
         "return [(i, j) for i in range(3) for j in range(3) if board[i][j] is EMPTY]")),
    Bug("result-accepts-row-minus-1", "01-boards-and-moves", "result",
        ("if i not in (0, 1, 2) or j not in (0, 1, 2):", "if i > 2 or j not in (0, 1, 2):")),
    Bug("result-changes-its-input", "01-boards-and-moves", "result",
        ("new_board = copy.deepcopy(board)", "new_board = board")),
    Bug("actions-transposed", "01-boards-and-moves", "actions",  # board[j][i] for board[i][j]: right on symmetric boards only
        ("if board[i][j] is EMPTY}", "if board[j][i] is EMPTY}")),
    Bug("result-transposed", "01-boards-and-moves", "result",  # plays (j, i) for (i, j)
        ("if board[i][j] is not EMPTY:", "if board[j][i] is not EMPTY:"), ("new_board[i][j] = player(board)", "new_board[j][i] = player(board)")),
    Bug("result-raises-without-a-message", "01-boards-and-moves", "result",
        ('raise ValueError(f"{action} is off the board: rows and columns are 0, 1 or 2")', "raise ValueError()"),
        ('raise ValueError(f"square {action} is taken by {board[i][j]}")', "raise ValueError()")),
    Bug("actions-transposed-used-by-result", "01-boards-and-moves", "actions",  # result checks the action against actions(board)
        ("if board[i][j] is EMPTY}", "if board[j][i] is EMPTY}"),
        ("    if board[i][j] is not EMPTY:\n", "    if (i, j) not in actions(board):\n")),
    # lesson 2
    Bug("winner-returns-the-player-to-move", "02-who-won", "winner",  # finds the line, then names the wrong mark
        ("            return a\n", "            return player(board)\n")),
    Bug("rk-board-swaps-x-and-o", "02-who-won", "rk_board", ("code = {EMPTY: 2, X: 3, O: 5}", "code = {EMPTY: 2, X: 5, O: 3}")),
    Bug("winner-without-the-anti-diagonal", "02-who-won", "winner",
        ("+ [[(0, 0), (1, 1), (2, 2)], [(0, 2), (1, 1), (2, 0)]]", "+ [[(0, 0), (1, 1), (2, 2)]]")),
    Bug("winner-without-the-right-column", "02-who-won", "winner",  # range(2) for range(3): an off-by-one in the columns
        ("+ [[(0, j), (1, j), (2, j)] for j in range(3)]", "+ [[(0, j), (1, j), (2, j)] for j in range(2)]")),
    Bug("winner-none-at-a-line-with-an-empty-square", "02-who-won", "winner",
        ("        if a is not EMPTY and a == b == c:\n            return a",
         "        if EMPTY in (a, b, c):\n            return None\n        if a == b == c:\n            return a")),
    Bug("terminal-notices-only-x-wins", "02-who-won", "terminal", ("if winner(board) is not None:", "if winner(board) == X:")),
    Bug("utility-o-wins-1", "02-who-won", "utility", ("        return -1\n", "        return 1\n")),
    Bug("poss-win-never-tries-square-9", "02-who-won", "poss_win",
        ("    for a, b, c in RK_LINES:", "    for a, b, c in [line for line in RK_LINES if 9 not in line]:")),
    Bug("poss-win-returns-the-line-s-last-square", "02-who-won", "poss_win",  # finds the line, not its blank square
        ("            for square in (a, b, c):\n                if B[square] == 2:\n                    return square\n",
         "            return c\n")),
    Bug("poss-win-without-the-3-5-7-diagonal", "02-who-won", "poss_win",  # its own list of lines, one diagonal short
        ("    for a, b, c in RK_LINES:", "    for a, b, c in RK_LINES[:7]:")),
    Bug("poss-win-rows-only", "02-who-won", "poss_win", ("    for a, b, c in RK_LINES:", "    for a, b, c in RK_LINES[:3]:")),
    Bug("poss-win-changes-b", "02-who-won", "poss_win",
        ("    target = 18 if p == X else 50\n", "    target = 18 if p == X else 50\n    B[0] = target\n")),
    # lesson 3
    Bug("win-block-never-blocks", "03-rule-based-players", "win_block", ("for mark in (me, them):", "for mark in (me,):")),
    Bug("win-block-tests-the-block-with-its-own-piece", "03-rule-based-players", "win_block",
        ("trial[i][j] = mark", "trial[i][j] = me")),
    Bug("win-block-corners-in-the-wrong-order", "03-rule-based-players", "win_block",  # corners clockwise, not row by row
        ("BEST_MOVES = [(1, 1), (0, 0), (0, 2), (2, 0), (2, 2),", "BEST_MOVES = [(1, 1), (0, 0), (0, 2), (2, 2), (2, 0),")),
    Bug("win-block-without-diagonals", "03-rule-based-players", "win_block",  # its own three-in-a-row test: rows and columns only
        ("if winner(trial) == mark:",
         "if any(all(trial[r][k] == mark for k in range(3)) or all(trial[k][r] == mark for k in range(3)) for r in range(3)):")),
    Bug("win-block-tries-taken-squares", "03-rule-based-players", "win_block",  # tries all nine squares, not the free ones
        ("for i, j in sorted(actions(board)):", "for i, j in [(i, j) for i in range(3) for j in range(3)]:")),
    # lesson 4
    Bug("minimax-max-from-0", "04-minimax", "minimax", ("v = -math.inf", "v = 0")),
    Bug("minimax-min-from-0", "04-minimax", "minimax", ("v = math.inf", "v = 0")),
    Bug("minimax-best-from-minus-1", "04-minimax", "minimax",  # no move beats -1 where every move loses: None
        ("    if player(board) == X:\n        return max(actions(board), key=lambda action: min_value(result(board, action)))\n"
         "    return min(actions(board), key=lambda action: max_value(result(board, action)))\n",
         "    best_v, best_action = (-1, None) if player(board) == X else (1, None)\n"
         "    for action in actions(board):\n"
         "        v = min_value(result(board, action)) if player(board) == X else max_value(result(board, action))\n"
         "        if (v > best_v) if player(board) == X else (v < best_v):\n"
         "            best_v, best_action = v, action\n"
         "    return best_action\n")),
    Bug("minimax-max-of-max", "04-minimax", "minimax",
        ("v = max(v, min_value(result(board, action)))", "v = max(v, max_value(result(board, action)))")),
    Bug("minimax-no-none-when-over", "04-minimax", "minimax",
        ("def minimax(board):\n    \"\"\"Return an optimal action (i, j) for the player to move on `board`, or None if the game is over.\"\"\"\n"
         "    ### BEGIN SOLUTION\n    if terminal(board):\n        return None\n",
         "def minimax(board):\n    \"\"\"Return an optimal action (i, j) for the player to move on `board`, or None if the game is over.\"\"\"\n"
         "    ### BEGIN SOLUTION\n")),
    Bug("minimax-plays-on-the-board-it-was-given", "04-minimax", "minimax",  # makes each move in place and never takes it back
        ("        v = max(v, min_value(result(board, action)))", "        i, j = action\n        board[i][j] = X\n        v = max(v, min_value(board))")),
    Bug("minimax-loop-that-never-moves-on", "04-minimax", "minimax",  # takes an action from the set but never removes it
        ("    for action in actions(board):\n        v = max(v, min_value(result(board, action)))",
         "    moves = actions(board)\n    while moves:\n        action = next(iter(moves))\n        v = max(v, min_value(result(board, action)))"),
        endless=True),
    # lesson 5
    Bug("alphabeta-cuts-off-only-on-strict", "05-alpha-beta", "alphabeta",
        ("if v >= beta:", "if v > beta:"), ("if v <= alpha:", "if v < alpha:")),
    Bug("alphabeta-best-from-minus-1", "05-alpha-beta", "alphabeta",  # no move beats -1 where every move loses: None
        ("        best = -math.inf\n", "        best = -1\n"), ("        best = math.inf\n", "        best = 1\n")),
    Bug("alphabeta-never-prunes", "05-alpha-beta", "alphabeta",  # α and β passed along, never used to stop
        ("        if v >= beta:\n            return v\n", ""), ("        if v <= alpha:\n            return v\n", "")),
    Bug("alphabeta-max-from-0", "05-alpha-beta", "alphabeta", ("    v = -math.inf\n", "    v = 0\n")),
    Bug("alphabeta-min-from-0", "05-alpha-beta", "alphabeta", ("    v = math.inf\n", "    v = 0\n")),
    Bug("alphabeta-loop-that-never-moves-on", "05-alpha-beta", "alphabeta",  # takes an action from the set but never removes it
        ("    for action in actions(board):\n        v = max(v, min_value(result(board, action), alpha, beta))",
         "    moves = actions(board)\n    while moves:\n        action = next(iter(moves))\n        v = max(v, min_value(result(board, action), alpha, beta))"),
        endless=True),
    # lesson 6
    Bug("line-score-15-for-two", "06-heuristics-and-depth-limits", "line_score", ("score += 10", "score += 15")),
    Bug("line-score-scores-a-full-line", "06-heuristics-and-depth-limits", "line_score",  # 10 for two or more: three too
        ("elif mine == 2:", "elif mine >= 2:")),
    Bug("evaluate-adds-o", "06-heuristics-and-depth-limits", "evaluate",
        ('line_score(state.small(b), "X") - line_score(state.small(b), "O")',
         'line_score(state.small(b), "X") + line_score(state.small(b), "O")')),
    Bug("depth-limited-root-searches-at-depth", "06-heuristics-and-depth-limits", "depth_limited_move",
        ("v = value(game.play(state, move), depth - 1, alpha, beta)\n        if (v > best)",
         "v = value(game.play(state, move), depth, alpha, beta)\n        if (v > best)")),
    Bug("depth-limited-max-cuts-off-on-alpha", "06-heuristics-and-depth-limits", "depth_limited_move",  # X's cut-off the wrong way
        ("            if v >= beta:", "            if v <= alpha:")),
    Bug("depth-limited-ignores-depth", "06-heuristics-and-depth-limits", "depth_limited_move",
        ("    if depth == 0:\n        return evaluate(state)", "    if False:\n        return evaluate(state)"), endless=True),
]


def stubbed(source: str) -> str:
    """Return a solution cell with each solution replaced by the release's stub, ``raise NotImplementedError()``."""
    out, inside = [], False
    for line in source.splitlines():
        if line.strip() == "### BEGIN SOLUTION":
            inside = True
            out.append(line[: len(line) - len(line.lstrip())] + "raise NotImplementedError()")
        elif line.strip() == "### END SOLUTION":
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)
