"""Bring submissions into nbgrader's layout: ``DIR/submitted/<student>/<lesson>/<lesson>.ipynb``.

``collect(PATH, course)`` takes a folder or a zip file and places every notebook it can. What
goes where:

- an *export* is a zip file from an LMS (Canvas, Moodle, Blackboard) or any zip or folder that
  is not one student's: PATH itself, and every zip file whose members are named the way an LMS
  names them, wherever it lies (so ``week2/canvas.zip`` and ``week3/canvas.zip`` keep each
  student; the folders above an export name no one);
- the student, inside an export: a Moodle folder ``Full Name_123_assignsubmission_file_``
  gives ``full_name_123``; a Canvas file ``name_12345_67890_...`` (or ``name_late_...``) gives
  ``name_12345`` (the LMS user id stays in the student id); Blackboard's
  ``Lesson_name_attempt_<date>_...`` gives ``name``; else the first folder that is not a lesson
  folder; else, for a loose notebook, the start of its file name (``name-01-boards-and-moves``);
- a zip file a student uploaded (one inside an export member, or in a student's folder) is
  that student's, whatever its own members are called;
- the lesson: the first lesson name (``01-boards-and-moves``, spaces, ``_`` and ``-`` alike,
  any case) in the notebook's file name, else in one of its folders' or archives' names;
- student ids keep letters (any script: ``张伟`` stays ``张伟``), digits, ``.``, ``_`` and ``-``,
  lower-cased; two different names that give the same id are not placed (neither of them), and
  the report says so;
- one LMS user id under two names (Canvas ``smithalice_10001`` and Moodle ``Alice
  Smith_10001``) is one student when the names are the same words in any order (case and
  accents aside) or come from one LMS: placed under the id an earlier collect used, else the
  first in alphabetical order, and the report notes it; under different names from different
  LMSs they are placed as two students and the report asks the instructor to look;
- the submission time is the LMS's (Blackboard's ``attempt_<date>``), else the time the export
  records for the outermost zip member, else the file's modified time. It is written to
  nbgrader's ``timestamp.txt``; of two notebooks for one student and lesson the newer is kept,
  whichever was collected first; of two with the same time, the LMS's own member (a notebook
  directly in the export) is kept over a copy inside a zip file in it, and two different
  notebooks with the same time at the same depth are not placed (the report names both).

Every member that is not placed is listed with why (not a notebook, a path that leaves the
archive, macOS or Jupyter housekeeping, too large, no lesson, no student); the report ends with
the verdict, ``48 placed in submitted/ (48 students); 1 not placed: FILE: WHY; the rest are in``,
and ``CollectReport.exit_status`` is 0 unless nothing was placed or collect stopped at a cap. A notebook over
``MAX_NOTEBOOK_BYTES`` (a large picture in its outputs) is placed with its outputs removed: its
code is what is graded. Extraction is capped: ``MAX_MEMBER_BYTES`` per member, ``MAX_TOTAL_BYTES`` and ``MAX_MEMBERS`` per collect,
archives nested at most ``MAX_DEPTH`` deep; members are read in chunks and counted as they are
read, so a zip file that lies about its sizes is stopped too.
"""

from __future__ import annotations

import calendar
import difflib
import hashlib
import itertools
import json
import re
import shutil
import tempfile
import unicodedata
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from grader.layout import STATE, coursedir_of, lesson_notebooks

SKIP = ("__MACOSX", ".ipynb_checkpoints", ".DS_Store")
MAX_MEMBER_BYTES = 128 * 2**20  # one member extracted, or one notebook read (a lesson's solved notebook is well under 1 MB)
MAX_NOTEBOOK_BYTES = 32 * 2**20  # a notebook placed; a larger one is placed with its outputs removed
MAX_TOTAL_BYTES = 2 * 2**30  # everything one collect extracts
MAX_MEMBERS = 50_000  # archive members one collect looks at
MAX_DEPTH = 3  # zip files inside zip files
_CHUNK = 2**20
STAMP = "timestamp.txt"  # nbgrader's file for the submission time
_STAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"
HOUSEKEEPING = "macOS or Jupyter housekeeping, not a submission"  # why a SKIP file was passed over

