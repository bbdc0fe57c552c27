"""Grade again where the submission cannot reach: the test cells run in the trusted grader, the
submission's functions in its sandbox.

nbgrader runs a submission's cells and its tests in one kernel, so code in the submission can bend
the tests (replace ``grader.checks``' functions, return a ``str`` whose ``__eq__`` is always True,
swallow every later cell). After the notebook has run, and before nbgrader scores it, the re-check
(``grader.preprocessors.Recheck``, a step of nbgrader's autograde pipeline) runs each test cell
again with the roles split by what each process can reach:

- the submission's *definitions* (functions, classes, imports and assignments of every code cell,
  ``grader.remote``) are loaded into a student server inside the unit's sandbox
  (``grader.sandbox``): its own user, no network, read-only installation, only its own folder;
- the test cells (the instructor's, as nbgrader restored them, hidden tests included) and the
  lesson's own cells (imports, helpers, the lesson's game), both taken from the lesson's notebook
  as the grader holds it (the course's source), never from the submission) run here, in the trusted grader, with the submission's functions as
  proxies that carry plain values across (None, bool, int, float, str and tuples, lists, sets
  and dicts of them, rebuilt here). A lying ``str`` subclass arrives as the plain ``str`` it
  holds; nothing the submission runs can reach a check, a counter, the reference or a verdict.
  The functions the lesson hands the student ready-made are the grader's own here; where a check
  counts the positions a search examines through them, the sandbox's copies note each board they
  are passed and the notes come with the call's answer (``grader.checks.student.counting_positions``):
  the student's process says which boards it showed them, as it would by calling them, and the
  check judges the positions themselves.

A test cell's verdict is written into its outputs (a failure as an error output), so nbgrader's
own scoring gives it full points or none, once; the re-check can only lower what the notebook earned. A submission is listed as suspicious when a visible test passed in
the notebook and fails here, when its functions returned subclasses of plain types, or when its
code reaches for the machinery of the process (frames, the garbage collector, signals, other
processes, the file system, sockets): a note for the instructor, never a change of grade.

Limits: each test cell has the course's cell limit in CPU seconds, spent by the submission's
functions in the sandbox (``grader.remote`` stops a call past it, or one that makes no progress:
it sleeps); a busy machine makes a cell slow, never failed.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
from pathlib import Path
from typing import Callable, NamedTuple

from ttt.limits import over_limit

from grader.cells import is_test
from grader.kernel import CUT_SHORT

OUTPUT_CHARS = 20_000  # the most a test cell's output keeps here
LESSON_CELL_SECONDS = 10.0  # CPU seconds a statement of the lesson's own cells may spend in the submission's functions
OUT_OF_TIME = "TimeoutError"  # the error a test cell out of CPU time shows (a Python name a student knows)
# What nbgrader tells its kernels, told to the re-check too: the lessons' demonstrations (a whole
# game tree, a tournament) shrink while graded, here as in the notebook (``ttt.autograding``).
RECHECK_ENV = {"NBGRADER_EXECUTION": "autograde"}
# What a submission's own code has no business reaching for: a note for the instructor when it does.
REACHING = {
    "_getframe": "the interpreter's frames", "f_back": "the interpreter's frames", "f_globals": "the interpreter's frames",
    "get_objects": "the garbage collector", "get_referrers": "the garbage collector", "__subclasses__": "every class",
    "ast_transformers": "IPython's cell handling", "input_transformers_post": "IPython's cell handling",
    "input_transformers_cleanup": "IPython's cell handling", "set_custom_exc": "IPython's cell handling",
    "register_magic_function": "IPython's cell handling", "settrace": "the interpreter's tracing",
    "setprofile": "the interpreter's tracing", "setitimer": "signals", "pthread_sigmask": "signals",
    "setrlimit": "resource limits", "fork": "new processes", "forkpty": "new processes", "execve": "new processes",
    "setsid": "new processes", "Popen": "new processes", "spawnv": "new processes",
    "posix_spawn": "new processes", "posix_spawnp": "new processes", "BlockingKernelClient": "other kernels",
    "find_connection_file": "other kernels",
    # a function remade from another's code escapes the checks' traps under a new identity
    "__code__": "functions' code", "__wrapped__": "functions' code", "__globals__": "functions' code",
    "__closure__": "functions' code", "FunctionType": "functions' code", "CodeType": "functions' code",
    "getsource": "the package's source", "__file__": "the package's source",
}
# Attributes that reach outside only on these modules (``moves.remove(m)`` is a list's own)
REACHING_ON = {"os": {"system": "new processes", "popen": "new processes",  # not os.times().system
                      "kill": "other processes", "killpg": "other processes", "remove": "the file system",
                      "unlink": "the file system", "rmdir": "the file system", "rename": "the file system",
                      "makedirs": "the file system", "symlink": "the file system", "chmod": "the file system",
                      "walk": "the file system", "listdir": "the file system", "scandir": "the file system"},
               "shutil": {"rmtree": "the file system", "copytree": "the file system", "move": "the file system"},
               "glob": {"glob": "the file system"}, "sys": {"modules": "the import machinery"}}
_THREADS = "threads (code running between the checks)"
REACHING_MODULES = {"gc": "the garbage collector", "ctypes": "raw memory", "subprocess": "new processes",
                    "socket": "the network", "sqlite3": "databases", "signal": "signals", "multiprocessing": "new processes",
                    "jupyter_client": "other kernels", "resource": "resource limits", "shutil": "the file system",
                    "importlib": "the import machinery", "inspect": "the interpreter's frames",
                    "threading": _THREADS, "_thread": _THREADS,
                    "concurrent": _THREADS,
                    "marshal": "functions' code"}
GRADER_FOR_LESSONS = ("grader.checks", "grader.selfcheck")  # what a lesson's cells import of the grader: the rest is its machinery


class Verdict(NamedTuple):
    """A test cell's re-check: passed or not, why not, what it printed, its error (name and
    value, as the feedback shows it), whether the error came from a hidden check (not a
    visible test), and a note for the instructor when a check says the failure is suspicious."""

    passed: bool
    message: str = ""
    output: str = ""
    ename: str = ""
    evalue: str = ""
    hidden: bool = False
    suspicious: str = ""  # what the failure tells the instructor, when it suggests cheating rather than a slip


UNIT_SCRATCH = "ttt-grader-unit-"  # a re-check's copy of a unit's folder: ttt-grader-unit-PID-..., PID the process that made it


def unit_scratch_prefix(pid: int | None = None) -> str:
    """The name a re-check's copies of unit folders begin with in process ``pid`` (default: this
    one), so that they can be told apart and removed once that process is gone."""
    return f"{UNIT_SCRATCH}{os.getpid() if pid is None else pid}-"


NO_VERDICT = Verdict(False, "the re-check gave no verdict", ename="NoVerdict",
                     evalue="the re-check gave this test cell no verdict")


class StudentLauncher:
    """The launcher a submission's student server is started with (``grader.remote``): in a sandbox
    of its own (``grader.sandbox``) whose only writable folder is a scratch copy of the unit's folder
    (the submission's own files, which its code may import or read), made under `under` (default:
    the temporary folder, a grading worker's own). ``close`` removes every copy it made, whatever the
    submission's code left in them: called once the servers are stopped, at the unit's end."""

    def __init__(self, *, memory_mb: int | None = None, under: Path | None = None) -> None:
        from grader.sandbox import Limits

        self.limits = Limits(memory_mb=memory_mb) if memory_mb else Limits()
        self.under = under
        self.scratch: list[Path] = []

    def __call__(self, argv, *, cwd, **popen_kwargs):
        import tempfile

        from grader.sandbox import Sandbox, copy_folder

        scratch = Path(tempfile.mkdtemp(prefix=unit_scratch_prefix(), dir=self.under))
        self.scratch.append(scratch)
        copy_folder(Path(cwd), scratch)
        return Sandbox([scratch], env={**RECHECK_ENV}, limits=self.limits).popen(argv, cwd=scratch, **popen_kwargs)

    def close(self) -> None:
        """Removes the scratch copies (their servers stopped); raises OSError when one could not be removed."""
        from grader.sandbox import remove_folder

        while self.scratch:
            remove_folder(self.scratch.pop())


def student_launcher(*, memory_mb: int | None = None, under: Path | None = None) -> StudentLauncher:
    """Returns a :class:`StudentLauncher`: the submission's student server in a sandbox, on a scratch copy
    of the unit's folder (under `under`), capped at `memory_mb` (default: the sandbox's)."""
    return StudentLauncher(memory_mb=memory_mb, under=under)


# -- in the grader ----------------------------------------------------------------------------


def code_cells(path: Path) -> list[dict]:
    """The code cells of the notebook at `path`, read as plain JSON (nbformat takes seconds to import)."""
    with open(path, encoding="utf-8") as handle:
        return plain_cells(json.load(handle).get("cells", []))


def plain_cells(cells) -> list[dict]:
    """The code cells among `cells` (a notebook's, as JSON or nbformat nodes), each as its source
    and its nbgrader metadata."""
    found = []
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        meta = cell.get("metadata", {}).get("nbgrader", {}) if isinstance(cell.get("metadata"), dict) else {}
        found.append({"source": "".join(source) if isinstance(source, list) else str(source),
                      "meta": meta if isinstance(meta, dict) else {}})
    return found


def run(path: Path, *, lesson: Path, timeout: float = 120.0, launcher: Callable | None = None) -> tuple[dict[str, Verdict], list[str]]:
    """Re-checks the submission at `path` (nbgrader's output) against the lesson's notebook as the
    grader holds it, `lesson`; returns ({grade id: Verdict}, suspicious notes), as ``judge``."""
    return judge(code_cells(path), code_cells(lesson), timeout=timeout, launcher=launcher, folder=Path(path).parent)


def judge(submitted: list[dict], lesson: list[dict], *, folder: Path, timeout: float = 120.0, stall_seconds: float = 60.0,
          launcher: Callable | None = None) -> tuple[dict[str, Verdict], list[str]]:
    """Re-checks a submission's code cells (``plain_cells``; its files in `folder`) against the
    lesson's as the grader holds them (the course's source: its test cells, hidden tests and all,
    and its own cells run here; its answers never run); returns ({grade id: Verdict}, suspicious
    notes). Nothing of the submission runs here: its definitions are loaded into a student server
    (``launcher`` starts it, in the sandbox), and no test cell's source is taken from it."""
    from grader.checks.reference import graded_kinds
    from grader.remote import Remote, RemoteFailure, SandboxNotStarted, python_source

    tests = {c["meta"].get("grade_id"): c["source"] for c in lesson if is_test(c["meta"])}
    handed = _handed(lesson)
    # the submission's own cells (not its test cells: those are the grader's, and run here)
    cells = [c["source"] for c in submitted if not is_test(c["meta"])]
    load = {"cells": cells, "cpu": timeout, "traps": graded_kinds(_answered(lesson) + _answered(submitted))}
    remote = Remote(load, launcher=launcher, cwd=Path(folder), handed=handed,
                    stall_seconds=stall_seconds)
    notes = _reaching(submitted, lesson)
    verdicts: dict[str, Verdict] = {}
    saved = {name: os.environ.get(name) for name in RECHECK_ENV}
    os.environ.update(RECHECK_ENV)  # the lesson's own cells see what the kernel saw: demonstrations shrink here too
    try:
        try:
            remote.start()
        except SandboxNotStarted:
            raise
        except RemoteFailure as error:  # its own top-level code ended the process: every test fails, saying so
            said = (f"the notebook's code stopped the process it was loaded into ({error}), so none of its "
                    "functions could be called")
            return {g: Verdict(False, said, remote.take_output()[:OUTPUT_CHARS], "NotebookStopped", said) for g in tests}, notes
        remote.take_output()  # what the definitions printed while loading is no test's output
        namespace = remote.namespace()
        for cell in lesson:
            meta = cell["meta"]
            if meta.get("solution"):
                continue  # the student's answer: loaded in the sandbox
            if is_test(meta):
                grade_id = str(meta.get("grade_id"))
                verdicts[grade_id] = _run_test(python_source(tests[grade_id]), grade_id, namespace, remote, timeout)
                continue
            _define(python_source(cell["source"]), namespace, remote, min(timeout, LESSON_CELL_SECONDS))
        notes += [f"{note}: lying about its value? (graded on the plain value it holds)" for note in remote.subclasses]
        notes += [f"cell {grade_id}: {verdict.suspicious}" for grade_id, verdict in verdicts.items() if verdict.suspicious]
    finally:
        remote.close()
        if isinstance(launcher, StudentLauncher):  # the server is stopped: its scratch copies go now
            launcher.close()
        for name, value in saved.items():
            os.environ.pop(name, None) if value is None else os.environ.__setitem__(name, value)
    return verdicts, list(dict.fromkeys(notes))


def _handed(lesson: list[dict]) -> set[str]:
    """The names the lesson's own cells import from the package: the functions handed to the student."""
    from grader.remote import python_source

    names: set[str] = set()
    for cell in lesson:
        if cell["meta"].get("solution") or is_test(cell["meta"]):
            continue
        try:
            tree = ast.parse(python_source(cell["source"]))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("ttt", "grader"):
                names.update(alias.asname or alias.name for alias in node.names)
    return names


def _answered(lesson: list[dict]) -> list[str]:
    """The functions the lesson's solution cells define: what the student writes."""
    from grader.remote import python_source

    names = []
    for cell in lesson:
        if cell["meta"].get("solution"):
            with contextlib.suppress(SyntaxError):
                names += [node.name for node in ast.parse(python_source(cell["source"])).body if isinstance(node, ast.FunctionDef)]
    return names


def _define(source: str, namespace: dict, remote, timeout: float) -> None:
    """Runs the definitions of one of the lesson's own cells here (imports, functions, classes,
    assignments); the rest (plots, tournaments, widgets) is left out, as a failing statement is."""
    from grader.remote import KEPT, RemoteError, RemoteFailure

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    for statement in tree.body:
        if not isinstance(statement, KEPT):
            continue
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                    remote.budget(timeout):
                exec(compile(ast.Module(body=[statement], type_ignores=[]), "<lesson cell>", "exec"), namespace)
        except (Exception, RemoteError, RemoteFailure):  # noqa: BLE001  (a definition that fails is left out, as
            continue  # a failing cell's would be; what the submission's functions raised or did there is theirs)
    remote.take_output()


class _Printed(io.StringIO):
    """What a test cell prints, kept to its first OUTPUT_CHARS characters."""

    def write(self, text: str) -> int:
        room = OUTPUT_CHARS - self.tell()
        if room > 0:
            super().write(text[:room] if len(text) <= room else text[:room] + CUT_SHORT)
        return len(text)


def _run_test(source: str, grade_id: str, namespace: dict, remote, timeout: float) -> Verdict:
    """Runs one test cell here, the submission's functions called in the sandbox; returns its verdict."""
    from grader.checks import student
    from grader.checks.failures import CheckFailed, OutOfCpuTime, _picture

    last_call: list = [None]
    watching = student.WATCH_CALLS.set(lambda call, board: last_call.__setitem__(0, (call, board)))
    printed = _Printed()
    passed, message, ename, evalue, hidden, suspicious = True, "", "", "", False, ""
    try:
        tree = compile(source, f"<test cell {grade_id}>", "exec")
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed), remote.budget(timeout):
            exec(tree, namespace)
    except BaseException as error:  # noqa: BLE001  (any error fails the test, as in nbgrader)
        if isinstance(error, (KeyboardInterrupt, SystemExit)) and not hasattr(error, "remote_type"):
            raise  # the grader itself is being stopped
        stopped = isinstance(error, OutOfCpuTime)
        if stopped:
            said = str(error) or over_limit("the test", timeout)
            if last_call[0] is not None:
                call, board = last_call[0]
                said = "\n".join([f"{said}, still in the call {call} (an endless loop, or a search that never ends?)", "",
                                  *_picture(board)])
            ename, evalue = OUT_OF_TIME, said[:2000]
        else:
            ename, evalue = getattr(error, "remote_type", None) or type(error).__name__, str(error)[:2000]
        passed, message = False, f"{ename}: {evalue}"[:2000]
        hidden = bool(getattr(error, "_hidden_check", False)) or _raised_in_hidden_tests(error, source, grade_id)
        suspicious = error.suspicious if isinstance(error, CheckFailed) else ""
    finally:
        student.WATCH_CALLS.reset(watching)
    output = printed.getvalue()
    theirs = remote.take_output()
    if theirs:
        output += ("" if not output or output.endswith("\n") else "\n") + theirs
    return Verdict(passed, message, output[:OUTPUT_CHARS + 200], ename, evalue, hidden, suspicious[:300])


