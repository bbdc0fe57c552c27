"""The course's layout: where each step of a course lives, read through nbgrader's own
``CourseDirectory`` (``source/``, ``release/``, ``submitted/``, ``autograded/``, the gradebook),
and the grader's own files beside them in ``.ttt-grader/``: the run's snapshot of the lessons,
the workers' private folders and a done-marker per graded submission. ``collect``, the grading
run and the course commands all find a course's files here.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from grader.course import course_config

STATE = ".ttt-grader"  # the grader's own files inside the course directory


def coursedir_of(course: Path, config=None):
    """Returns nbgrader's CourseDirectory for the course (its standard layout and gradebook)."""
    from nbgrader.coursedir import CourseDirectory

    if config is None:  # the course's own settings: where each step lives
        config = course_config(course)
        config.CourseDirectory.root = str(Path(course).resolve())
    return CourseDirectory(config=config)


def lesson_notebooks(course: Path, coursedir=None) -> dict[str, list[str]]:
    """Returns {lesson: [notebook names]} from the course's source folder."""
    coursedir = coursedir or coursedir_of(course)
    source = Path(coursedir.root) / coursedir.source_directory
    return {d.name: sorted(p.stem for p in d.glob("*.ipynb"))
            for d in sorted(source.iterdir()) if d.is_dir() and any(d.glob("*.ipynb"))} if source.is_dir() else {}


def submitted_units(course: Path, coursedir=None) -> list[tuple[str, str]]:
    """Returns the (student, lesson) pairs that have a submission folder, sorted."""
    coursedir = coursedir or coursedir_of(course)
    submitted = Path(coursedir.root) / coursedir.submitted_directory
    lessons = lesson_notebooks(course, coursedir)
    if not submitted.is_dir():
        return []
    return sorted((s.name, l.name) for s in submitted.iterdir() if s.is_dir()
                  for l in s.iterdir() if l.is_dir() and l.name in lessons)


def released(course: Path, coursedir=None) -> dict[str, list[str]]:
    """Returns {lesson: [notebook names]} of a course that has been released; raises
    FileNotFoundError saying to run ``ttt-grader release`` when it has no lessons or gradebook."""
    coursedir = coursedir or coursedir_of(course)
    lessons = lesson_notebooks(course, coursedir)
    if not lessons or not Path(coursedir.db_url.removeprefix("sqlite:///")).exists():
        raise FileNotFoundError(f"{Path(course).resolve()} has no released lessons: run `ttt-grader release` first")
    return lessons


def listed(names: list[str], most: int = 12) -> str:
    shown = ", ".join(names[:most])
    return shown + (f", ... ({len(names) - most} more)" if len(names) > most else "")


def chosen_lessons(names: list[str] | None, known: list[str]) -> list[str] | None:
    """Returns ``names`` with each one a known lesson (a unique prefix such as ``01`` names
    the lesson it starts); raises ValueError naming the lessons for one that is not."""
    if not names:
        return names
    chosen = []
    for name in names:
        matches = [name] if name in known else [k for k in known if k.startswith(name)]
        if len(matches) != 1:
            raise ValueError(f"unknown lesson {name!r}; the lessons are: {', '.join(known)}")
        chosen.append(matches[0])
    return chosen


def chosen_students(names: list[str] | None, course: Path, coursedir) -> list[str] | None:
    """Returns ``names`` if each student has a submission; raises ValueError naming the
    students who have one for a student who has none."""
    if not names:
        return names
    submitted = Path(coursedir.root) / coursedir.submitted_directory
    known = sorted({s for s, _ in submitted_units(course, coursedir)})
    for name in names:
        if name not in known:
            raise ValueError(f"no submissions from student {name!r} in {submitted}; "
                             f"students: {listed(known) if known else '(none: run `ttt-grader collect PATH` first)'}")
    return names


def fingerprint(course: Path, student: str, lesson: str, coursedir=None) -> str:
    """Returns a hash of a submission's files and of its lesson's source notebooks."""
    coursedir = coursedir or coursedir_of(course)
    return digest(coursedir.format_path(coursedir.submitted_directory, student, lesson),
                   coursedir.format_path(coursedir.source_directory, ".", lesson))


def digest(*folders) -> str:
    """Returns a hash of the files in ``folders`` (names and contents)."""
    hashed = hashlib.sha256()
    for folder in folders:
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file() and ".ipynb_checkpoints" not in path.parts:
                hashed.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return hashed.hexdigest()


def graded_folder(course: Path) -> Path:
    """The folder of the done-markers, ``STUDENT/LESSON.json``: how each submission was last graded."""
    return Path(course) / STATE / "graded"


def done_marker(course: Path, student: str, lesson: str) -> Path:
    """The file that records how a submission was last graded (its fingerprint and outcome)."""
    return graded_folder(course) / student / f"{lesson}.json"


def work_folder(course: Path) -> Path:
    """The folder of a grading run's private files (the workers' gradebooks and staging, the
    units in flight), emptied when a run starts and when it ends."""
    return Path(course) / STATE / "work"


def run_folder(course: Path) -> Path:
    """The folder of a grading run's snapshot of the lessons (``source/`` and ``release/``)."""
    return Path(course) / STATE / "run"


def in_flight(course: Path) -> Path:
    """The folder where each grading worker names the unit it is grading (``PID.json``), left
    behind if the worker dies: the run then knows which unit killed it."""
    folder = work_folder(course) / "in-flight"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
