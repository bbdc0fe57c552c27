"""Grading a class: stock ``nbgrader autograde`` against ``ttt-grader autograde`` (1 and 2 jobs).

Releases every lesson in ``notebooks/`` into three fresh course directories, submits the same
N sample submissions of the whole course to each (student k hands in the solved lesson when k
is even and the untouched release when k is odd, so both passing and failing tests run), then
grades them with stock ``nbgrader autograde "*"`` (one command for every lesson),
with ``ttt-grader autograde --jobs 1`` (with and without the sandbox) and with ``--jobs 2``, and prints seconds per
submission side by side, with the machine's load when each run started, and whether every
gradebook holds the same scores; ``--jobs 1`` runs once with the sandbox and once without
(``--no-sandbox``), and the difference is the sandbox's cost a submission. While every notebook
runs in a kernel, as in stock, two jobs can at best halve stock's time (2x).

Before that it shows where the time goes: each lesson's solved and blank notebook run once
in a plain kernel, as nbgrader runs them (``NBGRADER_EXECUTION`` set), timing the kernel's
start, the test cells (the checks) and the other cells (the demonstrations, which do little
while graded; ``--student-run`` times them as a student runs them too). What stock nbgrader
spends beyond those is its own work per notebook.

    python benchmarks/grading.py [-n 4] [--lesson 01-boards-and-moves,...] [--repeat 1] [--student-run]

The machine's other work skews the numbers: run it when the machine is quiet, with
``--repeat 3`` to take the best of three rounds.
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

PARTS = ("kernel start", "test cells", "other cells")


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


def where_time_goes(notebook: Path, *, graded: bool = True) -> dict[str, float]:
    """Seconds one notebook spends in a plain kernel: {part: seconds} for PARTS."""
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    saved = os.environ.get("NBGRADER_EXECUTION")
    if graded:
        os.environ["NBGRADER_EXECUTION"] = "autograde"
    else:
        os.environ.pop("NBGRADER_EXECUTION", None)
    spent = dict.fromkeys(PARTS, 0.0)
    km = KernelManager(kernel_name="python3")
    try:
        start = time.perf_counter()
        km.start_kernel(stderr=subprocess.DEVNULL)
        client = NotebookClient(nb, km=km, timeout=600, allow_errors=True)
        with client.setup_kernel():
            client.wait_for_reply(client.kc.kernel_info())
            spent["kernel start"] = time.perf_counter() - start
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                begin = time.perf_counter()
                client.execute_cell(cell, index)
                test = cell.metadata.get("nbgrader", {}).get("grade") and not cell.metadata["nbgrader"].get("solution")
                spent["test cells" if test else "other cells"] += time.perf_counter() - begin
    finally:
        if km.has_kernel:
            km.shutdown_kernel(now=True)
        os.environ.pop("NBGRADER_EXECUTION", None)
        if saved is not None:
            os.environ["NBGRADER_EXECUTION"] = saved
    return spent


def profile(course: Path, lessons: list[str], n: int, *, student_run: bool) -> float:
    """Prints where a lesson's solved and blank notebooks spend their time; returns the seconds
    all n students' submissions spend in kernels (n/2 solved and n/2 blank of each lesson, rounded as submitted)."""
    solved, blank = (n + 1) // 2, n // 2
    print(f"where the time goes, one notebook in a plain kernel, seconds (load {os.getloadavg()[0]:.2f}):")
    head = "".join(f"{p:>14}" for p in PARTS)
    print(f"{'lesson':32}{'notebook':>9}{head}" + (f"{'others, ungraded':>18}" if student_run else ""))
    in_kernels = 0.0
    totals = dict.fromkeys(PARTS, 0.0)
    for lesson in lessons:
        for kind, path, count in (("solved", lesson_path(lesson), solved),
                                  ("blank", course / "release" / lesson / f"{lesson}.ipynb", blank)):
            spent = where_time_goes(path)
            extra = f"{where_time_goes(path, graded=False)['other cells']:18.1f}" if student_run else ""
            print(f"{lesson:32}{kind:>9}" + "".join(f"{spent[p]:14.1f}" for p in PARTS) + extra)
            for part in PARTS:
                totals[part] += count * spent[part]
            in_kernels += count * sum(spent.values())
    print(f"{'all ' + str(n * len(lessons)) + ' submissions':41}" + "".join(f"{totals[p]:14.1f}" for p in PARTS))
    return in_kernels


