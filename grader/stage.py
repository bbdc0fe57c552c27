"""Staging a submission for nbgrader: a copy of the student's files, mended where nbgrader
cannot read it, with a line for the instructor on each of the lesson's cells the student changed.

A notebook that is missing or is not valid JSON is replaced in the copy by the lesson's blank
release notebook with a note at the top saying why, so its tests score zero and the feedback says
what happened; a lone notebook under another name is graded under the lesson's name. A locked cell
made into another kind of cell is put back from the lesson (nbgrader would refuse the whole
notebook on its checksum). What nbgrader will then mend itself (a deleted test cell, a duplicated
or unknown cell id, a changed cell type, lock or points, an edited locked cell) is found here, by
comparing the copy with the lesson, and reported in the same words.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

from grader.cells import is_test_cell, unreadable
from grader.layout import digest, lesson_notebooks

BLANK_NOTE = "**Not graded as submitted.**"


def _blank(path: Path, release: Path, why: str) -> None:
    """Writes the lesson's blank release notebook at ``path``, with a note saying why."""
    import nbformat

    nb = nbformat.read(release, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(
        f"{BLANK_NOTE} {why}. The lesson's blank notebook was graded in its place, so its tests score zero."))
    nbformat.write(nb, path)


def _only_files(left_out: list, folder: str, names: list[str]) -> set[str]:
    """``shutil.copytree``'s ignore: what is not a plain file or folder (a symbolic link, a device, a pipe)
    is never copied, read or followed, and its name is noted in `left_out`; checkpoints are left out too.
    A submission's folder is written by students (or an LMS export): a link in it to another student's
    notebook, the lessons' source or /dev/zero would otherwise be read by the grader."""
    import os
    import stat

    skipped = set()
    for name in names:
        if name == ".ipynb_checkpoints":
            skipped.add(name)
            continue
        try:
            mode = os.lstat(os.path.join(folder, name)).st_mode
        except OSError:
            mode = 0
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            skipped.add(name)
            left_out.append(name)
    return skipped


def stage(course: Path, student: str, lesson: str, *, into: Path, coursedir, blank_all: str = "") -> tuple[list[str], str]:
    """Copies a submission to ``into`` and mends what nbgrader cannot read; returns the problems
    and the fingerprint of what was copied (with the lesson's source), so that a submission
    replaced while it is graded is graded again by the next run."""
    import nbformat

    shutil.rmtree(into, ignore_errors=True)
    left_out: list[str] = []
    shutil.copytree(coursedir.format_path(coursedir.submitted_directory, student, lesson), into,
                    ignore=functools.partial(_only_files, left_out), symlinks=True)
    release = Path(coursedir.format_path(coursedir.release_directory, ".", lesson))
    source = Path(coursedir.format_path(coursedir.source_directory, ".", lesson))
    staged = digest(into, source)
    expected = lesson_notebooks(course, coursedir)[lesson]
    extra = sorted(p for p in into.glob("*.ipynb") if p.stem not in expected)
    problems = [f"{name} is a symbolic link or not a regular file: left out (the grader, which may run as root, "
                "never follows one)" for name in left_out]
    problems += [f"{path.name} carried the grader's own report in its metadata; it was removed before grading"
                 for path in sorted(into.glob("*.ipynb")) if _without_report(path)]
    for name in expected:
        path, blank = into / f"{name}.ipynb", blank_all
        if not blank and not path.exists():
            if len(expected) == 1 and len(extra) == 1:
                problems.append(f"graded {extra[0].name} as {path.name}")
                extra[0].rename(path)
            else:
                blank = f"No notebook named {path.name} was submitted"
        if not blank:
            try:
                nb = nbformat.read(path, as_version=4)
                restored = _restored_cells(nb, release / f"{name}.ipynb")
                if restored:
                    nbformat.write(nb, path)
                problems += restored + _edited_cells(nb, release / f"{name}.ipynb", source / f"{name}.ipynb")
                problems += _changed_cells(nb, release / f"{name}.ipynb")
            except Exception as error:  # invalid JSON, not a notebook, unreadable
                blank = unreadable(path.name, error)
        if blank:
            problems.append(blank)
            _blank(path, release / f"{name}.ipynb", blank)
    return problems, staged


def _without_report(path: Path) -> bool:
    """Takes the re-check's report (``grader.preprocessors.RECHECK_REPORT``) out of a submitted
    notebook's metadata, where only the grader may write it; returns whether it was there."""
    from grader.preprocessors import RECHECK_REPORT

    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False  # not a notebook: said when it is read
    metadata = nb.get("metadata") if isinstance(nb, dict) else None
    if not isinstance(metadata, dict) or RECHECK_REPORT not in metadata:
        return False
    del metadata[RECHECK_REPORT]
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return True