_MOODLE = re.compile(r"^(?P<s>.+?)_assignsubmission_\w*$")
_CANVAS = re.compile(r"^(?P<s>[^_]+?)(_late)?_(?P<id>\d+)_\d+_", re.I)
_NAME_ID = re.compile(r"^(?P<name>.+)_(?P<id>\d+)$")  # Moodle's "Full Name_123"
_BLACKBOARD = re.compile(r"^.+?_(?P<s>[^_]+)_attempt_(?P<t>\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d)")


class Student(NamedTuple):
    """Who a notebook is by, as its path names them: ``raw``, the name the student id is made
    from; for an LMS's member, the LMS, its user id (Canvas, Moodle) and the name it gives."""

    raw: str
    lms: str = ""
    user_id: str = ""
    name: str = ""


@dataclass
class CollectReport:
    """What collect did: placed (student, lesson, from); the notebooks it did not place (where,
    why); the members it skipped, not being submissions (where, why); where it stopped reading
    at a cap; notes (which of two notebooks was kept, one student under two names); and
    questions for the instructor (one LMS user id under two different names)."""

    placed: list[tuple[str, str, str]] = field(default_factory=list)
    unplaced: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)  # (student, lesson) whose earlier notebook is newer
    notes: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)

    @property
    def exit_status(self) -> int:
        """``ttt-grader collect``'s exit status: 0 when collect read everything and placed what
        could be placed (what it did not place is listed, with why, and was not placed for that
        reason: grade the rest); 1 when it placed nothing (and kept nothing collected before as the
        newer), or stopped reading at a cap so that some members were never looked at."""
        return 1 if self.stopped or not (self.placed or self.kept) else 0

    def text(self, submitted: str = "submitted/") -> str:
        """Returns the report as lines of text, the verdict last: ``48 placed in submitted/; 1
        not placed: FILE: WHY``."""
        lines = [f"  note: {n}" for n in self.notes]
        for title, rows in ((f"not placed ({len(self.unplaced)}):", self.unplaced),
                            (f"skipped, not submissions ({len(self.skipped)}):", self.skipped)):
            if rows:
                lines.append(title)
                lines += [f"  {where}: {why}" for where, why in rows]
        if self.questions:
            lines.append(f"to look at ({len(self.questions)}):")
            lines += [f"  {q}" for q in self.questions]
        if self.stopped:
            lines.append(f"STOPPED reading at a cap ({len(self.stopped)}): members after it were not looked at:")
            lines += [f"  {e}" for e in self.stopped]
        n, m = len(self.placed), len({s for s, _, _ in self.placed})
        verdict = f"{n} placed in {submitted} ({m} student{'s' * (m != 1)})"
        if len(self.unplaced) == 1:
            verdict += f"; 1 not placed: {self.unplaced[0][0]}: {self.unplaced[0][1]}"
        elif self.unplaced:
            verdict += f"; {len(self.unplaced)} not placed (listed above)"
        if self.stopped:
            verdict += "; collect stopped at a cap (above)"
        elif n and self.unplaced:
            verdict += "; the rest are in"
        return "\n".join([*lines, verdict])


@dataclass
class _Found:
    """One notebook found: its file on disk, where it was, the names that may hold its lesson,
    the parts that name its student (inside its export), the owner an outer archive fixed, its time."""

    path: Path
    shown: str
    lesson_parts: tuple[str, ...]
    student_parts: tuple[str, ...]
    owner: Student | None
    when: float
    depth: int = 0  # the archives it lies in: 1 for the LMS export's own member, 2 inside a zip file in that member


@dataclass
class _Budget:
    members: int = 0
    bytes: int = 0
    files: int = 0
    stopped: bool = False


def _key(text: str) -> str:
    return re.sub(r"[\s_\-]+", "-", text.lower())


def student_id(text: str) -> str:
    """Returns a safe nbgrader student id for a name ('' if nothing is left): letters of any
    script, digits, ``.``, ``_`` and ``-``, lower-cased; anything else becomes ``_``."""
    text = unicodedata.normalize("NFC", text).strip().lower()
    return re.sub(r"[^\w.-]+", "_", text).strip("._-")