def stock(course: Path) -> float:
    """Seconds stock nbgrader takes to autograde every lesson of the course."""
    nbgrader = Path(sys.executable).with_name("nbgrader")
    env = {**os.environ, "PATH": f"{nbgrader.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    start = time.perf_counter()
    subprocess.run([str(nbgrader), "autograde", "*", f"--CourseDirectory.root={course}"], cwd=course,
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def ours(course: Path, jobs: int, *, sandbox: bool = True) -> float:
    """Seconds ``ttt-grader autograde --jobs N`` takes on the course (``--no-sandbox`` unless `sandbox`)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "autograde", "--course", str(course), "--jobs", str(jobs), "-q",
                    *([] if sandbox else ["--no-sandbox"])], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def scores(course: Path) -> dict:
    """{(student, lesson): score} from the course's gradebook, to check the runs agree."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {(s.student.id, s.assignment.name): round(s.score, 3) for a in gb.assignments
                for s in gb.assignment_submissions(a.name)}


# -- the same course on a Dask cluster (ttt-grader autograde --cluster) -------------------------


def cpu_seconds() -> float:
    """CPU seconds this process and its children that have ended used so far."""
    import resource

    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def on_cluster(course: Path, workers: int, scratch: Path) -> tuple[float, float]:
    """(seconds, CPU seconds) ``ttt-grader autograde --cluster`` takes on the course with
    ``workers`` Dask workers (a scheduler and worker processes on 127.0.0.1, started before the
    clock starts); the CPU time is the grader's, the scheduler's and the workers' with their kernels."""
    from distributed import Client

    from grader.cluster import LoopbackCluster

    def cluster_cpu(client) -> float:
        return sum(client.run(cpu_seconds).values()) + client.run_on_scheduler(cpu_seconds)

    with LoopbackCluster(workers, scratch) as cluster, Client(cluster.address, set_as_default=False) as client:
        cpu = cluster_cpu(client) + cpu_seconds()
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "grader", "autograde", "--course", str(course), "--cluster", cluster.address,
                        "-q"], check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        return wall, cluster_cpu(client) + cpu_seconds() - cpu


def on_pool(course: Path, jobs: int) -> tuple[float, float]:
    """(seconds, CPU seconds) ``ttt-grader autograde --jobs N`` takes on the course."""
    cpu = cpu_seconds()
    return ours(course, jobs), cpu_seconds() - cpu


CLUSTER_VARIANTS = {"local pool --jobs 1": ("local", 1), "local pool --jobs 2": ("local", 2),
                    "--cluster, 1 worker": ("cluster", 1), "--cluster, 2 workers": ("cluster", 2)}


