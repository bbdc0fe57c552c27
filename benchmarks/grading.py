"""Grading's CPU cost: ttt-grader beside what stock nbgrader does, side by side, in one run.

Three tables, each row ours, the baseline and the ratio (ours / baseline), in CPU seconds of
the whole process tree of the command (see `cpu_of`), with wall seconds beside them:

1. **The self-check, a lesson.** ``ttt-grader check LESSON.ipynb`` on the released lesson filled
   in with the instructor's solutions (as a student who got everything right saves it), against
   executing the instructor's notebook (``notebooks/LESSON.ipynb``: the solutions and the hidden
   tests in it) top to bottom in a plain kernel with nbclient, no sandbox, as nbgrader's
   autograde runs a notebook (``NBGRADER_EXECUTION`` set): what stock nbgrader does.
2. **Autograding a class, a submission.** The same class (``-n`` students a lesson: student k
   hands in the solved lesson when k is even, the untouched release when k is odd, so passing and
   failing tests both run) in two copies of one course: ``ttt-grader autograde --jobs 1`` against
   stock ``nbgrader autograde``, lesson by lesson, CPU seconds a submission; and whether both
   gradebooks hold the same scores.
3. **A check on a machine with many processes.** The first lesson's check with ``--idle`` (1,000)
   idle processes (``sleep``) on the machine, against the same check without them.

The load average and the number of processes on the machine are printed at the start and the end. Options pick the lessons, the
class size and the number of idle processes; ``--where`` adds where a notebook's time goes in a
plain kernel (kernel start, test cells, other cells), ``--cluster`` the local pool against a Dask
cluster on this machine (the ``cluster`` extra).

    python benchmarks/grading.py [-n 3] [--lesson 01-boards-and-moves,...] [--idle 1000] [--where] [--cluster]

The machine's other work skews the wall seconds more than the CPU seconds: run it when the
machine is quiet.
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

import nbformat

from grader.course import lesson_names, lesson_path
from grader.course_ops import release
from grader.processes import die_with_parent

PARTS = ("kernel start", "test cells", "other cells")
WRITTEN_ANSWER = "Products 18 and 50 are 3 x 3 x 2 and 5 x 5 x 2: two of a player's marks and an empty square."

# Runs a command as a child subreaper (prctl PR_SET_CHILD_SUBREAPER): every descendant orphaned on
# the way (a kernel, a sandbox, a process a sandbox leaves) is re-parented here and reaped, so its
# CPU time reaches this process's RUSAGE_CHILDREN, and so the caller's. Exits with the command's status.
REAPER = """
import ctypes, os, subprocess, sys, time
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
    sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed: the CPU of orphaned descendants would be lost")
code = subprocess.call(sys.argv[1:])
deadline = time.monotonic() + 60
while True:
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if pid == 0:
        if time.monotonic() > deadline:
            import psutil
            left = psutil.Process().children(recursive=True)
            print(f"cpu_of: {len(left)} descendants still running a minute after the command ended: killed",
                  file=sys.stderr)
            for p in left:
                p.kill()
            deadline = float("inf")
        time.sleep(0.05)
sys.exit(code)
"""

# Executes a notebook top to bottom in a fresh plain kernel (no sandbox), as nbgrader's autograde does.
PLAIN_KERNEL = """
import os, sys, nbformat
from nbclient import NotebookClient
os.environ["NBGRADER_EXECUTION"] = "autograde"
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True, startup_timeout=600,
               resources={"metadata": {"path": os.path.dirname(sys.argv[1])}}).execute()
