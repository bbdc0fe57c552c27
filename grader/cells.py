"""What a lesson's cell is, read from its nbgrader metadata: the one test for a test cell, used
wherever the grader treats test cells apart (the kernel, the re-check, staging, feedback, the
students' self-check)."""

from __future__ import annotations


def unreadable(name: str, error: BaseException) -> str:
    """What is said of a file `name` that nbformat could not read as a notebook (invalid JSON, not a notebook)."""
    said = str(error).splitlines()[0][:200] if str(error).strip() else "unreadable"
    return f"{name} could not be read as a notebook ({type(error).__name__}: {said})"


def is_test(meta: dict) -> bool:
    """True for the nbgrader metadata of a test cell: graded, and not an answer."""
    return bool(meta.get("grade")) and not meta.get("solution")


def is_test_cell(cell) -> bool:
    """True if `cell` (an nbformat cell, or a cell as plain JSON) is a test cell: a graded code
    cell that is not an answer."""
    meta = (cell.get("metadata") or {}).get("nbgrader") or {}
    return cell.get("cell_type") == "code" and isinstance(meta, dict) and is_test(meta)
