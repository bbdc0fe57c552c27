"""An independent tic-tac-toe oracle for the tests: written from the rules, sharing no code with ttt.

Boards are tuples of nine cells, 'X', 'O' or None, row by row.
"""

from __future__ import annotations

from functools import lru_cache

Cells = tuple  # nine of 'X', 'O', None

ROWS = [[(r, c) for c in range(3)] for r in range(3)]
COLS = [[(r, c) for r in range(3)] for c in range(3)]
DIAGS = [[(k, k) for k in range(3)], [(k, 2 - k) for k in range(3)]]
ALL_LINES = [[3 * r + c for r, c in line] for line in ROWS + COLS + DIAGS]


def from_text(text: str) -> Cells:
    """Return oracle cells from a nine-character 'X'/'O'/'.' string."""
    return tuple(None if ch == "." else ch for ch in text)


def to_text(cells: Cells) -> str:
    return "".join("." if v is None else v for v in cells)


def to_lists(cells: Cells) -> list:
    """Return a CS50 list-of-lists board."""
    return [list(cells[3 * r : 3 * r + 3]) for r in range(3)]


def next_player(cells: Cells) -> str:
    placed = sum(v is not None for v in cells)
    return "X" if placed % 2 == 0 else "O"


def line_owner(cells: Cells) -> str | None:
    owners = {cells[line[0]] for line in ALL_LINES if cells[line[0]] is not None and len({cells[i] for i in line}) == 1}
    assert len(owners) <= 1, cells
    return owners.pop() if owners else None


def over(cells: Cells) -> bool:
    return line_owner(cells) is not None or all(v is not None for v in cells)


def score(cells: Cells) -> int:
    return {"X": 1, "O": -1, None: 0}[line_owner(cells)]


def free_actions(cells: Cells) -> set[tuple[int, int]]:
    return {(k // 3, k % 3) for k in range(9) if cells[k] is None}


def after(cells: Cells, action: tuple[int, int]) -> Cells:
    k = action[0] * 3 + action[1]
    assert cells[k] is None
    return cells[:k] + (next_player(cells),) + cells[k + 1 :]


@lru_cache(maxsize=None)
def game_value(cells: Cells) -> int:
    """Plain minimax value for X (memoized, no pruning)."""
    if over(cells):
        return score(cells)
    values = [game_value(after(cells, a)) for a in free_actions(cells)]
    return max(values) if next_player(cells) == "X" else min(values)


@lru_cache(maxsize=None)
def tree_size(cells: Cells) -> int:
    """Number of nodes of the full game tree below and including `cells`."""
    if over(cells):
        return 1
    return 1 + sum(tree_size(after(cells, a)) for a in free_actions(cells))


@lru_cache(maxsize=None)
def all_positions() -> tuple[Cells, ...]:
    """Every position reachable from the empty board, found by depth-first search."""
    seen: set[Cells] = set()
    stack = [(None,) * 9]
    while stack:
        cells = stack.pop()
        if cells in seen:
            continue
        seen.add(cells)
        if not over(cells):
            stack.extend(after(cells, a) for a in free_actions(cells))
    return tuple(sorted(seen, key=lambda c: (sum(v is not None for v in c), to_text(c))))