failed = [c for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
sys.exit(f"{len(failed)} cells raised an error in {sys.argv[1]}" if failed else 0)
"""


def children_cpu() -> float:
    """CPU seconds (user and system) of this process's children that have ended and been reaped."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_of(command: list[str], *, cwd: Path | None = None, env: dict | None = None) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of `command` and every process it starts, run to its end.

    The command runs in a cgroup of its own where the machine gives one: the grader's sandboxes
    make theirs inside it, so its CPU counts every process of the tree, a sandbox's included
    (their processes are reaped inside their own PID namespace, and a sandbox killed with its
    namespace's first process takes its children's CPU time with it: RUSAGE_CHILDREN misses it).
    Without a cgroup, the RUSAGE_CHILDREN delta: the command runs under `REAPER`, so descendants
    it orphans are reaped too (it includes the reaper's own Python start, about 0.02 s). A
    command that fails raises, with its output."""
    from grader.processes import Cgroup

    group = Cgroup.new()
    before, start = children_cpu(), time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", REAPER, *command], cwd=cwd, env=env, capture_output=True, text=True,
                              preexec_fn=group.join if group is not None else None)
        wall, cpu = time.perf_counter() - start, children_cpu() - before
        if group is not None:
            cpu = max(cpu, group.cpu_seconds())
    finally:
        if group is not None:
            group.remove()
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} failed (exit code {done.returncode}):\n"
                           f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return cpu, wall


# -- the notebooks -------------------------------------------------------------------------------


def filled(lesson: str, released: Path) -> nbformat.NotebookNode:
    """The released `lesson` with every answer cell holding the instructor's solution (the source's
    code between the solution markers) and a sentence in each written answer."""
    solutions = {c.metadata["nbgrader"]["grade_id"]: c.source for c in nbformat.read(lesson_path(lesson), 4).cells
                 if c.cell_type == "code" and c.get("metadata", {}).get("nbgrader", {}).get("solution")}
    nb = nbformat.read(released, as_version=4)
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade_id") in solutions:
            cell.source = "\n".join(line for line in solutions[meta["grade_id"]].splitlines() if "### " not in line)
        elif cell.cell_type == "markdown" and meta.get("solution"):
            cell.source = WRITTEN_ANSWER
    return nb


def course_with_submissions(root: Path, lessons: list[str], n: int) -> Path:
    """Returns a released course with n students' submissions of every lesson: student k hands
    in the lesson filled with the solutions when k is even, the untouched release when k is odd."""
    release(root, lessons=lessons)
    for lesson in lessons:
        given = root / "release" / lesson / f"{lesson}.ipynb"
        solved = filled(lesson, given)
        for k in range(n):
            folder = root / "submitted" / f"student{k:02d}" / lesson
            folder.mkdir(parents=True)
            if k % 2 == 0:
                nbformat.write(solved, folder / f"{lesson}.ipynb")
            else:
                shutil.copyfile(given, folder / f"{lesson}.ipynb")
    return root


def scores(course: Path) -> dict:
    """{(student, lesson): score} from the course's gradebook, to check the runs agree."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {(s.student.id, s.assignment.name): round(s.score, 3) for a in gb.assignments
                for s in gb.assignment_submissions(a.name)}


# -- the commands measured -------------------------------------------------------------------------


def with_venv_path() -> dict:
    """The environment with this Python's bin first on PATH (nbgrader runs alembic from there)."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def check(notebook: Path, *, cache: Path | None = None) -> tuple[float, float]:
    """``ttt-grader check NOTEBOOK``: (CPU s, wall s). The check must pass (the solutions are right).
    `cache`: the user's cache folder for this run (where the check keeps the lessons it released)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)} if cache is not None else None
    return cpu_of([sys.executable, "-m", "grader", "check", str(notebook)], cwd=notebook.parent, env=env)


def plain_kernel(notebook: Path) -> tuple[float, float]:
    """The notebook run top to bottom in a plain kernel (nbclient, no sandbox): (CPU s, wall s)."""
    return cpu_of([sys.executable, "-c", PLAIN_KERNEL, str(notebook)], cwd=notebook.parent)


def ours(course: Path, lesson: str) -> tuple[float, float]:
    """``ttt-grader autograde --jobs 1 --lesson LESSON`` on the course: (CPU s, wall s)."""
    return cpu_of([sys.executable, "-m", "grader", "autograde", "--course", str(course), "--jobs", "1",
                   "--lesson", lesson, "-q"], env=with_venv_path())


def stock(course: Path, lesson: str) -> tuple[float, float]:
    """Stock ``nbgrader autograde LESSON`` on the course: (CPU s, wall s)."""
    return cpu_of([sys.executable, "-m", "nbgrader", "autograde", lesson, f"--CourseDirectory.root={course}"],
                  cwd=course, env=with_venv_path())