def _locked(cells: dict) -> dict[str, str]:
    """Returns {grade id: source} of the locked cells among `cells` ({grade id: cell})."""
    return {grade_id: c.source for grade_id, c in cells.items() if c.metadata["nbgrader"].get("locked")}


def _ids(nb) -> dict:
    """Returns {grade id: cell} of a notebook's nbgrader cells (the first of each id)."""
    found = {}
    for cell in nb.cells:
        found.setdefault(_nbgrader_id(cell), cell)
    found.pop(None, None)
    return found


_KIND_FLAGS = ("grade", "solution", "locked", "points")  # the nbgrader metadata that says what a cell is


def _restored_cells(nb, release: Path) -> list[str]:
    """Puts back, from the lesson's release, each locked cell whose kind the student changed (a test cell
    made into an answer cell: its nbgrader metadata no longer that of the lesson, which nbgrader refuses
    on its checksum, grading none of the notebook); returns a problem for each. nbgrader then grades the
    restored cell as any other test cell, hidden tests and all."""
    import copy

    given = {k: c for k, c in _cells_in(release, release.stat().st_mtime).items() if c.metadata["nbgrader"].get("locked")}
    problems = []
    for index, cell in enumerate(nb.cells):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        original = given.get(meta.get("grade_id"))
        if original is None:
            continue
        wanted = original.metadata["nbgrader"]
        if cell.cell_type == original.cell_type and all(meta.get(k) == wanted.get(k) for k in _KIND_FLAGS):
            continue
        restored = copy.deepcopy(original)
        if "id" in cell:
            restored["id"] = cell["id"]
        nb.cells[index] = restored
        what = "test cell" if wanted.get("grade") and not wanted.get("solution") else "locked cell"
        became = "an answer cell" if meta.get("solution") else "another kind of cell"
        problems.append(f"{what} {wanted['grade_id']} had been made into {became} (its nbgrader metadata changed); "
                        "it was restored from the lesson before grading")
    return problems


def _edited_cells(nb, release: Path, source: Path) -> list[str]:
    """Returns a problem for each locked cell of the release that the student changed (a cell
    that matches the source version, hidden tests and all, counts as unchanged)."""
    given = _locked(_ids(nb))
    original = _locked(_cells_in(source, source.stat().st_mtime))
    return [f"locked cell {grade_id} was edited; nbgrader restored it from the source"
            for grade_id, text in _locked(_cells_in(release, release.stat().st_mtime)).items()
            if grade_id in given and given[grade_id] not in (text, original.get(grade_id))]



def _changed_cells(nb, release: Path) -> list[str]:
    """Returns a line for each change to the lesson's cells that nbgrader mends while it grades (its
    OverwriteCells and DeduplicateIds steps): a test cell deleted (restored from the lesson), a cell
    id that appears more than once (the copies graded as ordinary cells), a cell id the lesson does
    not have (graded as an ordinary cell), a cell's type, lock or points changed (put back)."""
    given = _cells_in(release, release.stat().st_mtime)
    ids = [_nbgrader_id(c) for c in nb.cells if _nbgrader_id(c)]
    answered = {_nbgrader_id(c) for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
                or c.metadata.get("nbgrader", {}).get("solution")}
    problems = [f"{'test' if is_test_cell(cell) else 'graded'} cell {grade_id} was deleted; nbgrader restored it from the source"
                for grade_id, cell in given.items() if cell.metadata["nbgrader"].get("grade") and grade_id not in answered]
    seen = set()
    for cell in nb.cells:
        grade_id = _nbgrader_id(cell)
        if grade_id is None:
            continue
        if ids.count(grade_id) > 1:
            if grade_id not in seen:
                problems.append(f"cell id {grade_id} appears more than once; the copies are graded as ordinary cells")
            seen.add(grade_id)
            continue
        original = given.get(grade_id)
        if original is None:
            problems.append(f"cell {grade_id} is not in the lesson; graded as an ordinary cell")
            continue
        meta, wanted = cell.metadata["nbgrader"], original.metadata["nbgrader"]
        changed = {"cell_type": cell.cell_type != original.cell_type,
                   "locked": bool(meta.get("locked")) != bool(wanted.get("locked")),
                   "points": bool(meta.get("grade")) and float(meta.get("points") or 0) != float(wanted.get("points") or 0)}
        problems += [f"cell {grade_id}: its {what} was changed; nbgrader put it back" for what, yes in changed.items() if yes]
    return problems


def _nbgrader_id(cell) -> str | None:
    """A cell's grade id, if nbgrader treats it as one of the lesson's cells (graded, an answer or locked)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta.get("grade_id") if (meta.get("grade") or meta.get("solution") or meta.get("locked")) else None


@functools.lru_cache(maxsize=64)
def _cells_in(path: Path, mtime: float) -> dict:
    """Returns {grade id: cell} of the nbgrader cells of the notebook at `path` (a lesson's release)."""
    import nbformat

    return _ids(nbformat.read(path, as_version=4))
