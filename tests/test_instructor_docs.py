"""What the instructors' docs say about grading is what the lessons and the grader do: which
lessons have written answers to grade by hand (every lesson's manually graded cells, read from
the notebooks), their points, and where the cost of grading is measured."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README, INSTRUCTORS = ROOT / "README.md", ROOT / "docs" / "instructors.md"


def by_hand() -> dict[int, tuple[list[str], float, float]]:
    """{lesson number: (grade ids graded by hand, their points, the lesson's points)} for every
    lesson with a cell nbgrader leaves to a person (a graded answer or a task)."""
    found = {}
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb")):
        manual, points, total = [], 0.0, 0.0
        for cell in json.loads(path.read_text())["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if meta.get("grade") or meta.get("task"):
                total += meta.get("points", 0)
                if meta.get("task") or (meta.get("grade") and meta.get("solution")):
                    manual.append(meta["grade_id"])
                    points += meta.get("points", 0)
        if manual:
            found[int(path.name[:2])] = (manual, points, total)
    return found


def listed(items) -> str:
    words = [str(n) for n in items]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def test_the_docs_name_every_lesson_with_a_written_answer():
    lessons = by_hand()
    assert lessons, "the lessons have written answers (graded by hand)"
    assert all(len(ids) == 1 and points == 1 for ids, points, _ in lessons.values()), lessons
    sentence = f"Lessons {listed(sorted(lessons))} each have one written answer (1 point)"
    for doc in (README, INSTRUCTORS):
        text = " ".join(doc.read_text().split())
        assert sentence in text, f"{doc.name} should say: {sentence}"
        assert not re.search(r"Lesson \d+ has one written answer", text), doc.name
    text = " ".join(INSTRUCTORS.read_text().split())
    for number, (ids, _, total) in lessons.items():
        assert f"lesson {number}'s `{ids[0]}`" in text, (number, ids)
    out_of = f"out of {listed(f'{total:g} for lesson {n}' for n, (_, _, total) in sorted(lessons.items()))}"
    assert out_of in text, out_of


def test_the_docs_link_to_what_grading_costs():
    assert "(benchmarks/README.md#grading)" in README.read_text()
    assert "(benchmarks.md#grading)" in INSTRUCTORS.read_text()
    assert "### Grading" in (ROOT / "benchmarks" / "README.md").read_text()
