"""Release, feedback and export: nbgrader's own commands and gradebook, run over a whole course."""

from __future__ import annotations

import csv
from pathlib import Path

from grader.gradebook import failed_units, new_gradebook
from grader.layout import (chosen_lessons, chosen_students, coursedir_of, graded_folder, lesson_notebooks, released,
                           submitted_units)
from grader.nbconfig import grading_config


def _api(course: Path):
    from nbgrader.apps import NbGraderAPI

    config = grading_config(course)
    return NbGraderAPI(coursedir=coursedir_of(course, config), config=config)


def _checked(result: dict, what: str) -> None:
    if not result["success"]:
        detail = (result.get("error") or result.get("log") or "").strip()
        raise RuntimeError(f"{what} failed:\n{detail}")


def release(course: Path, *, lessons: list[str] | None = None, setup: bool = True) -> list[str]:
    """Sets the course up from ``notebooks/`` (unless ``setup`` is False: use ``source/`` as it
    is), then runs nbgrader's generate_assignment for every lesson; returns the lessons."""
    course = Path(course).resolve()
    if setup:
        from grader.course import make_course

        make_course(course, lessons=lessons)
    api = _api(course)
    new_gradebook(api.coursedir.db_url)
    names = [l for l in lesson_notebooks(course) if not lessons or l in lessons]
    if not names:
        raise FileNotFoundError(f"no lessons in {course / 'source'}")
    for lesson in names:
        _checked(api.generate_assignment(lesson, force=True, create=True), f"generate_assignment {lesson}")
    return names


def feedback(course: Path, *, students: list[str] | None = None, lessons: list[str] | None = None) -> list[Path]:
    """Runs nbgrader's generate_feedback for every autograded submission (hidden tests and
    their tracebacks left out); returns the HTML files written. A submission whose feedback fails
    does not stop the others': `FeedbackFailed` (a RuntimeError) names them after all are done."""
    course = Path(course).resolve()
    api = _api(course)
    coursedir = api.coursedir
    lessons = chosen_lessons(lessons, list(released(course, coursedir)))
    students = chosen_students(students, course, coursedir)
    written, failed = [], []
    for student, lesson in submitted_units(course, coursedir):
        if (students and student not in students) or (lessons and lesson not in lessons):
            continue
        if not Path(coursedir.format_path(coursedir.autograded_directory, student, lesson)).is_dir():
            continue
        try:  # one submission's trouble never stops the others' feedback
            _checked(api.generate_feedback(lesson, student, force=True), f"feedback for {student}/{lesson}")
        except RuntimeError as error:
            failed.append(str(error))
            continue
        pages = sorted(Path(coursedir.format_path(coursedir.feedback_directory, student, lesson)).glob("*.html"))
        _name_test_links(pages, Path(coursedir.format_path(coursedir.source_directory, ".", lesson)))
        written += pages
    if failed:
        raise FeedbackFailed(written, failed)
    return written


class FeedbackFailed(RuntimeError):
    """Feedback could not be written for some submissions; ``written`` holds the pages written for the rest."""

    def __init__(self, written: list[Path], failed: list[str]) -> None:
        super().__init__(f"feedback written for {len(written)} page(s), but it failed for {len(failed)} submission(s):\n"
                         + "\n".join(failed))
        self.written, self.failed = written, failed


def _name_test_links(pages: list[Path], source: Path) -> None:
    """Rewrites each feedback page so its summary names the function each test cell grades."""
    import nbformat

    from grader.feedback import name_test_links

    for page in pages:
        notebook = source / f"{page.stem}.ipynb"
        if notebook.is_file():
            page.write_text(name_test_links(page.read_text(encoding="utf-8"), nbformat.read(notebook, as_version=4)), encoding="utf-8")


def points(score: float | None) -> str:
    """Returns a score as the CSV shows it: one decimal, two where needed (3.0, 1.5, 0.25);
    blank for None (nothing submitted)."""
    if score is None:
        return ""
    text = f"{round(score, 2):.2f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


POSSIBLE = "Points Possible"  # the row under the header giving each column's most points (as Canvas's CSV does)
FAILED = "FAILED"  # a lesson whose last grading failed: its gradebook score, if any, is not current


def export(course: Path, out: Path, *, detail: bool = False) -> list[dict]:
    """Writes the gradebook as CSV: a row per student, a column per lesson (blank when nothing
    was submitted, FAILED when the last grading of the submission failed, so that no earlier
    score passes for a current one), the total of what was graded, and what the re-check found
    suspicious; with ``detail``, a column
    per graded cell too. The first row, ``Points Possible``, gives each column's maximum.
    Returns the students' rows, scores as written (see ``points``)."""
    from nbgrader.api import Gradebook, MissingEntry

    course = Path(course).resolve()
    coursedir = coursedir_of(course)
    released(course, coursedir)
    failed = failed_units(course)
    rows = []
    with Gradebook(coursedir.db_url) as gb:
        lessons = sorted(a.name for a in gb.assignments)
        cells = {l: [(nb.name, c.name, c.max_score) for nb in gb.find_assignment(l).notebooks for c in nb.grade_cells]
                 for l in lessons} if detail else {}
        most = {l: gb.find_assignment(l).max_score for l in lessons}
        possible = {"student": POSSIBLE, **{l: points(most[l]) for l in lessons}, "total": points(sum(most.values())),
                    **{f"{l}:{c}": points(m) for l, graded in cells.items() for _, c, m in graded}}
        for student in sorted(s.id for s in gb.students):
            scores = {}
            for lesson in lessons:
                try:
                    scores[lesson] = gb.find_submission(lesson, student).score
                except MissingEntry:
                    scores[lesson] = None
            scores["total"] = sum(v for l, v in scores.items() if v is not None and (student, l) not in failed)
            for lesson, graded in cells.items():
                for notebook, cell, _ in graded:
                    try:
                        scores[f"{lesson}:{cell}"] = gb.find_grade(cell, notebook, lesson, student).score
                    except MissingEntry:
                        scores[f"{lesson}:{cell}"] = None
            row = {"student": student, **{k: points(v) for k, v in scores.items()}, "suspicious": suspicious(course, student)}
            for lesson in lessons:
                if (student, lesson) in failed:
                    row.update({lesson: FAILED, **{f"{lesson}:{c}": FAILED for _, c, _ in cells.get(lesson, [])}})
            rows.append(row)
        header = ["student", *lessons, "total", "suspicious", *(f"{l}:{c}" for l, g in cells.items() for _, c, _ in g)]
    out = Path(out)
    with out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header)
        writer.writeheader()
        writer.writerow(possible)
        writer.writerows(rows)
    return rows


def suspicious(course: Path, student: str) -> str:
    """Returns what the last autograde's re-check found suspicious in a student's submissions,
    as ``lesson: what; ...``, the first line of each (empty if nothing)."""
    import json

    found = []
    for marker in sorted((graded_folder(course) / student).glob("*.json")):
        try:
            notes = json.loads(marker.read_text()).get("suspicious") or []
        except ValueError:
            continue
        found += [f"{marker.stem}: {note.splitlines()[0] if note else note}" for note in notes]  # one line each: a spreadsheet cell
    return "; ".join(found)


def max_scores(course: Path) -> dict[str, float]:
    """Returns {lesson: the most points it gives}."""
    from nbgrader.api import Gradebook

    course = Path(course).resolve()
    coursedir = coursedir_of(course)
    released(course, coursedir)
    with Gradebook(coursedir.db_url) as gb:
        return {a.name: a.max_score for a in gb.assignments}
