"""Grade again where the submission cannot reach: each graded cell re-run apart from the notebook.

nbgrader runs a submission's cells and its hidden tests in one kernel, so code in the submission
can bend the tests: replace ``grader.checks``' functions, return a ``str`` whose ``__eq__`` is
always True, install an IPython AST transformer that swallows every later cell. After nbgrader
has graded a notebook, ``recheck`` runs each graded test cell again in a fresh Python process
(``python -m grader.recheck``) that

1. imports a pristine ``grader`` and ``ttt`` first and records every function and module
   attribute of both (and of ``builtins``);
2. then, cell by cell in notebook order, loads the submission's *definitions* only: functions,
   classes, imports and assignments (IPython syntax is translated first); expressions, loops and
   magics are not run, so a cell that installs an AST transformer or patches a module with a
   call does nothing here;
3. puts back anything the definitions changed in ``grader``, ``ttt`` or ``builtins`` (and says
   so), wraps each function the submission defines so that what it returns must be of an exact
   built-in type (``type(x) is str``, recursively in containers: no subclass with its own
   ``__eq__``), and runs the test cell's own source (the instructor's, restored by nbgrader);
4. reports each test cell's verdict and what the cell printed with a success token, an HMAC of
   the cell, the verdict and the output under a key the grader gives the process on its standard
   input before any submission code is loaded; a verdict without a valid token counts as a
   failure.

The hidden checks run here only: in ``ttt-grader``'s kernels they say they are left to the
re-check and pass (``grader.checks.display``), so a test cell the kernel passed gets the
re-check's output in place of the kernel's, and the feedback shows the checks' results.

The grade of a cell is its re-check's verdict (full points or none); a submission is listed as
suspicious when a cell nbgrader passed fails here other than in a check left to the re-check,
when its code changed the grader, the package or IPython's cell handling, or returned a
non-exact type. Each cell keeps nbgrader's time limit here, in CPU seconds; the whole re-check
of a notebook has the notebook's cells' limits in total.

This is a separate process, not a separate user: code in it could still read the process's
memory (the key) or the grading user's files. A container or a separate user closes that.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import hmac
import io
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

SUSPICIOUS_CALLS = {"ast_transformers", "input_transformers_post", "input_transformers_cleanup", "set_custom_exc",
                    "settrace", "setprofile", "register_magic_function", "run_cell", "events"}
KEPT = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign,
        ast.AugAssign, ast.If, ast.Try)
EXACT = (type(None), bool, int, float, complex, str, bytes)
CONTAINERS = (tuple, list, set, frozenset, dict)
MEMORY_MB = 2048
# What nbgrader tells its kernels, told to the re-check too: the lessons' demonstrations (a whole
# game tree, a tournament) shrink while graded, here as in the notebook (``ttt.autograding``).
RECHECK_ENV = {"NBGRADER_EXECUTION": "autograde"}
OUTPUT_CHARS = 20_000  # the most a test cell's output keeps here
OUT_OF_TIME = "TimeoutError"  # the error a test cell out of CPU time shows (a Python name a student knows)
_MISSING = object()


class Verdict(NamedTuple):
    """A test cell's re-check: passed or not, why not, what it printed, its error (name and
    value, as the feedback shows it), and whether the error came from a hidden check (not a
    visible test)."""

    passed: bool
    message: str = ""
    output: str = ""
    ename: str = ""
    evalue: str = ""
    hidden: bool = False


def _token(key: bytes, cell: str, passed: bool, shown: str) -> str:
    said = hashlib.sha256(shown.encode(errors="replace")).hexdigest()
    return hmac.new(key, f"{cell}:{'pass' if passed else 'fail'}:{said}".encode(), hashlib.sha256).hexdigest()


def _shown(record: dict) -> str:
    """What a verdict's token vouches for beside the verdict: the message, the output, the error and its source."""
    return json.dumps([record.get(field, default) for field, default in Verdict._field_defaults.items()])


# -- in the grader ----------------------------------------------------------------------------