def _raised_in_hidden_tests(error: BaseException, source: str, grade_id: str) -> bool:
    """True if the test cell's own line that `error` last passed through is one of its hidden tests
    (between nbgrader's BEGIN and END HIDDEN TESTS markers): a plain ``assert`` there is a hidden
    test too, as a failing check of ``grader.checks`` says of itself."""
    where = f"<test cell {grade_id}>"
    line = None
    trace = error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == where:
            line = trace.tb_lineno
        trace = trace.tb_next
    if line is None:
        return False
    hidden, inside = set(), False
    for number, text in enumerate(source.splitlines(), start=1):
        if "BEGIN HIDDEN TESTS" in text:
            inside = True
        elif "END HIDDEN TESTS" in text:
            inside = False
        elif inside:
            hidden.add(number)
    return line in hidden


def _reaching(submitted: list[dict], lesson: list[dict]) -> list[str]:
    """Returns a note for each cell of the submission (one the lesson does not have as it is) whose
    code reaches for the process's machinery: frames, the garbage collector, signals, processes."""
    from grader.remote import python_source

    given = {c["source"].strip() for c in lesson}
    notes = []
    imported = set()  # the names the submission's imports bind (modules, and what it takes from ttt and grader)
    modules = {}  # a name an import binds to a module -> the module's name (``import os as o``: o -> os)
    for cell in submitted:
        try:
            tree = ast.parse(python_source(cell["source"]))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update((a.asname or a.name).split(".")[0] for a in node.names)
                modules.update((a.asname, a.name) for a in node.names if a.asname)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("ttt", "grader"):
                imported.update(a.asname or a.name for a in node.names)
    for index, cell in enumerate(submitted):
        if cell["source"].strip() in given or is_test(cell["meta"]):
            continue
        where = cell["meta"].get("grade_id") or f"#{index}"
        try:
            tree = ast.parse(python_source(cell["source"]))
        except SyntaxError:
            continue
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in REACHING:
                found.add(f"{node.attr} ({REACHING[node.attr]})")
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                    node.attr in REACHING_ON.get(modules.get(node.value.id, node.value.id), {}):
                module = modules.get(node.value.id, node.value.id)
                found.add(f"{module}.{node.attr} ({REACHING_ON[module][node.attr]})")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                found.update(f"{m} ({REACHING_MODULES[m.split('.')[0]]})" for m in names if m.split(".")[0] in REACHING_MODULES)
                found.update(f"{m} (the grader's own machinery)" for m in names
                             if m.split(".")[0] == "grader" and not m.startswith(GRADER_FOR_LESSONS))
                if isinstance(node, ast.ImportFrom):
                    taken = REACHING_ON.get(node.module or "", {})
                    found.update(f"{node.module}.{a.name} ({taken[a.name]})" for a in node.names if a.name in taken)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "__import__", "exec", "eval"):
                found.add(f"{node.func.id}()")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open" and any(
                    not isinstance(a, ast.Constant) or (isinstance(a.value, str) and set(a.value) & set("wax+"))
                    for a in [*node.args[1:2], *(k.value for k in node.keywords if k.arg == "mode")]):
                found.add("open() to write (the file system)")  # or with a mode it computes
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                for target in node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]:
                    root = target
                    while isinstance(root, (ast.Attribute, ast.Subscript)):
                        root = root.value
                    if target is not root and isinstance(root, ast.Name) and root.id in imported:
                        found.add(f"{ast.unparse(target)[:60]} (a module's own names)")
        if found:
            notes.append(f"cell {where} reaches for {', '.join(sorted(found)[:5])}")
    return notes