def _lesson_in(text: str, lessons: list[str]) -> str | None:
    key = _key(text)
    for lesson in sorted(lessons, key=len, reverse=True):
        if _key(lesson) in key:
            return lesson
    return None


def _closest(stem: str, lessons: list[str]) -> list[str]:
    """Returns the lessons whose names are closest to ``stem`` (all of them if none is close)."""
    return difflib.get_close_matches(_key(stem), lessons, n=3, cutoff=0.5) or lessons


def _lms_student(parts: tuple[str, ...]) -> Student | None:
    """Returns the student an LMS names in a member's path: a Moodle folder, a Canvas or
    Blackboard file name; else None."""
    for part in parts[:-1]:
        moodle = _MOODLE.match(part)
        if moodle:
            named = _NAME_ID.match(moodle.group("s"))
            return Student(moodle.group("s"), "Moodle", *(named.group("id", "name") if named else ("", moodle.group("s"))))
    stem = PurePosixPath(parts[-1]).stem if parts else ""
    canvas = _CANVAS.match(stem)
    if canvas:
        return Student(f"{canvas.group('s')}_{canvas.group('id')}", "Canvas", canvas.group("id"), canvas.group("s"))
    blackboard = _BLACKBOARD.match(stem)
    return Student(blackboard.group("s"), "Blackboard", "", blackboard.group("s")) if blackboard else None


def _lms_time(parts: tuple[str, ...]) -> float | None:
    """Returns the submission time an LMS wrote into a member's name (Blackboard), else None."""
    for part in parts:
        found = _BLACKBOARD.match(PurePosixPath(part).stem)
        if found:
            return calendar.timegm(datetime.strptime(found.group("t"), "%Y-%m-%d-%H-%M-%S").timetuple())
    return None


def _student(parts: tuple[str, ...], lesson: str | None, lessons: list[str]) -> Student | None:
    """Returns the student a path inside an export names (see the module's docstring)."""
    lms = _lms_student(parts)
    if lms:
        return lms
    folders = [p for p in parts[:-1] if not _lesson_in(p, lessons)]
    if folders:
        return Student(folders[0])
    if lesson is None:
        return None
    stem = _key(PurePosixPath(parts[-1]).stem)
    at = stem.find(_key(lesson))
    return Student(stem[:at].strip("-")) if at > 0 and stem[:at].strip("-") else None


def _name_keys(name: str) -> set[str]:
    """The ways a name's words run together, any order, case and accents ignored: Canvas's
    ``smithalice`` and Moodle's ``Alice Smith`` share ``smithalice``."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c)).casefold()
    words = re.findall(r"[^\W_]+", folded)
    if len(words) > 5:
        return {"".join(words), "".join(sorted(words))}
    return {"".join(order) for order in itertools.permutations(words)}


def _one_person(a: Student, b: Student) -> bool:
    """True if two names with one LMS user id are one student: one LMS (it gave the user id: the
    name changed), or the same name in both."""
    return a.lms == b.lms or bool(_name_keys(a.name) & _name_keys(b.name))


def _stamp(when: float) -> str:
    return datetime.fromtimestamp(when, timezone.utc).strftime(_STAMP_FORMAT)


def _stamped(folder: Path) -> float | None:
    """Returns the submission time in a submission folder's timestamp.txt, if it has one."""
    try:
        text = (folder / STAMP).read_text().strip()
        return datetime.strptime(text, _STAMP_FORMAT).replace(tzinfo=timezone.utc).timestamp()
    except (OSError, ValueError):
        return None