def recheck_unit(folder: Path, grades: dict, *, timeout: float = 120.0) -> tuple[dict, list[str], list[str], bool]:
    """Re-checks every autograded notebook in ``folder`` (nbgrader's output); returns the grades
    (as ``grader.autograde`` reads them from the gradebook) with each autograded test cell's
    score set to its re-check's verdict, what was suspicious and what else went wrong (a cell
    out of CPU time), one line each, and whether a re-check process was stopped by its
    wall-clock backstop (then the unit is graded again alone, as a timed-out cell is).
    `timeout` is each test cell's limit in CPU seconds: the course's cell limit, so the
    re-check allows what nbgrader allows, and the machine's load does not change the verdict."""
    import nbformat

    from grader.checks.display import APART

    suspicious: list[str] = []
    problems: list[str] = []
    stopped = False
    for path in sorted(Path(folder).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        graded = grades.get("notebooks", {}).get(path.stem)
        if graded is None:
            continue
        cells = _test_cells(nb)
        if not cells:
            continue
        verdicts, notes = _run(path, [c.metadata["nbgrader"]["grade_id"] for c in cells], timeout)
        suspicious += notes
        stopped = stopped or any(v.message.startswith(_BACKSTOP) for v in verdicts.values())
        for cell in cells:
            grade_id = cell.metadata["nbgrader"]["grade_id"]
            points = float(cell.metadata["nbgrader"].get("points", 0))
            verdict = verdicts.get(grade_id, Verdict(False, "the re-check gave no verdict"))
            before = graded["grades"].get(grade_id)
            # The re-check can only take marks away: a cell nbgrader failed (a notebook stopped at
            # its limit, say) stays failed, whatever the definitions alone would earn.
            graded["grades"][grade_id] = min(points if verdict.passed else 0.0, before if before is not None else points)
            kernel_passed = not any(o.output_type == "error" for o in cell.outputs)
            left_here = any(APART in o.get("text", "") for o in cell.outputs)  # its checks were left to the re-check
            if kernel_passed and (verdict.output or verdict.ename):
                _replace_outputs(cell, verdict)
            if verdict.ename == OUT_OF_TIME:
                problems.append(f"test cell {grade_id} timed out: it used more than its {timeout:g} s of CPU time")
            if not verdict.passed and before and not (verdict.hidden and left_here):
                suspicious.append(f"cell {grade_id} passed in the notebook but fails when re-checked apart: {verdict.message}")
                _note(cell, verdict.message)
        nbformat.write(nb, path)
    return grades, list(dict.fromkeys(suspicious)), problems, stopped


def _replace_outputs(cell, verdict: Verdict) -> None:
    """Gives a test cell the kernel passed the re-check's output: what the checks left to it found."""
    import nbformat

    from grader.execute import error_output

    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=verdict.output)] if verdict.output else []
    if not verdict.passed and verdict.ename:
        cell.outputs.append(error_output(verdict.ename, verdict.evalue))


def _note(cell, message: str) -> None:
    """Adds the re-check's message to a test cell's outputs, so the feedback says why it scored zero."""
    import nbformat

    cell.outputs.append(nbformat.v4.new_output("stream", name="stderr", text=(
        f"Re-checked apart from the rest of the notebook, this test fails, so it scores zero:\n{message}\n")))


_BACKSTOP = "the re-check was still running after"  # its wall-clock backstop, not the cell's CPU limit


def run(path: Path, *, timeout: float = 120.0) -> tuple[dict[str, Verdict], list[str]]:
    """Runs the re-check of one notebook in fresh processes; returns ({grade id: Verdict},
    suspicious notes). Each test cell has `timeout` seconds; a process that dies or
    hangs fails the cell it was running, and a new one goes on from the next cell. Verdicts
    without a valid token are failures."""
    import nbformat

    cells = _test_cells(nbformat.read(path, as_version=4))
    return _run(path, [c.metadata["nbgrader"]["grade_id"] for c in cells], timeout)


def _test_cells(nb) -> list:
    """The notebook's test cells: graded code cells that are not answers."""
    from nbgrader.utils import is_grade, is_solution

    return [c for c in nb.cells if c.cell_type == "code" and is_grade(c) and not is_solution(c)]


