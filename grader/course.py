"""The nbgrader course: a course directory holding the lessons as nbgrader source assignments.

Each lesson in ``notebooks/`` (``01-boards-and-moves.ipynb``, ...) becomes one assignment named
after the file stem, at ``source/<lesson>/<lesson>.ipynb``, the layout nbgrader expects
(``{nbgrader_step}/{student_id}/{assignment_id}``). The hidden tests in the lessons import
``grader.checks``, so the grading kernel must be able to import ``grader`` (it is installed
with this package, ``pip install -e .``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Iterable, Optional

from traitlets import Bool
from traitlets.config import Config, Configurable

COURSE_ID = "ttt"
CELL_TIMEOUT = 120  # CPU seconds per cell: far above what the slowest honest check uses
NOTEBOOK_TIMEOUT = 600  # CPU seconds a whole notebook's cells may use
MEMORY_MB = 2048  # the memory cap of every process that runs student code: a kernel, a student server
NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

CONFIG = '''\
"""nbgrader configuration for the ttt lessons (written by grader.course.make_course)."""

c = get_config()  # noqa: F821  (nbgrader provides get_config)

c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.root = {root!r}

# The release keeps nbgrader's own stub where each solution was.
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}}

# CPU seconds each cell may use while autograding, and a whole notebook's cells (ttt-grader counts
# CPU time, so a busy machine does not change a grade; stock nbgrader counts wall time). The
# checks bound their work: the slowest honest solution's check uses a fraction of the cell limit.
c.Execute.timeout = {timeout}
c.SafeExecute.notebook_timeout = {notebook_timeout}

# Students may run the hidden checks on their own notebooks before grading (ttt-grader check
# LESSON.ipynb, nbgrader's Validate button). False turns that off; it reaches the students with
# the lessons released after the change.
c.SelfCheck.enabled = True
'''


class SelfCheck(Configurable):
    """The course's switch for the students' self-check (``ttt-grader check LESSON.ipynb`` and
    the Validate button): in the course's ``nbgrader_config.py``, ``c.SelfCheck.enabled = False``."""

    enabled = Bool(True, help="Whether students may run the hidden checks on their own notebooks before "
                              "grading (ttt-grader check, nbgrader's Validate button)").tag(config=True)


def enabled_in(config) -> bool:
    """Whether a Config allows the self-check (``SelfCheck.enabled``, True unless set False)."""
    return bool(SelfCheck(config=config).enabled)


def course_config(course: Path) -> Config:
    """Returns the course's ``nbgrader_config.py`` as a Config (empty if there is none)."""
    from traitlets.config.loader import PyFileConfigLoader

    path = Path(course) / "nbgrader_config.py"
    if not path.exists():
        return Config()
    return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()


def notebooks_dir() -> Path:
    """Return the folder of lesson notebooks; raise FileNotFoundError saying where it looked."""
    if not NOTEBOOKS.is_dir():
        raise FileNotFoundError(
            f"the lessons are not at {NOTEBOOKS}: install ttt from its source folder (pip install -e .)"
        )
    return NOTEBOOKS


def lesson_names() -> list[str]:
    """Return the lessons' assignment names in order, e.g. ['01-boards-and-moves', ...]."""
    return sorted(p.stem for p in notebooks_dir().glob("[0-9][0-9]-*.ipynb"))


def lesson_path(name: str) -> Path:
    """Return the source notebook of lesson `name`; raise ValueError naming the lessons if unknown."""
    names = lesson_names()
    if name not in names:
        raise ValueError(f"unknown lesson {name!r}; the lessons are: {', '.join(names)}")
    return notebooks_dir() / f"{name}.ipynb"


def make_course(course_dir: str | Path, *, lessons: Optional[Iterable[str]] = None) -> Path:
    """Write an nbgrader course directory and return its path.

    It holds ``nbgrader_config.py`` (course id, root, stub, cell timeout) and
    ``source/<lesson>/<lesson>.ipynb`` for each of `lessons` (default: all of them), copied
    from ``notebooks/``. Existing source copies are replaced; anything else is left alone.
    """
    root = Path(course_dir).resolve()
    chosen = lesson_names() if lessons is None else list(lessons)
    paths = [lesson_path(name) for name in chosen]  # raises for an unknown lesson before writing
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(
        CONFIG.format(course_id=COURSE_ID, root=str(root), timeout=CELL_TIMEOUT,
                      notebook_timeout=NOTEBOOK_TIMEOUT), encoding="utf-8"
    )
    for name, path in zip(chosen, paths):
        folder = root / "source" / name
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, folder / f"{name}.ipynb")
    return root


__all__ = ["SelfCheck", "course_config", "enabled_in", "CELL_TIMEOUT", "MEMORY_MB", "NOTEBOOK_TIMEOUT", "COURSE_ID", "NOTEBOOKS", "lesson_names", "lesson_path", "make_course", "notebooks_dir"]