def cluster_comparison(lessons: list[str], n: int, repeat: int) -> None:
    """Prints the local pool at 1 and 2 jobs beside a Dask cluster of 1 and 2 workers on the
    same course: seconds per submission, worker-seconds per submission (what a cluster pays
    for) and CPU seconds per submission (what it pays for on cores of its own, whatever this
    machine's load), with whether the gradebooks agree."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("cluster comparison skipped: pip install 'ttt[cluster]'")
        return
    count = n * len(lessons)
    runs = {v: [] for v in CLUSTER_VARIANTS}  # (seconds, CPU seconds) per round
    loads, agree = [], True
    with tempfile.TemporaryDirectory() as scratch:
        for round_ in range(repeat):
            courses = {v: course_with_submissions(Path(scratch) / f"c{round_}-{i}", lessons, n)
                       for i, v in enumerate(CLUSTER_VARIANTS)}
            for variant, course in courses.items():
                loads.append(os.getloadavg()[0])
                kind, workers = CLUSTER_VARIANTS[variant]
                runs[variant].append(on_cluster(course, workers, Path(scratch) / f"dask{round_}-{workers}")
                                     if kind == "cluster" else on_pool(course, workers))
            agree &= len({str(sorted(scores(c).items())) for c in courses.values()}) == 1
            for course in courses.values():
                shutil.rmtree(course)
    base = min(runs["local pool --jobs 1"])[0]
    print(f"\nthe same {count} submissions, local pool against a Dask cluster on this machine, best of {repeat}")
    print(f"1-minute load average when each run started: {min(loads):.2f} to {max(loads):.2f}")
    print(f"{'ttt-grader autograde':24}{'best s':>8}{'s/submission':>14}{'worker-s/subm.':>16}{'CPU-s/subm.':>13}"
          f"{'speed-up':>10}")
    for name, measured in runs.items():
        wall, cpu = min(measured)
        workers = CLUSTER_VARIANTS[name][1]
        print(f"{name:24}{wall:8.1f}{wall / count:14.2f}{workers * wall / count:16.2f}{cpu / count:13.2f}"
              f"{base / wall:9.2f}x")
    print("same scores in every gradebook" if agree else "THE GRADEBOOKS DISAGREE")
    plain, boxed = min(seconds[VARIANTS[1]]), min(seconds[VARIANTS[2]])
    print(f"the sandbox's cost (one job, with and without it): {(boxed - plain) / count:+.2f} s a submission "
          f"({boxed / plain:.2f}x)")


VARIANTS = ("stock nbgrader autograde", "ttt-grader autograde --jobs 1 --no-sandbox", "ttt-grader autograde --jobs 1",
            "ttt-grader autograde --jobs 2")


def grade(variant: str, course: Path) -> float:
    """Seconds one variant takes to grade the course."""
    if variant == VARIANTS[0]:
        return stock(course)
    return ours(course, int(variant.split("--jobs ")[1][0]), sandbox="--no-sandbox" not in variant)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=4, help="students (default 4)")
    parser.add_argument("--lesson", help="only these lessons (comma-separated; default all)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds, each variant once per round in turn (default 1)")
    parser.add_argument("--student-run", action="store_true", help="also time the other cells as a student runs them")
    args = parser.parse_args()
    lessons = args.lesson.split(",") if args.lesson else lesson_names()
    count = args.n * len(lessons)
    seconds = {v: [] for v in VARIANTS}
    loads = []
    agree = True
    with tempfile.TemporaryDirectory() as scratch:
        in_kernels = profile(course_with_submissions(Path(scratch) / "profile", lessons, 0), lessons, args.n,
                             student_run=args.student_run)
        for round_ in range(args.repeat):
            turn = round_ % len(VARIANTS)
            order = VARIANTS[turn:] + VARIANTS[:turn]  # each variant in each place in turn
            courses = {v: course_with_submissions(Path(scratch) / f"r{round_}-{i}", lessons, args.n)
                       for i, v in enumerate(order)}
            for variant in order:
                loads.append(os.getloadavg()[0])
                seconds[variant].append(grade(variant, courses[variant]))
            agree &= len({str(sorted(scores(c).items())) for c in courses.values()}) == 1
            for course in courses.values():
                shutil.rmtree(course)
    base = min(seconds[VARIANTS[0]])
    print(f"{count} submissions ({args.n} students x {len(lessons)} lessons: {', '.join(lessons)}), "
          f"{os.cpu_count()} cores, best of {args.repeat}")
    print(f"1-minute load average when each run started: {min(loads):.2f} to {max(loads):.2f}")
    print(f"{'':32}{'best s':>8}{'s/submission':>14}{'speed-up':>10}{'all runs (s)':>16}")
    for name, runs in seconds.items():
        print(f"{name:32}{min(runs):8.1f}{min(runs) / count:14.2f}{base / min(runs):9.2f}x   "
              + " ".join(f"{r:.1f}" for r in runs))
    print("same scores in every gradebook" if agree else "THE GRADEBOOKS DISAGREE")
    print(f"stock nbgrader's own work beyond the kernels' ({in_kernels:.1f} s): {base - in_kernels:.1f} s, "
          f"{(base - in_kernels) / count:.2f} s a notebook")


if __name__ == "__main__":
    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--cluster-only", action="store_true", help="only the local pool against the Dask cluster")
    extra.add_argument("-n", type=int, default=4)
    extra.add_argument("--lesson")
    extra.add_argument("--repeat", type=int, default=1)
    known, _ = extra.parse_known_args()
    sys.argv = [a for a in sys.argv if a != "--cluster-only"]
    if not known.cluster_only:
        main()
    cluster_comparison(known.lesson.split(",") if known.lesson else lesson_names(), known.n, known.repeat)