def _run(path: Path, cells: list[str], timeout: float) -> tuple[dict[str, Verdict], list[str]]:
    """``run``, for the test cells of the notebook at `path` given by their grade ids."""
    verdicts: dict[str, Verdict] = {}
    notes: list[str] = []
    start = 0
    while start < len(cells):
        key = secrets.token_bytes(32)
        command = [sys.executable, "-m", "grader.recheck", str(Path(path).resolve()), str(start), str(timeout)]
        # A wall-clock backstop for code that sleeps: far above the cells' CPU limits, which a
        # busy machine stretches (the slowest honest check, 21.5 s of CPU, took 373 s at load 15-19).
        limit = 5 * timeout * (len(cells) - start) + 120
        try:
            done = subprocess.run(command, input=key.hex() + "\n", capture_output=True, text=True, timeout=limit,
                                  cwd=Path(path).parent, errors="replace", env=_environment())
            out, why = done.stdout, f"the process stopped (exit code {done.returncode})"
        except subprocess.TimeoutExpired as expired:
            out = expired.stdout.decode(errors="replace") if isinstance(expired.stdout, bytes) else (expired.stdout or "")
            why = f"{_BACKSTOP} {limit:g} s"
        _read(out, key, verdicts, notes)
        missing = [i for i, c in enumerate(cells) if i >= start and c not in verdicts]
        if not missing:
            break
        verdicts[cells[missing[0]]] = Verdict(False, why)
        start = missing[0] + 1
    return verdicts, list(dict.fromkeys(notes))


def _environment() -> dict:
    """The re-check's environment: the grader's, with nbgrader's word to the kernels, and without
    the word that leaves the checks to the re-check (here they run)."""
    from grader.kernel import APART_ENV

    return RECHECK_ENV | {name: value for name, value in os.environ.items() if name != APART_ENV}


def _read(out: str, key: bytes, verdicts: dict, notes: list) -> None:
    """Reads a re-check process's report lines into `verdicts` and `notes`."""
    for line in out.splitlines():
        if not line.startswith("{\"ttt-recheck\""):
            continue
        try:
            record = json.loads(line)["ttt-recheck"]
        except (ValueError, KeyError, TypeError):
            continue
        if "cell" in record:
            cell, passed = str(record["cell"]), bool(record.get("passed"))
            if hmac.compare_digest(str(record.get("token", "")), _token(key, cell, passed, _shown(record))):
                # the token vouches for every field, each as the re-check process wrote it (cut short there)
                verdicts.setdefault(cell, Verdict(passed, **{field: type(default)(record.get(field, default))
                                                             for field, default in Verdict._field_defaults.items()}))
            else:
                notes.append(f"cell {cell}: a verdict without the re-check's token was printed (forged)")
        elif "note" in record:
            notes.append(str(record["note"])[:300])


# -- in the re-check process -------------------------------------------------------------------


def _snapshot() -> dict:
    """Returns what the submission may not change: each grader/ttt module's and builtins'
    attributes, and each of their functions' code, defaults and globals' identity."""
    import builtins

    modules = {name: m for name, m in sys.modules.items()
               if m is not None and (name.split(".")[0] in ("grader", "ttt") or name == "builtins")}
    attrs = {name: dict(vars(m)) for name, m in modules.items()}
    code = {}
    for m in list(modules.values()) + [builtins]:
        for value in list(vars(m).values()):
            for f in [value, *(vars(value).values() if isinstance(value, type) else ())]:
                f = getattr(f, "__func__", f)
                if hasattr(f, "__code__"):
                    code[id(f)] = (f, f.__code__, f.__defaults__, f.__kwdefaults__)
    return {"modules": modules, "attrs": attrs, "code": code, "sys.modules": dict(modules)}


def _restore(snapshot: dict) -> list[str]:
    """Puts back what changed since the snapshot; returns what was changed."""
    changed = []
    for name, module in snapshot["sys.modules"].items():
        if sys.modules.get(name) is not module:
            changed.append(f"sys.modules[{name!r}]")
            sys.modules[name] = module
    for name, module in snapshot["modules"].items():
        saved = snapshot["attrs"][name]
        now = vars(module)
        for attr in set(now) | set(saved):
            if attr in ("__builtins__", "__warningregistry__", "_", "__", "___") or attr.startswith("_i"):
                continue
            if now.get(attr, _MISSING) is not saved.get(attr, _MISSING):
                changed.append(f"{name}.{attr}")
                if attr in saved:
                    setattr(module, attr, saved[attr])
                else:
                    delattr(module, attr)
    for f, code, defaults, kwdefaults in snapshot["code"].values():
        if f.__code__ is not code or f.__defaults__ is not defaults or f.__kwdefaults__ is not kwdefaults:
            changed.append(f"{getattr(f, '__module__', '?')}.{getattr(f, '__qualname__', '?')}")
            f.__code__, f.__defaults__, f.__kwdefaults__ = code, defaults, kwdefaults
    return sorted(set(changed))


