"""Grading a class: stock ``nbgrader autograde`` against ``ttt-grader autograde`` (1 and 2 jobs).

Releases every lesson in ``notebooks/`` into three fresh course directories, submits the same
N sample submissions of the whole course to each (student k hands in the solved lesson when k
is even and the untouched release when k is odd, so both passing and failing tests run), then
grades them with stock ``nbgrader autograde`` (one command per lesson, as nbgrader is used),
with ``ttt-grader autograde --jobs 1`` and with ``--jobs 2``, and prints seconds per
submission side by side, with the machine's load before and after. The goals: no slower than
stock at one job, at least 1.7x faster at two jobs on two cores.

    python benchmarks/grading.py [-n 4] [--lesson 01-boards-and-moves,...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.course import lesson_names, lesson_path
from grader.course_ops import release


def course_with_submissions(root: Path, lessons: list[str], n: int) -> Path:
    """Returns a released course with n students' submissions of every lesson."""
    release(root, lessons=lessons)
    for k in range(n):
        for lesson in lessons:
            folder = root / "submitted" / f"student{k:02d}" / lesson
            folder.mkdir(parents=True)
            given = lesson_path(lesson) if k % 2 == 0 else root / "release" / lesson / f"{lesson}.ipynb"
            shutil.copyfile(given, folder / f"{lesson}.ipynb")
    return root


def stock(course: Path, lessons: list[str]) -> float:
    """Seconds stock nbgrader takes to autograde every lesson of the course."""
    nbgrader = Path(sys.executable).with_name("nbgrader")
    env = {**os.environ, "PATH": f"{nbgrader.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    start = time.perf_counter()
    for lesson in lessons:
        subprocess.run([str(nbgrader), "autograde", lesson, f"--CourseDirectory.root={course}"], cwd=course,
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def ours(course: Path, jobs: int) -> float:
    """Seconds ``ttt-grader autograde --jobs N`` takes on the course."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "autograde", "--course", str(course), "--jobs", str(jobs), "-q"],
                   check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def scores(course: Path) -> dict:
    """{(student, lesson): score} from the course's gradebook, to check the runs agree."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {(s.student.id, s.assignment.name): round(s.score, 3) for a in gb.assignments
                for s in gb.assignment_submissions(a.name)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=4, help="students (default 4)")
    parser.add_argument("--lesson", help="only these lessons (comma-separated; default all)")
    args = parser.parse_args()
    lessons = args.lesson.split(",") if args.lesson else lesson_names()
    count = args.n * len(lessons)
    with tempfile.TemporaryDirectory() as scratch:
        courses = {name: course_with_submissions(Path(scratch) / name, lessons, args.n)
                   for name in ("stock", "jobs1", "jobs2")}
        load_before = os.getloadavg()
        seconds = {"stock nbgrader autograde": stock(courses["stock"], lessons),
                   "ttt-grader autograde --jobs 1": ours(courses["jobs1"], 1),
                   "ttt-grader autograde --jobs 2": ours(courses["jobs2"], 2)}
        load_after = os.getloadavg()
        agree = scores(courses["stock"]) == scores(courses["jobs1"]) == scores(courses["jobs2"])
    base = seconds["stock nbgrader autograde"]
    print(f"{count} submissions ({args.n} students x {len(lessons)} lessons: {', '.join(lessons)}), "
          f"{os.cpu_count()} cores")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    print(f"{'':32}{'total s':>9}{'s/submission':>14}{'speed-up':>10}")
    for name, s in seconds.items():
        print(f"{name:32}{s:9.1f}{s / count:14.2f}{base / s:9.2f}x")
    print("same scores in all three gradebooks" if agree else "THE GRADEBOOKS DISAGREE")


if __name__ == "__main__":
    main()
