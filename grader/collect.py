"""Bring submissions into nbgrader's layout: ``DIR/submitted/<student>/<lesson>/<lesson>.ipynb``.

``collect(PATH, course)`` takes a folder or a zip file (zip files inside are opened too) and
places every notebook it can. How names are mapped:

- the lesson: the first lesson name (``01-boards-and-moves``, spaces, ``_`` and ``-`` alike,
  any case) found in the notebook's file name, else in one of its folders' names;
- the student: the first folder under PATH that is not itself a lesson folder (a folder per
  student; Moodle's ``Full Name_123_assignsubmission_file_`` becomes ``Full_Name_123``), else,
  for a loose notebook, the start of its file name: Canvas's ``name_12345_67890_...`` and
  ``name_late_...`` become ``name``, Blackboard's ``Lesson_name_attempt_...`` becomes
  ``name``, and ``name-01-boards-and-moves.ipynb`` becomes ``name``;
- student ids keep letters, digits, ``.``, ``_`` and ``-`` (other characters become ``_``),
  lower-cased;
- two notebooks for the same student and lesson: the newer one wins, and the report says so.

What cannot be placed (no lesson in its name, no student) is listed in the report, with why.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.autograde import coursedir_of, lesson_notebooks

SKIP = ("__MACOSX", ".ipynb_checkpoints")


@dataclass
class CollectReport:
    """What collect did: placed (student, lesson, from), and what it could not place, with why."""

    placed: list[tuple[str, str, str]] = field(default_factory=list)
    unplaced: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        """Returns the report as lines of text."""
        students = {s for s, _, _ in self.placed}
        lines = [f"placed {len(self.placed)} notebooks for {len(students)} students"]
        lines += [f"  note: {n}" for n in self.notes]
        if self.unplaced:
            lines.append(f"could not place {len(self.unplaced)}:")
            lines += [f"  {where}: {why}" for where, why in self.unplaced]
        return "\n".join(lines)


def _key(text: str) -> str:
    return re.sub(r"[\s_\-]+", "-", text.lower())


def student_id(text: str) -> str:
    """Returns a safe nbgrader student id for a name."""
    return re.sub(r"[^a-z0-9._-]+", "_", text.strip().lower()).strip("._-") or "unknown"


def _lesson_in(text: str, lessons: list[str]) -> str | None:
    key = _key(text)
    for lesson in sorted(lessons, key=len, reverse=True):
        if _key(lesson) in key:
            return lesson
    return None


def _closest(stem: str, lessons: list[str]) -> list[str]:
    """Returns the lessons whose names are closest to ``stem`` (all of them if none is close)."""
    import difflib

    return difflib.get_close_matches(_key(stem), lessons, n=3, cutoff=0.5) or lessons


def _student_from_file(stem: str, lesson: str) -> str | None:
    canvas = re.match(r"^(?P<s>[^_]+?)(_late)?_\d+_\d+_", stem)
    if canvas:
        return canvas.group("s")
    blackboard = re.match(r"^.+?_(?P<s>[^_]+)_attempt_[\d-]+", stem)
    if blackboard:
        return blackboard.group("s")
    at = _key(stem).find(_key(lesson))
    prefix = _key(stem)[:at].strip("-") if at > 0 else ""
    return prefix or None


def _student_from_folder(name: str) -> str:
    return re.sub(r"_assignsubmission_\w*$", "", name)


def collect(source: Path, course: Path) -> CollectReport:
    """Copies every notebook under ``source`` (a folder or a zip file) into the course's
    submitted folder; returns the report of what went where and what could not be placed."""
    course = Path(course).resolve()
    coursedir = coursedir_of(course)
    lessons = list(lesson_notebooks(course, coursedir))
    if not lessons:
        raise FileNotFoundError(f"{course} has no lessons: run `ttt-grader release` first")
    if not Path(source).exists():
        raise FileNotFoundError(f"{source} does not exist: give a folder or a zip file of submissions")
    report = CollectReport()
    chosen: dict[tuple[str, str], tuple[float, Path, str]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for path, shown, mtime in _notebooks(Path(source), Path(scratch), report):
            parts = Path(shown).parts
            lesson = _lesson_in(path.stem, lessons) or next(
                (l for part in reversed(parts[:-1]) for l in [_lesson_in(part, lessons)] if l), None)
            if lesson is None:
                report.unplaced.append((shown, "no lesson name in the file's name or folders "
                                               f"(rename it to one of: {', '.join(_closest(path.stem, lessons))})"))
                continue
            folders = [p for p in parts[:-1] if not _lesson_in(p, lessons)]
            student = _student_from_folder(folders[0]) if folders else _student_from_file(path.stem, lesson)
            if not student:
                report.unplaced.append((shown, "no student: put it in a folder named after the student"))
                continue
            key = (student_id(student), lesson)
            if key in chosen:
                older, newer = sorted([chosen[key], (mtime, path, shown)], key=lambda t: t[0])
                report.notes.append(f"{key[0]}/{key[1]}: kept {newer[2]}, not {older[2]} (older)")
                chosen[key] = newer
            else:
                chosen[key] = (mtime, path, shown)
        for (student, lesson), (_, path, shown) in sorted(chosen.items()):
            folder = Path(coursedir.format_path(coursedir.submitted_directory, student, lesson))
            folder.mkdir(parents=True, exist_ok=True)
            name = lesson_notebooks(course, coursedir)[lesson][0]
            shutil.copyfile(path, folder / f"{name}.ipynb")
            report.placed.append((student, lesson, shown))
    return report


def _notebooks(source: Path, scratch: Path, report: CollectReport, prefix: str = ""):
    """Yields (path, name relative to PATH, modified time) for each notebook, opening zip files."""
    if source.is_file() and zipfile.is_zipfile(source):
        target = scratch / f"zip{len(list(scratch.iterdir()))}"
        with zipfile.ZipFile(source) as archive:
            times = {i.filename: i.date_time for i in archive.infolist()}
            for info in archive.infolist():
                name = Path(info.filename)
                if info.is_dir() or any(p in SKIP for p in name.parts) or ".." in name.parts or name.is_absolute():
                    continue
                archive.extract(info, target)
        for path in sorted(target.rglob("*")):
            rel = path.relative_to(target).as_posix()
            if path.suffix == ".ipynb":
                yield path, f"{prefix}{rel}", time.mktime(times.get(rel, (1980, 1, 1, 0, 0, 0)) + (0, 0, -1))
            elif zipfile.is_zipfile(path):
                yield from _notebooks(path, scratch, report, prefix=f"{Path(rel).parent.as_posix()}/".lstrip("./"))
        return
    if source.is_file():
        if source.suffix == ".ipynb":
            yield source, source.name, source.stat().st_mtime
        return
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source)
        if any(p in SKIP for p in rel.parts) or not path.is_file():
            continue
        if path.suffix == ".ipynb":
            yield path, rel.as_posix(), path.stat().st_mtime
        elif zipfile.is_zipfile(path):
            yield from _notebooks(path, scratch, report, prefix=f"{rel.parent.as_posix()}/".lstrip("./"))
