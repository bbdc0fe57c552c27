"""``ttt-grader``: grade a whole class with nbgrader, in parallel, safe against broken submissions.

    ttt-grader release                 set the course up and generate the student notebooks
    ttt-grader collect PATH            bring submissions into DIR/submitted/<student>/<lesson>/
    ttt-grader autograde --jobs 2      grade everything submitted into DIR/gradebook.db
    ttt-grader feedback                HTML feedback per student (hidden tests not shown)
    ttt-grader export -o grades.csv    a row per student, a column per lesson
    ttt-grader check tictactoe.py      grade a plain CS50-format file with the same checks
    ttt-grader check LESSON.ipynb      a student's own lesson notebook, graded as autograde grades it

Every command takes ``--course DIR`` (default ``./course``; for ``check``, only when given).
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import os
import sys
from pathlib import Path

from grader.course import MEMORY_MB
from grader.cs50file import CPU_SECONDS


def _names(text: str | None) -> list[str] | None:
    return [t for t in text.split(",") if t] if text else None


NO_SANDBOX = ("run student code without the sandbox (unsafe: it can then read and change the course, the "
              "installation and other students' grades); only where bubblewrap cannot run, by your own choice")


COLLECT_STATUS = (
    "It lists every notebook it did not place and every member it skipped, with why, and ends with a line such as "
    "'48 placed in course/submitted/ (48 students); 1 not placed: FILE: WHY; the rest are in'. Exit status: 0 when "
    "it read everything and placed what could be placed (what it did not place is listed; grade the rest); 1 when "
    "it placed nothing, or stopped reading at a cap (a zip bomb) so that some members were never looked at; 2 when "
    "PATH or the course is missing.")
AUTOGRADE_STATUS = (
    "One command at a time writes a course's gradebook: a second autograde (or release) on the same course is "
    "refused at once, naming the running one (pid, since when). Exit status: 0 when everything was graded; 1 when "
    "a submission could not be graded (listed) or there was nothing to grade; 2 on a usage error or a course "
    "already in use; 128+N when stopped by signal N (130 Ctrl-C, 143 SIGTERM): it prints what it finished and "
    "what it did not, stops its workers and sandboxes and removes its scratch folders; run it again to grade the rest.")


def _only_some(sub: argparse.ArgumentParser) -> None:
    """The options of a command that can work on some students' or lessons' submissions only."""
    sub.add_argument("--student", help="only these students (comma-separated)")
    sub.add_argument("--lesson", help="only these lessons (comma-separated; a unique prefix such as 01 will do)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ttt-grader", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, help_text, course_help="the nbgrader course directory (default: ./course)", course=Path("course"),
                epilog=None):
        sub = commands.add_parser(name, help=help_text, description=help_text, epilog=epilog)
        sub.add_argument("--course", type=Path, default=course, metavar="DIR", help=course_help)
        return sub

    sub = command("release", "set the course up from notebooks/ and generate the student versions in DIR/release/")
    sub.add_argument("--lesson", help="only these lessons (comma-separated)")
    sub.add_argument("--no-setup", action="store_true", help="use DIR/source as it is; do not copy the lessons")

    sub = command("collect", "bring submissions (folders, notebooks, LMS zip files) into DIR/submitted/",
                  epilog=COLLECT_STATUS)
    sub.add_argument("path", type=Path, help="a folder or a zip file of submissions")

    sub = command("autograde", "grade every submission into DIR/gradebook.db, students in parallel",
                  epilog=AUTOGRADE_STATUS)
    sub.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="parallel workers (default: one per core)")
    _only_some(sub)
    sub.add_argument("--force", action="store_true", help="grade again what an earlier run graded")
    sub.add_argument("--timeout", type=int, help="CPU seconds a cell may use, in the notebook's kernel and in the "
                                                 "re-check (default: Execute.timeout in nbgrader_config.py: 120 for the "
                                                 "lessons); a busy machine makes a cell slow, never failed")
    sub.add_argument("--notebook-timeout", type=int, metavar="SECONDS", help="CPU seconds a whole notebook's cells may "
                     "use (default: SafeExecute.notebook_timeout in nbgrader_config.py: 600 for the lessons)")
    sub.add_argument("--stall-timeout", type=int, metavar="SECONDS", help="wall seconds a notebook's cells may spend "
                     "waiting without computing (sleeping, or waiting for what never comes), in all: the one limit "
                     "the clock sets (default: SafeExecute.stall_timeout, 60)")
    sub.add_argument("--memory", type=int, metavar="MB", help=f"memory cap per kernel (default {MEMORY_MB})")
    sub.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    sub.add_argument("--cluster", metavar="ADDRESS", default=os.environ.get("DASK_SCHEDULER_ADDRESS") or None,
                     help="grade on the Dask cluster whose scheduler is at ADDRESS, such as tcp://10.0.0.5:8786 "
                          "(default: $DASK_SCHEDULER_ADDRESS; needs pip install 'ttt[cluster]'; --jobs is then unused)")
    sub.add_argument("--no-sandbox", action="store_true", help=NO_SANDBOX)

    sub = command("feedback", "write nbgrader's HTML feedback for every graded submission")
    _only_some(sub)

    sub = command("export", "write the grades as CSV: a row per student, a column per lesson; a blank "
                            "cell means the student submitted nothing for that lesson (0.0 is a graded zero)")
    sub.add_argument("-o", "--output", type=Path, default=Path("grades.csv"), help="the CSV file (default grades.csv)")
    sub.add_argument("--detail", action="store_true", help="add a column per graded cell")

    sub = command("check", "check a lesson notebook with the hidden tests, as autograde grades it (a student's "
                           "self-check), or grade a plain CS50-format tictactoe.py with the lessons' checks",
                  course_help="a lesson notebook is checked against this course's lessons and settings "
                              "(default: the lessons that come with ttt)", course=None)
    sub.add_argument("file", type=Path, nargs="?", help="a lesson notebook (LESSON.ipynb, as last saved) or a tictactoe.py")
    sub.add_argument("--prepare", action="store_true", help="release every lesson into your cache folder once, so that "
                     "each lesson's first check is as quick as the later ones (make lab does it)")
    sub.add_argument("--json", action="store_true", help="print the results as JSON")
    sub.add_argument("--timeout", type=float, default=None,
                     help=f"CPU seconds each function's check (a notebook: each cell) may use (default {CPU_SECONDS})")
    sub.add_argument("--no-sandbox", action="store_true", help=NO_SANDBOX)
    return parser


GRADER_EXTRA = ("nbgrader", "nbclient", "nbconvert", "jupyter_client", "nbformat", "psutil", "platformdirs")  # pyproject.toml


def main(argv: list[str] | None = None) -> int:
    """Runs a ttt-grader command; returns the exit status (0 when everything went well)."""
    args = _parser().parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except ModuleNotFoundError as error:  # `pip install ttt` alone: the library, not the grader
        if (error.name or "").split(".")[0] not in GRADER_EXTRA:
            raise
        print(f"ttt-grader {args.command} needs {error.name.split('.')[0]}, which comes with the grader extra: "
              "pip install 'ttt[grader]' (make setup installs it)", file=sys.stderr)
        return 2
    except (FileNotFoundError, RuntimeError, ValueError) as error:
        print(f"ttt-grader {args.command}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nttt-grader {args.command}: interrupted; what was recorded is kept, run it again to go on",
              file=sys.stderr)
        return 130


def _release(args) -> int:
    from grader.course_ops import release
    from grader.gradebook import writer_lock

    with writer_lock(args.course, "release"):  # it writes the gradebook: never while autograde does
        lessons = release(args.course, lessons=_names(args.lesson), setup=not args.no_setup)
    print(f"released {len(lessons)} lessons into {args.course / 'release'}: {', '.join(lessons)}")
    return 0


def _collect(args) -> int:
    from grader.collect import collect

    report = collect(args.path, args.course)
    print(report.text(submitted=f"{args.course / 'submitted'}/"))
    return report.exit_status


def _unsandboxed(args) -> None:
    """Says loudly that student code runs without the sandbox, when the instructor asked for that."""
    if getattr(args, "no_sandbox", False):
        print(f"ttt-grader {args.command}: WARNING: --no-sandbox: student code runs as {getpass.getuser()}, with your "
              "files, network and processes; a submission can read and change the course and other grades",
              file=sys.stderr)


def _autograde(args) -> int:
    from grader.autograde import RunStopped, autograde, summary

    _unsandboxed(args)

    try:
        outcomes = autograde(args.course, jobs=args.jobs, students=_names(args.student), lessons=_names(args.lesson),
                             force=args.force, timeout=args.timeout, memory_mb=args.memory,
                             notebook_timeout=args.notebook_timeout, stall_timeout=args.stall_timeout,
                             progress=not args.quiet, cluster=args.cluster,
                             sandbox=not args.no_sandbox)
    except RunStopped as stop:
        return _stopped(stop, summary)
    if not outcomes:
        if args.student or args.lesson:
            print(f"nothing in {args.course / 'submitted'} from those students for those lessons")
        else:
            print(f"nothing submitted in {args.course / 'submitted'} (run `ttt-grader collect PATH` first)")
        return 1
    print(summary(outcomes))
    return 1 if any(o.error for o in outcomes) else 0


def _stopped(stop, summary) -> int:
    """What a run stopped by a signal says: the table of what it finished, the submissions it did
    not grade; its exit status is 128 + the signal's number, as a shell reports a process the
    signal ended (130 for Ctrl-C, 143 for SIGTERM)."""
    import signal

    name = signal.Signals(stop.signum).name
    with contextlib.suppress(OSError):  # SIGHUP: the terminal may be gone
        if stop.finished:
            print(summary(stop.finished))
        left = [f"{student}/{lesson}" for student, lesson in stop.unfinished]
        stopped = f"ttt-grader autograde: stopped by {name}"
        if not stop.finished and not left:
            print(f"{stopped} before it began grading: nothing was changed",
                  file=sys.stderr)
            return 128 + stop.signum
        print(f"{stopped}: {len(stop.finished)} submission(s) graded and recorded, "
              f"{len(left)} not graded{': ' + ', '.join(left) if left else ''}. Its workers, kernels and sandboxes "
              "were stopped and its scratch folders removed; run `ttt-grader autograde` again to grade the rest "
              "(what is recorded is kept).", file=sys.stderr)
    return 128 + stop.signum


def _feedback(args) -> int:
    from grader.course_ops import feedback

    written = feedback(args.course, students=_names(args.student), lessons=_names(args.lesson))
    if not written:
        print(f"ttt-grader feedback: nothing autograded in {args.course} yet"
              f"{' for those students and lessons' if args.student or args.lesson else ''}: "
              "run `ttt-grader autograde` first", file=sys.stderr)
        return 1
    print(f"wrote {len(written)} feedback files under {args.course / 'feedback'}")
    return 0


def _export(args) -> int:
    from grader.course_ops import export, max_scores

    rows = export(args.course, args.output, detail=args.detail)
    if not rows:
        print(f"warning: nothing has been graded in {args.course} yet (run `ttt-grader autograde`); "
              f"{args.output} has only the header", file=sys.stderr)
    from grader.course_ops import FAILED

    out_of = ", ".join(f"{lesson} {points:g}" for lesson, points in max_scores(args.course).items())
    print(f"wrote {len(rows)} students to {args.output} (points available: {out_of})")
    failed = [f"{r['student']} / {k}" for r in rows for k, v in r.items() if v == FAILED and ":" not in k]
    if failed:
        print(f"warning: the last grading failed for {len(failed)} submissions, shown as {FAILED} "
              f"(run `ttt-grader autograde` again): {', '.join(failed)}", file=sys.stderr)
    return 0


def _check(args) -> int:
    if args.prepare:
        from grader.selfcheck import prepare

        print(f"ttt-grader check: {len(prepare())} lessons ready: a first check is as quick as the later ones")
        if args.file is None:
            return 0
    if args.file is None:
        raise ValueError("name a lesson notebook or a tictactoe.py to check (or --prepare)")
    if args.file.suffix.lower() == ".ipynb":
        return _check_notebook(args)
    from grader.cs50file import check_file, report

    _unsandboxed(args)

    results = check_file(args.file, timeout=CPU_SECONDS if args.timeout is None else args.timeout,
                         sandbox=not args.no_sandbox)
    print(json.dumps([r.as_dict() for r in results], indent=1) if args.json else report(results))
    return 0 if all(r.passed for r in results) else 1


def _check_notebook(args) -> int:
    """A lesson notebook: graded in a one-student temporary course by autograde's own pipeline."""
    import warnings

    from grader.selfcheck import check_notebook, report

    if args.no_sandbox:
        print(f"ttt-grader check: WARNING: --no-sandbox: the notebook's code runs as {getpass.getuser()}, with your "
              "files, network and processes, not in the sandbox the grading uses", file=sys.stderr)
    warnings.filterwarnings("ignore")  # nbformat's and nbgrader's notes on a student's notebook
    result = check_notebook(args.file, course=args.course, sandbox=not args.no_sandbox,
                            timeout=None if args.timeout is None else max(1, round(args.timeout)))
    print(json.dumps(result.as_dict(), indent=1) if args.json else report(result))
    return 0 if result.passed else 1


_COMMANDS = {"release": _release, "collect": _collect, "autograde": _autograde,
             "feedback": _feedback, "export": _export, "check": _check}