def _digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def collect(source: Path, course: Path, *, max_member_bytes: int = MAX_MEMBER_BYTES,
            max_total_bytes: int = MAX_TOTAL_BYTES, max_members: int = MAX_MEMBERS) -> CollectReport:
    """Copies every notebook under ``source`` (a folder or a zip file) into the course's
    submitted folder; returns the report of what went where, what was skipped and why."""
    course = Path(course).resolve()
    coursedir = coursedir_of(course)
    lessons = list(lesson_notebooks(course, coursedir))
    if not lessons:
        raise FileNotFoundError(f"{course} has no lessons: run `ttt-grader release` first")
    if not Path(source).exists():
        raise FileNotFoundError(f"{source} does not exist: give a folder or a zip file of submissions")
    report = CollectReport()
    caps = {"member": max_member_bytes, "total": max_total_bytes, "members": max_members}
    ledger_path = course / STATE / "collected.json"
    try:
        ledger = json.loads(ledger_path.read_text())
        known_names: dict[str, str] = dict(ledger["names"])
        known_lms = {sid: Student(*who) for sid, who in ledger.get("lms", {}).items()}
    except (OSError, ValueError, KeyError, TypeError):
        known_names, known_lms = {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        walker = _Walker(Path(scratch), report, _Budget(), caps, lessons)
        candidates: dict[tuple[str, str], list[tuple[float, _Found, str]]] = {}
        names: dict[str, set[str]] = {}
        seen: dict[str, tuple[Student, str]] = {}  # student id -> who, the first file of theirs
        for found in walker.walk(Path(source)):
            lesson = next((l for part in reversed(found.lesson_parts) for l in [_lesson_in(PurePosixPath(part).stem, lessons)] if l), None)
            if lesson is None:
                stem = PurePosixPath(found.lesson_parts[-1]).stem
                report.unplaced.append((found.shown, "no lesson name in the file's name or folders "
                                                     f"(rename it to one of: {', '.join(_closest(stem, lessons))})"))
                continue
            who = found.owner or _student(found.student_parts, lesson, lessons)
            sid = student_id(who.raw) if who else ""
            if not sid:
                why = ("no student: put it in a folder named after the student" if not who else
                       f"the student name {who.raw!r} has no letter or digit to make an id from")
                report.unplaced.append((found.shown, why))
                continue
            raw = unicodedata.normalize("NFC", who.raw).strip()
            names.setdefault(sid, set()).add(raw)
            seen.setdefault(sid, (who, found.shown))
            candidates.setdefault((sid, lesson), []).append((found.when, found, raw))
        clashing = {sid for sid, raws in names.items()
                    if len(raws) > 1 or (sid in known_names and known_names[sid] not in raws)}
        for sid in sorted(clashing):
            shown = sorted(names[sid] | ({known_names[sid]} if sid in known_names else set()))
            why = (f"{' and '.join(map(repr, shown))} would both be student {sid!r}: nothing of theirs was placed; "
                   "put their notebooks in folders with distinct names")
            report.unplaced += [(f.shown, why) for (s, _), group in sorted(candidates.items()) if s == sid for _, f, _ in group]
        alias = _one_student_each({sid: who for sid, (who, _) in seen.items() if sid not in clashing},
                                  {sid: shown for sid, (_, shown) in seen.items()}, known_lms, report)
        merged: dict[tuple[str, str], list[tuple[float, _Found, str]]] = {}
        for (sid, lesson), found in sorted(candidates.items()):
            if sid not in clashing:
                merged.setdefault((alias.get(sid, sid), lesson), []).extend(found)
        for (sid, lesson), found in sorted(merged.items()):
            if _place(course, coursedir, lessons, sid, lesson, found, report) and sid in seen:
                known_names[sid] = next(iter(names[sid]))
                if seen[sid][0].user_id:
                    known_lms[sid] = seen[sid][0]
    ledger_path.parent.mkdir(parents=True, exist_ok=True)
    ledger_path.write_text(json.dumps({"names": known_names, "lms": {sid: list(who) for sid, who in known_lms.items()}},
                                      ensure_ascii=False, indent=1))
    return report


def _one_student_each(current: dict[str, Student], files: dict[str, str], known: dict[str, Student],
                      report: CollectReport) -> dict[str, str]:
    """Finds the students this collect (``current``: id -> who) and earlier ones (``known``)
    name twice under one LMS user id: one student when ``_one_person`` says so (placed under
    the id an earlier collect used, else the first in alphabetical order; noted), else a
    question for the instructor (placed as different students). Returns {id: the id it is placed as}."""
    by_user: dict[str, list[str]] = {}
    for sid, who in sorted({**known, **current}.items()):
        if who.user_id:
            by_user.setdefault(who.user_id, []).append(sid)
    alias: dict[str, str] = {}

    def shown(sid: str) -> str:
        who = current.get(sid) or known[sid]
        return f"{sid} ({who.lms}, {files[sid] if sid in files else 'collected before'})"

    for user, sids in by_user.items():
        if not any(sid in current for sid in sids):
            continue  # asked or noted when they were collected
        people: list[list[str]] = []
        for sid in sids:
            who = current.get(sid) or known[sid]
            same = next((group for group in people if any(_one_person(who, current.get(o) or known[o]) for o in group)), None)
            (same.append(sid) if same is not None else people.append([sid]))
        for group in (g for g in people if len(g) > 1):
            before = [sid for sid in group if sid in known]
            into = before[0] if before else group[0]
            alias.update({sid: into for sid in group if sid not in known})
            if len(before) > 1:
                report.questions.append(f"{' and '.join(map(shown, before))} have one LMS user id ({user}) and one name "
                                        f"but were placed as {len(before)} students by earlier collects; new notebooks of "
                                        f"theirs go to {into}: move the others' lesson folders in submitted/ by hand if "
                                        "they are one student")
            elif [sid for sid in group if sid != into and sid in current]:
                report.notes.append(f"{' and '.join(map(shown, group))} are one student (LMS user id {user}, "
                                    f"the same name): placed as {into}")
        if len(people) > 1:
            report.questions.append(f"{' and '.join(shown(g[0]) for g in people)} have the same LMS user id ({user}) "
                                    f"under different names: placed as {len(people)} students; if they are one, "
                                    "move one's lesson folders into the other's in submitted/ before grading")
    return alias


def _place(course: Path, coursedir, lessons, sid: str, lesson: str, found: list, report: CollectReport) -> bool:
    """Places the newest of a student's notebooks for a lesson, unless the one already
    collected is newer; returns whether it placed one. Of notebooks with the newest time, the
    LMS's own member (the one fewest archives deep) is kept over a copy inside a zip file the
    student uploaded; two different ones at the same depth are not placed (neither is known to
    be the newer: the report names both). A notebook over ``MAX_NOTEBOOK_BYTES`` is placed with
    its outputs removed."""
    found.sort(key=lambda t: t[0])
    when = found[-1][0]
    newest_all = [f for w, f, _ in found if w == when]
    shallowest = min(f.depth for f in newest_all)
    top = [f for f in newest_all if f.depth == shallowest]
    newest = top[-1]
    ties = [f for f in top[:-1] if _digest(f.path) != _digest(newest.path)]
    if ties:
        why = (f"{sid}/{lesson}: {newest.shown} and {ties[0].shown} have the same submission time and differ, so "
               "neither is known to be the newer: nothing placed; collect the right one alone")
        report.unplaced += [(f.shown, why) for f in (newest, *ties)]
        return False
    for other in newest_all:
        if other.depth > shallowest and _digest(other.path) != _digest(newest.path):
            report.notes.append(f"{sid}/{lesson}: kept {newest.shown}, not {other.shown} (the same submission time: "
                                "the LMS's own member is kept over a copy inside a zip file in it)")
    for w, older, _ in found:
        if w < when and older.shown != newest.shown:
            report.notes.append(f"{sid}/{lesson}: kept {newest.shown}, not {older.shown} (older)")
    folder = Path(coursedir.format_path(coursedir.submitted_directory, sid, lesson))
    name = lesson_notebooks(course, coursedir)[lesson][0]
    target = folder / f"{name}.ipynb"
    before = _stamped(folder) if target.exists() else None
    if before is not None and before > when:
        report.notes.append(f"{sid}/{lesson}: kept the notebook collected before ({_stamp(before)}), "
                            f"not {newest.shown} ({_stamp(when)}, older)")
        report.kept.append((sid, lesson))
        return False
    if before is not None and before == when and _digest(target) != _digest(newest.path):
        report.unplaced.append((newest.shown, f"{sid}/{lesson}: the same submission time as the notebook collected "
                                              "before, and different from it: not placed (the one collected before is kept)"))
        return False
    size = newest.path.stat().st_size
    if size > MAX_MEMBER_BYTES:
        report.unplaced.append((newest.shown, f"too large: {size / 2**20:.0f} MB, more than the "
                                              f"{MAX_MEMBER_BYTES / 2**20:g} MB a notebook may have"))
        return False
    slim = _without_outputs(newest.path) if size > MAX_NOTEBOOK_BYTES else None
    if slim is not None and len(slim) > MAX_NOTEBOOK_BYTES:
        report.unplaced.append((newest.shown, f"too large: {len(slim) / 2**20:.0f} MB even without its outputs, more "
                                              f"than the {MAX_NOTEBOOK_BYTES / 2**20:g} MB a notebook may have"))
        return False
    folder.mkdir(parents=True, exist_ok=True)
    if slim is not None:
        target.write_bytes(slim)
        report.notes.append(f"{sid}/{lesson}: {newest.shown} is {size / 2**20:.0f} MB, more than "
                            f"{MAX_NOTEBOOK_BYTES / 2**20:g} MB: placed with its outputs removed "
                            f"({len(slim) / 2**20:.1f} MB; its code is what is graded)")
    else:
        shutil.copyfile(newest.path, target)
    (folder / STAMP).write_text(_stamp(when))
    report.placed.append((sid, lesson, newest.shown))
    return True


def _without_outputs(path: Path) -> bytes | None:
    """Returns a notebook's JSON with every code cell's outputs removed, or None if it is not a notebook."""
    try:
        nb = json.loads(Path(path).read_bytes())
        cells = nb["cells"]
    except (ValueError, KeyError, TypeError):
        return None
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return json.dumps(nb, ensure_ascii=False, indent=1).encode()


class _Walker:
    """Finds the notebooks under a folder or zip file, extracting archives under the caps."""

    def __init__(self, scratch: Path, report: CollectReport, budget: _Budget, caps: dict, lessons: list[str]):
        self.scratch, self.report, self.budget, self.caps, self.lessons = scratch, report, budget, caps, lessons

    def walk(self, source: Path):
        """Yields a _Found per notebook under ``source``."""
        if source.is_file():
            if zipfile.is_zipfile(source):
                yield from self._archive(source, source.name, (source.name,), owner=None, when=None, depth=1)
            elif source.suffix == ".ipynb":
                yield _Found(source, source.name, (source.name,), (source.name,), None, source.stat().st_mtime)
            else:
                self.report.skipped.append((source.name, _not_a_notebook(source.name)))
            return
        for path in sorted(source.rglob("*")):
            rel = path.relative_to(source)
            if not path.is_file():
                continue
            parts = rel.parts
            if any(p in SKIP for p in parts):
                self.report.skipped.append((rel.as_posix(), HOUSEKEEPING))
            elif path.suffix == ".ipynb":
                yield _Found(path, rel.as_posix(), parts, parts, None, _lms_time(parts) or path.stat().st_mtime)
            elif zipfile.is_zipfile(path):
                owner = None if self._is_export(path) else _student(parts, None, self.lessons)
                yield from self._archive(path, rel.as_posix(), parts, owner=owner, when=None, depth=1)
            else:
                self.report.skipped.append((rel.as_posix(), _not_a_notebook(path.name)))

    def _is_export(self, path: Path) -> bool:
        """True if a zip file's members are named the way an LMS names them."""
        try:
            with zipfile.ZipFile(path) as archive:
                return any(_lms_student(_parts(i.filename)) for i in archive.infolist()[:10_000] if not i.is_dir())
        except (zipfile.BadZipFile, OSError):
            return False

    def _archive(self, path: Path, shown: str, outer: tuple[str, ...], *, owner: Student | None, when: float | None, depth: int):
        """Yields the notebooks in a zip file: ``outer`` names it (for lessons), ``owner`` is
        the student an outer member fixed (None: an export), ``when`` the outer member's time."""
        budget, report = self.budget, self.report
        try:
            archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as error:
            report.unplaced.append((shown, f"not a readable zip file ({error})"))
            return
        with archive:
            for info in archive.infolist():
                if info.is_dir():
                    continue
                where = f"{shown}:{info.filename}"
                if budget.stopped:
                    report.skipped.append((where, "not read: collect stopped at a cap (see below)"))
                    continue
                budget.members += 1
                if budget.members > self.caps["members"]:
                    budget.stopped = True
                    report.stopped.append(f"{where}: more than {self.caps['members']:,} archive members in all; "
                                         "collect stopped reading archives here (is this a zip bomb?)")
                    report.skipped.append((where, "not read: over the cap on members"))
                    continue
                parts = _parts(info.filename)
                if parts is None:
                    report.skipped.append((where, "its path leaves the archive (.., an absolute path or a drive): not extracted"))
                    continue
                if any(p in SKIP for p in parts):
                    report.skipped.append((where, HOUSEKEEPING))
                    continue
                name = parts[-1]
                is_zip = name.lower().endswith(".zip")
                if not (name.endswith(".ipynb") or is_zip):
                    report.skipped.append((where, _not_a_notebook(name)))
                    continue
                if is_zip and depth >= MAX_DEPTH:
                    report.skipped.append((where, f"a zip file inside {depth} zip files: not opened (at most {MAX_DEPTH} deep)"))
                    continue
                target = self._extract(archive, info, where)
                if target is None:
                    continue
                stamp = when if when is not None else _lms_time(parts) or calendar.timegm(info.date_time + (0, 0, 0))
                member_owner = owner
                if is_zip:
                    if member_owner is None:
                        member_owner = _student(parts, None, self.lessons)
                    yield from self._archive(target, where, outer + parts, owner=member_owner, when=stamp, depth=depth + 1)
                else:
                    yield _Found(target, where, outer + parts, parts, member_owner, stamp, depth)

    def _extract(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, where: str) -> Path | None:
        """Copies one member to the scratch folder under the caps; returns its path, or None
        (listed as skipped, with an error for a cap) if it could not be extracted."""
        budget, caps = self.budget, self.caps
        budget.files += 1
        target = self.scratch / f"m{budget.files}{PurePosixPath(info.filename.replace(chr(92), '/')).suffix.lower()}"
        size = 0
        try:
            with archive.open(info) as src, open(target, "wb") as dst:
                while chunk := src.read(_CHUNK):
                    size += len(chunk)
                    budget.bytes += len(chunk)
                    if size > caps["member"]:
                        self.report.unplaced.append((where, f"expands to more than {caps['member'] / 2**20:g} MB "
                                                            "(the cap for one member): not extracted"))
                        break
                    if budget.bytes > caps["total"]:
                        budget.stopped = True
                        self.report.stopped.append(f"{where}: the archives expand to more than "
                                                  f"{caps['total'] / 2**30:g} GB in all (the cap): collect stopped here")
                        self.report.skipped.append((where, "not read: over the cap on total size"))
                        break
                    dst.write(chunk)
                else:
                    return target
        except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError) as error:
            self.report.unplaced.append((where, f"could not be extracted ({type(error).__name__}: {error})"))
        target.unlink(missing_ok=True)
        return None


def _parts(filename: str) -> tuple[str, ...] | None:
    """Returns a member name's parts ('\\' read as '/', as Windows tools write it), or None if
    the path would leave the archive (a '..' part, an absolute path, a drive letter)."""
    name = filename.replace("\\", "/")
    parts = tuple(p for p in name.split("/") if p not in ("", "."))
    if name.startswith("/") or ".." in parts or re.match(r"^[A-Za-z]:", name) or not parts:
        return None
    return parts


def _not_a_notebook(name: str) -> str:
    if name.endswith(".py"):
        return "a Python file, not a notebook (a CS50 tictactoe.py is graded with `ttt-grader check FILE`)"
    return "not a notebook (.ipynb) or a zip file"