class IdleProcesses:
    """`count` idle processes (``sleep``) on the machine while in the ``with`` block; killed and reaped
    after, and killed by Linux if this script dies first."""

    def __init__(self, count: int):
        self.count, self.processes = count, []

    def __enter__(self) -> "IdleProcesses":
        try:
            for _ in range(self.count):
                self.processes.append(subprocess.Popen(["sleep", "3600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                                       stderr=subprocess.DEVNULL, preexec_fn=die_with_parent))
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *_) -> None:
        for p in self.processes:
            p.kill()
        for p in self.processes:
            p.wait()
        self.processes = []


# -- the tables ----------------------------------------------------------------------------------


HEAD = f"{'ours CPU s':>12}{'baseline CPU s':>16}{'ratio':>8}{'ours wall s':>13}{'baseline wall s':>17}"


def row(label: str, ours_: tuple[float, float], base: tuple[float, float], width: int = 34) -> str:
    """A table row: ours and the baseline, CPU then wall seconds, and the CPU ratio."""
    return (f"{label:<{width}}{ours_[0]:12.2f}{base[0]:16.2f}{ours_[0] / base[0]:7.2f}x"
            f"{ours_[1]:13.2f}{base[1]:17.2f}")


def load_average(when: str) -> None:
    """Prints the load average, and the processes on the machine (the sandbox's accounting reads them all)."""
    import psutil

    one, five, fifteen = os.getloadavg()
    print(f"load average at the {when}: {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} cores, "
          f"{len(psutil.pids()):,} processes)", flush=True)


def median_run(runs: list[tuple[float, float]]) -> tuple[float, float]:
    """The run of median CPU among `runs` ((CPU s, wall s) each)."""
    return sorted(runs)[(len(runs) - 1) // 2]


def check_table(lessons: list[str], scratch: Path, repeat: int = 1) -> dict[str, Path]:
    """Prints table 1, each row the median of `repeat` runs of each side, in turn; returns {lesson: the filled notebook}."""
    course = scratch / "check-course"
    release(course, lessons=lessons)
    print("\n1. The self-check, a lesson: ours `ttt-grader check` on the lesson filled with the solutions, checked")
    print("   again (the first check of a lesson on a machine releases it with nbgrader and keeps that: the row below);")
    print("   baseline: the instructor's notebook (solutions, hidden tests) in a plain kernel (nbclient, no sandbox)")
    if repeat > 1:
        print(f"   (each the run of median CPU among {repeat}, ours and the baseline taking turns)")
    print(f"{'lesson':<34}{HEAD}", flush=True)
    notebooks, total_ours, total_base = {}, [0.0, 0.0], [0.0, 0.0]
    for lesson in lessons:
        folder = scratch / "students-own" / lesson
        folder.mkdir(parents=True)
        notebooks[lesson] = folder / f"{lesson}.ipynb"
        nbformat.write(filled(lesson, course / "release" / lesson / f"{lesson}.ipynb"), notebooks[lesson])
        cache = scratch / "cache" / lesson  # empty: the first check releases the lesson and keeps it, the next reuse it
        first = check(notebooks[lesson], cache=cache)
        runs = [(check(notebooks[lesson], cache=cache), plain_kernel(lesson_path(lesson))) for _ in range(repeat)]
        ours_, base = median_run([o for o, _ in runs]), median_run([b for _, b in runs])
        print(row(lesson, ours_, base), flush=True)
        print(row("  its first check on a machine", first, base), flush=True)
        total_ours = [a + b for a, b in zip(total_ours, ours_)]
        total_base = [a + b for a, b in zip(total_base, base)]
    if len(lessons) > 1:
        print(row("all lessons", total_ours, total_base))
    return notebooks


def autograde_table(lessons: list[str], n: int, scratch: Path) -> None:
    """Prints table 2."""
    courses = {name: course_with_submissions(scratch / name, lessons, n) for name in ("ours", "stock")}
    print(f"\n2. Autograding a class, seconds a submission ({n} student{'s' * (n > 1)} a lesson: the solved lesson, "
          "then the blank release, in turn):")
    print("   ours `ttt-grader autograde --jobs 1`; baseline: stock `nbgrader autograde`, on the same class")
    print(f"{'lesson':<34}{HEAD}", flush=True)
    total_ours, total_base = [0.0, 0.0], [0.0, 0.0]
    for lesson in lessons:
        ours_, base = ours(courses["ours"], lesson), stock(courses["stock"], lesson)
        print(row(lesson, [x / n for x in ours_], [x / n for x in base]), flush=True)
        total_ours = [a + b for a, b in zip(total_ours, ours_)]
        total_base = [a + b for a, b in zip(total_base, base)]
    count = n * len(lessons)
    if len(lessons) > 1:
        print(row(f"all {count} submissions", [x / count for x in total_ours], [x / count for x in total_base]))
    ours_scores, stock_scores = scores(courses["ours"]), scores(courses["stock"])
    print("same scores in both gradebooks" if ours_scores == stock_scores else
          f"THE GRADEBOOKS DISAGREE: ours {sorted(ours_scores.items())}, stock {sorted(stock_scores.items())}")


def idle_table(lesson: str, notebook: Path, idle: int, repeat: int = 1) -> None:
    """Prints table 3, each side the median of `repeat` runs, taken in turn."""
    print(f"\n3. `ttt-grader check` of {lesson} with {idle:,} idle processes on the machine (ours) and without (baseline)")
    print(f"{'':<34}{HEAD}", flush=True)
    runs = []
    for _ in range(repeat):
        without = check(notebook)
        with IdleProcesses(idle):
            runs.append((check(notebook), without))
    print(row(f"{idle:,} idle processes", median_run([a for a, _ in runs]), median_run([w for _, w in runs])), flush=True)


# -- where a notebook's time goes (--where) -------------------------------------------------------


def where_time_goes(notebook: Path, *, graded: bool = True) -> dict[str, float]:
    """Seconds one notebook spends in a plain kernel: {part: seconds} for PARTS."""
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


def profile(lessons: list[str], scratch: Path) -> None:
    """Prints where each lesson's solved and blank notebooks spend their wall time in a plain kernel."""
    course = scratch / "where"
    release(course, lessons=lessons)
    print("\nwhere the time goes, one notebook in a plain kernel, wall seconds:")
    print(f"{'lesson':32}{'notebook':>9}" + "".join(f"{p:>14}" for p in PARTS), flush=True)
    for lesson in lessons:
        for kind, path in (("solved", lesson_path(lesson)), ("blank", course / "release" / lesson / f"{lesson}.ipynb")):
            spent = where_time_goes(path)
            print(f"{lesson:32}{kind:>9}" + "".join(f"{spent[p]:14.1f}" for p in PARTS), flush=True)


# -- the same course on a Dask cluster (--cluster) --------------------------------------------------


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
    cpu, start = cpu_seconds(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "autograde", "--course", str(course), "--jobs", str(jobs), "-q"],
                   check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start, cpu_seconds() - cpu


CLUSTER_VARIANTS = {"local pool --jobs 1": ("local", 1), "local pool --jobs 2": ("local", 2),
                    "--cluster, 1 worker": ("cluster", 1), "--cluster, 2 workers": ("cluster", 2)}


def cluster_comparison(lessons: list[str], n: int, scratch: Path) -> None:
    """Prints the local pool at 1 and 2 jobs beside a Dask cluster of 1 and 2 workers on the
    same course: seconds per submission, worker-seconds per submission (what a cluster pays
    for) and CPU seconds per submission (what it pays for on cores of its own, whatever this
    machine's load), with whether the gradebooks agree."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("\ncluster comparison not run: pip install 'ttt[cluster]'")
        return
    count = n * len(lessons)
    courses = {v: course_with_submissions(scratch / f"cluster-{i}", lessons, n) for i, v in enumerate(CLUSTER_VARIANTS)}
    runs = {}
    for variant, course in courses.items():
        kind, workers = CLUSTER_VARIANTS[variant]
        runs[variant] = (on_cluster(course, workers, scratch / f"dask-{workers}") if kind == "cluster"
                         else on_pool(course, workers))
    agree = len({str(sorted(scores(c).items())) for c in courses.values()}) == 1
    base = runs["local pool --jobs 1"][0]
    print(f"\nthe same {count} submissions, local pool against a Dask cluster on this machine")
    print(f"{'ttt-grader autograde':24}{'s':>8}{'s/submission':>14}{'worker-s/subm.':>16}{'CPU-s/subm.':>13}"
          f"{'speed-up':>10}")
    for name, (wall, cpu) in runs.items():
        workers = CLUSTER_VARIANTS[name][1]
        print(f"{name:24}{wall:8.1f}{wall / count:14.2f}{workers * wall / count:16.2f}{cpu / count:13.2f}"
              f"{base / wall:9.2f}x")
    print("same scores in every gradebook" if agree else "THE GRADEBOOKS DISAGREE")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=3, help="students a lesson in the autograded class (default 3)")
    parser.add_argument("--lesson", help="only these lessons (comma-separated; default all)")
    parser.add_argument("--idle", type=int, default=1000, help="idle processes for table 3 (default 1000; 0: no table 3)")
    parser.add_argument("--where", action="store_true", help="also where a notebook's time goes in a plain kernel")
    parser.add_argument("--cluster", action="store_true", help="also the local pool against a Dask cluster")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each side in tables 1 and 3, the median shown (default 3: one run's CPU varies by 10-20%%)")
    args = parser.parse_args(argv)
    lessons = args.lesson.split(",") if args.lesson else lesson_names()
    unknown = [name for name in lessons if name not in lesson_names()]
    if unknown or args.n < 1 or args.idle < 0 or args.repeat < 1:
        parser.error(f"unknown lessons {', '.join(unknown)} (the lessons: {', '.join(lesson_names())})" if unknown
                     else "-n and --repeat must be at least 1 and --idle at least 0")
    start = time.perf_counter()
    load_average("start")
    print(f"lessons: {', '.join(lessons)}; CPU: user + system seconds of the command's whole process tree")
    with tempfile.TemporaryDirectory(prefix="ttt-grading-bench-") as tmp:
        scratch = Path(tmp)
        notebooks = check_table(lessons, scratch, args.repeat)
        autograde_table(lessons, args.n, scratch)
        if args.idle:
            idle_table(lessons[0], notebooks[lessons[0]], args.idle, args.repeat)
        if args.where:
            profile(lessons, scratch)
        if args.cluster:
            cluster_comparison(lessons, args.n, scratch)
    print()
    load_average("end")
    print(f"{(time.perf_counter() - start) / 60:.1f} minutes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