def _python(source: str) -> str:
    """Returns a cell's source as plain Python (IPython's magics and shell escapes translated)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


def _tampering(tree: ast.Module) -> list[str]:
    """Returns what a cell's code does to the way cells run or to other modules: names such as
    ``ast_transformers`` or ``set_custom_exc``, assignments to an attribute of a module."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in SUSPICIOUS_CALLS:
            found.append(f"uses {node.attr}")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, (ast.Name, ast.Attribute)):
                    base = ast.unparse(t.value)
                    if base.split(".")[0] in ("grader", "ttt", "checks", "builtins", "sys") or base.startswith(("get_ipython",)):
                        found.append(f"assigns {ast.unparse(t)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            found.append(f"calls {ast.unparse(node)[:80]}")
    return found


def _exact(value, depth: int = 0) -> str | None:
    """Returns the name of a non-exact type in `value` (a subclass of a built-in type, e.g. a str
    whose __eq__ is its own), or None if every part is a plain built-in value."""
    kind = type(value)
    if kind in EXACT:
        return None
    if kind in CONTAINERS or (isinstance(value, tuple) and kind.__module__.startswith("ttt")):
        if depth > 4:
            return None
        items = list(value.items()) if kind is dict else list(value)
        for item in items[:10_000]:
            for part in (item if kind is dict else (item,)):
                bad = _exact(part, depth + 1)
                if bad:
                    return bad
        return None
    bases = [b.__name__ for b in kind.__mro__[1:] if b in EXACT + CONTAINERS]
    return f"{kind.__name__} (a subclass of {bases[0]})" if bases else None


class _Printed(io.StringIO):
    """What a test cell prints, kept to its first OUTPUT_CHARS characters."""

    def write(self, text: str) -> int:
        room = OUTPUT_CHARS - self.tell()
        if room > 0:
            super().write(text[:room] if len(text) <= room else text[:room] + "\n... output cut short by the grader ...\n")
        return len(text)


_CALLING = [False]  # True while one of the submission's functions runs


def _guarded(function, notes: list):
    """Returns `function` wrapped so that what it returns to the grader must be of an exact built-in type.

    Only the outermost call is looked at: what the submission's functions return to each other
    (minimax to itself, millions of times) never reaches one of the grader's comparisons, and
    whatever they pass on to the grader is looked at when the outermost call returns it.
    """
    import functools

    from grader.checks import CheckFailed

    @functools.wraps(function)
    def exact(*args, **kwargs):
        if _CALLING[0]:  # called by the submission's own code: the grader never sees this value
            return function(*args, **kwargs)
        _CALLING[0] = True
        try:
            value = function(*args, **kwargs)
        finally:
            _CALLING[0] = False
        bad = _exact(value)
        if bad:
            note = f"{function.__name__} returned a {bad}, not a plain built-in value"
            if note not in notes:
                notes.append(note)
            raise CheckFailed(f"{note}: the grader compares plain values only (type(x) is str, not a subclass).")
        return value

    return exact


def _main(path: str, start: int = 0, seconds: float = 120.0) -> None:
    """In the fresh process: loads the submission's definitions cell by cell and runs its test
    cells from the `start`-th on (the earlier ones were re-checked by an earlier process), each
    for at most `seconds`."""
    import signal

    last_call: list = [None]  # the call of a submission's function a check made last, and its board

    def ring(signum, frame):
        # The checks' own out-of-time signal: a check lets it through rather than blaming the
        # student's function for raising it. (Nothing else here: the reference may be switched off.)
        from grader.checks.failures import _OutOfTime

        raise _OutOfTime(f"the test used more than its {seconds:g} s of CPU time")

    def out_of_time(error: BaseException) -> str:
        """What a test cell stopped at its limit says: the call that was still running, its board drawn."""
        from grader.checks.failures import _picture

        if last_call[0] is None:
            return str(error)
        call, board = last_call[0]
        return "\n".join([f"{error}, still in the call {call} (an endless loop, or a search that never ends?)", "",
                          *_picture(board)])

    key = bytes.fromhex(sys.stdin.readline().strip())
    sys.stdin = open(os.devnull)

    import importlib
    import pkgutil

    importlib.import_module("grader.checks")  # pristine, before any submission code
    import ttt
    from grader.checks import display
    from grader.kernel import limit

    display._APART = False  # here the checks run
    from grader.checks import student
    student._NOTE[0] = lambda call, board: last_call.__setitem__(0, (call, board))

    for package in (ttt,):  # the checks use no widget or picture
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not module.name.endswith("__main__") and not module.name.startswith(("ttt.widgets", "ttt.draw")):
                try:
                    importlib.import_module(module.name)
                except Exception:  # noqa: BLE001  (a module this machine cannot import is not needed)
                    pass

    limit(memory_mb=MEMORY_MB)
    report = sys.__stdout__.write
    flush = sys.__stdout__.flush
    snapshot = _snapshot()
    with open(path, encoding="utf-8") as handle:  # plain JSON: nbformat takes seconds to import
        cells = json.load(handle)["cells"]
    namespace: dict = {"__name__": "__main__"}
    notes: list[str] = []
    own: set[str] = set()
    graded = -1

    def say(**record) -> None:
        report(json.dumps({"ttt-recheck": record}) + "\n")
        flush()

    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {})
        where = meta.get("grade_id") or f"#{index}"
        source = cell.get("source", "")
        try:
            tree = ast.parse(_python("".join(source) if isinstance(source, list) else source))
        except SyntaxError:
            continue
        if meta.get("grade") and not meta.get("solution"):
            graded += 1
            if graded < start:
                continue
            for name in own:  # the submission's functions must return exact built-in values
                if callable(namespace.get(name)) and not hasattr(namespace[name], "__wrapped__"):
                    namespace[name] = _guarded(namespace[name], notes)
            passed, message, ename, evalue, hidden = True, "", "", "", False
            last_call[0] = None
            printed = _Printed()
            previous = signal.signal(signal.SIGVTALRM, ring)  # CPU time: the same verdict on a busy machine
            signal.setitimer(signal.ITIMER_VIRTUAL, seconds)  # (a visible test's own deadline uses ITIMER_PROF)
            try:
                with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
                    exec(compile(tree, f"<test cell {where}>", "exec"), namespace)
            except BaseException as error:  # noqa: BLE001  (any error fails the test, as in nbgrader)
                stopped = type(error).__name__ == "_OutOfTime"
                said = out_of_time(error) if stopped else f"{type(error).__name__}: {error}"
                passed, message = False, said[:2000]
                ename, evalue = (OUT_OF_TIME, said[:2000]) if stopped else (type(error).__name__, str(error)[:2000])
                hidden = bool(getattr(error, "_hidden_check", False))
            finally:
                signal.setitimer(signal.ITIMER_VIRTUAL, 0)
                signal.signal(signal.SIGVTALRM, previous)
            changed = _restore(snapshot)
            if changed:
                passed, hidden = False, False
                message = message or f"the grader was changed while the test ran: {', '.join(changed[:5])}"
                ename, evalue = ename or "GraderChanged", evalue or message
                notes.append(f"cell {where}: the submission changed {', '.join(changed[:5])} while the test ran (put back)")
            record = {"cell": where, "passed": passed, "message": message, "output": printed.getvalue(),
                      "ename": ename, "evalue": evalue, "hidden": hidden}
            say(**record, token=_token(key, where, passed, _shown(record)))
            continue
        for what in _tampering(tree):
            notes.append(f"cell {where} {what}")
        for statement in tree.body:
            if not isinstance(statement, KEPT):
                continue
            try:
                exec(compile(ast.Module(body=[statement], type_ignores=[]), f"<cell {where}>", "exec"), namespace)
            except BaseException:  # noqa: BLE001  (a definition that fails is left out, as a failing cell's would be)
                continue
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                own.add(statement.name)
        changed = _restore(snapshot)
        if changed:
            notes.append(f"cell {where} changed {', '.join(changed[:5])} (put back before the tests)")
    for note in dict.fromkeys(notes):
        say(note=note)


if __name__ == "__main__":
    _main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0, float(sys.argv[3]) if len(sys.argv) > 3 else 120.0)
