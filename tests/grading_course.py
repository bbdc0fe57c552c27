"""A tiny nbgrader course for the grader's tests: one lesson, two functions, hidden tests.

Real nbgrader source notebooks (solution regions, locked grade cells with hidden tests), small
so that a notebook grades in about a second, with a short cell timeout and memory cap.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from nbformat import v4

LESSON = "tiny"
HIDDEN_MARK = "HIDDEN-SECRET-42"  # appears only inside the hidden tests


def _meta(grade_id: str, *, solution=False, grade=False, locked=False, points=0) -> dict:
    meta = {"grade_id": grade_id, "solution": solution, "grade": grade, "locked": locked, "schema_version": 3}
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


def source_notebook() -> nbformat.NotebookNode:
    """Returns the lesson as an nbgrader source notebook."""
    cells = [
        v4.new_markdown_cell("# Tiny lesson\nWrite `player` and `count_empty`.", metadata=_meta("intro", locked=True)),
        v4.new_code_cell("EMPTY = None", metadata=_meta("setup", locked=True)),
        v4.new_code_cell(
            "def player(board):\n"
            "    \"\"\"Returns whose turn it is: X or O.\"\"\"\n"
            "    ### BEGIN SOLUTION\n"
            "    xs = sum(row.count('X') for row in board)\n"
            "    os_ = sum(row.count('O') for row in board)\n"
            "    return 'X' if xs == os_ else 'O'\n"
            "    ### END SOLUTION", metadata=_meta("player", solution=True)),
        v4.new_code_cell(
            "assert player([[EMPTY] * 3 for _ in range(3)]) == 'X'\n"
            "### BEGIN HIDDEN TESTS\n"
            f"# {HIDDEN_MARK}\n"
            "from grader.checks import check_player\n"
            "_ = check_player(player)\n"
            "### END HIDDEN TESTS", metadata=_meta("test_player", grade=True, locked=True, points=2)),
        v4.new_code_cell(
            "def count_empty(board):\n"
            "    \"\"\"Returns the number of empty squares.\"\"\"\n"
            "    ### BEGIN SOLUTION\n"
            "    return sum(row.count(EMPTY) for row in board)\n"
            "    ### END SOLUTION", metadata=_meta("count_empty", solution=True)),
        v4.new_code_cell(
            "assert count_empty([[EMPTY] * 3 for _ in range(3)]) == 9\n"
            "### BEGIN HIDDEN TESTS\n"
            f"# {HIDDEN_MARK}\n"
            "assert count_empty([['X', None, 'O'], [None] * 3, ['X'] * 3]) == 4, 'count_empty: expected 4'\n"
            "### END HIDDEN TESTS", metadata=_meta("test_count_empty", grade=True, locked=True, points=1)),
    ]
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def make_course(root: Path, *, timeout: int = 3, memory_mb: int = 1024) -> Path:
    """Writes the course (config and source notebook) and releases it; returns the course dir."""
    from grader.course_ops import release

    root = Path(root)
    (root / "source" / LESSON).mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        "c.CourseDirectory.course_id = 'fixture'\n"
        f"c.Execute.timeout = {timeout}\n"
        f"c.SafeExecute.memory_mb = {memory_mb}\n")
    nbformat.write(source_notebook(), root / "source" / LESSON / f"{LESSON}.ipynb")
    release(root, setup=False)
    return root


def released(course: Path) -> nbformat.NotebookNode:
    """Returns the student version of the lesson."""
    return nbformat.read(Path(course) / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)


def solved(course: Path, **answers: str) -> nbformat.NotebookNode:
    """Returns the release notebook with the solution cells filled in: the reference answers,
    or the code given for a grade id (``player="def player(board): ..."``)."""
    nb = released(course)
    reference = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source_notebook().cells}
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = answers.get(grade_id, "\n".join(
                line for line in reference[grade_id].splitlines() if "### " not in line))
    return nb


def submit(course: Path, student: str, notebook=None, *, name: str = f"{LESSON}.ipynb", raw: str | None = None) -> Path:
    """Writes a submission into DIR/submitted/<student>/<lesson>/; returns its path."""
    folder = Path(course) / "submitted" / student / LESSON
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    path = folder / name
    if raw is not None:
        path.write_text(raw)
    else:
        nbformat.write(notebook if notebook is not None else solved(course), path)
    return path


def grades(course: Path) -> dict:
    """Returns {(student, grade_id): score} from the course's gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{Path(course) / 'gradebook.db'}") as gb:
        return {(g.student.id, g.name): g.score
                for s in gb.students for sub in [gb.find_submission(LESSON, s.id)] if sub
                for nb in sub.notebooks for g in nb.grades} if gb.students else {}
