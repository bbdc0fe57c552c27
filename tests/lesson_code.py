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
