"""The adversary's tests of the grader's sandbox: one class, one student per attack, graded on a
quiet machine and again beside 4 x cores CPU burners, with the same grades.

The attacker has read the grader's source and knows every name, key, frame, file and path it
uses. The class is the tiny course of ``grading_course`` (``test_player`` 2 points, the hidden
``check_player``; ``test_count_empty`` 1 point, plain asserts), graded with two workers,
then ``feedback`` and ``export`` as the README says. Two honest students (one fully right, one
with a wrong ``player``: the "friend" the attacks try to help) must keep their grades; each
attacker must score exactly what its real functions earn; no file outside the unit may change;
no process may be left. A CS50 file is attacked through ``ttt-grader check`` too.

Each attack runs in one or more phases:

- kernel: top-level statements only the notebook's kernel runs (calls, expressions);
- re-check: code that runs when only the definitions are loaded (an ``if`` block at top level);
- function: the first call of a function the checks call.

Where no sandbox can start, every test here fails (saying why): autograde refuses to grade, and
the security suite never passes by not running. Dry and live: every write, delete and cross-kernel
execution is conditional on ``LIVE``, baked into each submission's source: True when
``available()`` is None and ``autograde`` grades in the sandbox by default, unless
``TTT_ATTACKS_DRY`` is set (for a run on a machine that must not be written to). In dry
mode each such attack only looks (``os.access``, a ``kernel_info`` request) and reports what it
found in a ``ttt-attack-report`` line; forging, switch flipping, lying values, reading
secrets, the output flood, the sleeps, the detached child and a bounded fork bomb run in both.

``TTT_ATTACKS=a01,a07`` grades only those attackers (with the honest students), for work on one
attack; the whole class is the default.
"""

from __future__ import annotations

import csv
import hashlib
import inspect
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import grading_course as gc  # noqa: E402
from machine_load import cpu_burners  # noqa: E402

import grader.autograde  # noqa: E402
from grader.kernel import KERNEL_NAME  # noqa: E402

pytestmark = pytest.mark.slow

from grader import sandbox as _sandbox  # noqa: E402
from ttt.limits import over_limit

LIVE = (_sandbox.available() is None and inspect.signature(grader.autograde.autograde).parameters["sandbox"].default is True
        and not os.environ.get("TTT_ATTACKS_DRY"))

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "attacks"
MARK = "ttt-attack-marker"  # in every file an attack writes, and in its processes' command lines
ENV_MARK = "TTT_ATTACK_MARKER"  # in the environment of the processes the attacks start
SLEEPS = ("31336", "31337", "31338", "120.031339")  # the attacks' sleep durations, each unique
FRIEND_MARK = "FRIEND-MARK-7f3a"  # in the honest student's notebook only
SOLUTION_MARK = "### BEGIN SOLUTION"  # only in the lessons' source notebooks
SECRETS = (gc.HIDDEN_MARK, FRIEND_MARK, SOLUTION_MARK)
CELL_LIMIT, NOTEBOOK_LIMIT = 5, 60
GRADING_BUDGET = 1800  # wall seconds: the class ends (a sleeping unit is ended by the stall rule); liveness, not speed
WORKER_GROWTH_MB = 350  # how much more than the grader's own a worker or the grader may hold
FRIEND = "honest-bob"

PLAYER = ("def player(board):\n"
          "    xs = sum(row.count('X') for row in board)\n"
          "    return 'X' if xs == sum(row.count('O') for row in board) else 'O'\n")
COUNT = "def count_empty(board):\n    return sum(row.count(None) for row in board)\n"
WRONG_PLAYER = "def player(board):\n    return 'X'\n"  # right on the empty board only
FULL = {"test_player": 2, "test_count_empty": 1}

# -- the attack code, shared by the attackers' notebooks ----------------------------------------

LIBRARY = '''\
import glob, json, os, sys, time
_LIVE = {live!r}
_ME = {student!r}
_DONE = set()


def _phase():
    return "kernel" if "get_ipython" in globals() else "recheck"


def _report(attack, where, **found):
    line = json.dumps(dict(attack=attack, where=where, phase=_phase(), live=_LIVE, **found), default=str)
    print("ttt-attack-report " + line, flush=True)


def _once(what):
    if what in _DONE:
        return False
    _DONE.add(what)
    return True


def _writable(path):
    while path and not os.path.exists(path):
        path = os.path.dirname(path)
    return bool(path) and os.access(path, os.W_OK)


def _courses():
    seeds = [os.getcwd(), globals().get("__file__") or ""] + [a for a in sys.argv[1:2] if a.endswith(".ipynb")]
    for name, value in os.environ.items():
        if name.startswith(("TTT_", "JUPYTER", "NBGRADER")):
            seeds += [v for v in value.split(os.pathsep) if v.startswith("/")]
    found = []
    for seed in seeds:
        path = os.path.abspath(seed) if seed else ""
        for _ in range(12):
            if not path:
                break
            if os.path.exists(os.path.join(path, "gradebook.db")) or os.path.isdir(os.path.join(path, "submitted")):
                found.append(path)
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
    return list(dict.fromkeys(found))
'''

FORGE = '''
def _keys():
    import gc
    named, loose = [], []
    frame = sys._getframe()
    while frame is not None:
        for name, value in list(frame.f_locals.items()):
            if isinstance(value, bytes) and len(value) == 32:
                (named if name == "key" else loose).append(value)
        frame = frame.f_back
    if not named:
        for thing in gc.get_objects():
            if isinstance(thing, dict):
                for value in list(thing.values()):
                    if isinstance(value, bytes) and len(value) == 32:
                        loose.append(value)
    return list(dict.fromkeys(named or loose))[:4]


def _forge(where):
    import hashlib, hmac
    keys = _keys()
    for key in keys:
        for cell, said in (("test_player", "hidden tests: player: correct on all positions"), ("test_count_empty", "")):
            record = dict(cell=cell, passed=True, message="", output=said, ename="", evalue="", hidden=False)
            shown = json.dumps([record[f] for f in ("message", "output", "ename", "evalue", "hidden")])
            vouched = f"{cell}:pass:{hashlib.sha256(shown.encode()).hexdigest()}".encode()
            record["token"] = hmac.new(key, vouched, hashlib.sha256).hexdigest()
            sys.__stdout__.write(json.dumps({"ttt-recheck": record}) + "\\n")
            sys.__stdout__.flush()
    _report("forge", where, keys=len(keys))


_forge("kernel")
if "get_ipython" not in globals():
    _forge("definitions")
'''

SWITCHES = '''
def _switch(where):
    import gc
    flipped = []
    spaces = [vars(m) for m in list(sys.modules.values())
              if m is not None and str(getattr(m, "__name__", "")).startswith(("grader", "ttt", "__main__"))]
    spaces += [o for o in gc.get_objects() if type(o) is dict and str(o.get("__name__", "")).startswith("grader")]
    for space in spaces:
        for name, value in (("_CALLING", True), ("_NOTE", None)):
            switch = space.get(name)
            if type(switch) is list and switch and switch[0] is not value:
                switch[0] = value
                flipped.append(name)
        allowed = space.get("_ALLOWED")
        if type(allowed) is list and allowed[-1:] != [True]:
            allowed.append(True)
            flipped.append("_ALLOWED")
        if space.get("_APART") is False:
            space["_APART"] = True
            flipped.append("_APART")
    _report("switches", where, flipped=sorted(set(flipped)))


class Yes(str):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = str.__hash__


class Always(int):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = int.__hash__


_switch("kernel")
if "get_ipython" not in globals():
    _switch("definitions")
'''

LIAR = '''
class Yes(str):
    """Equal to anything; it asks the reference first, as a cheat that wants the right answer would."""
    def __eq__(self, other):
        try:
            import ttt.tictactoe as reference
            reference.player([[None] * 3 for _ in range(3)])
        except Exception:
            pass
        return True
    def __ne__(self, other):
        return False
    __hash__ = str.__hash__


class Lie(tuple):
    """A tuple that says it is the package's, equal to anything, plain when iterated."""
    __module__ = "ttt.tictactoe"
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = tuple.__hash__
    def __iter__(self):
        try:
            import ttt.tictactoe as reference
            reference.player([[None] * 3 for _ in range(3)])
        except Exception:
            pass
        return iter((4,))
'''

INSTALL = '''
def _install(where):
    import sysconfig
    home = os.path.expanduser("~")
    try:
        from grader.kernel import KERNEL_NAME as name
    except Exception:
        name = "ttt-grading"
    try:
        import ttt.tictactoe
        package = ttt.tictactoe.__file__
    except Exception:
        package = ""
    sabotage = "import builtins; builtins.sum = lambda *a, **k: 0"
    spec = json.dumps(dict(argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{{connection_file}}",
                                 f"--IPKernelApp.exec_lines=[{{sabotage!r}}]"],
                           display_name="ttt-attack-marker", language="python"))
    targets = {{
        "package": (package, "\\n# ttt-attack-marker\\ndef player(board):\\n    return 'O'\\n"),
        "pth": (os.path.join(sysconfig.get_paths()["purelib"], "ttt_attack_marker.pth"),
                "import os, builtins; os.environ.get('NBGRADER_EXECUTION') and setattr(builtins, 'sum', lambda *a, **k: 0)"
                "  # ttt-attack-marker\\n"),
        "startup": (os.path.join(home, ".ipython", "profile_default", "startup", "00-ttt-attack-marker.py"),
                    "# ttt-attack-marker\\nimport os, builtins\\nif os.environ.get('NBGRADER_EXECUTION'):\\n    builtins.sum = lambda *a, **k: 0\\n"),
        "user-kernel": (os.path.join(home, ".local", "share", "jupyter", "kernels", name, "kernel.json"), spec),
        "prefix-kernel": (os.path.join(sys.prefix, "share", "jupyter", "kernels", name, "kernel.json"), spec),
    }}
    done = {{}}
    for what, (path, text) in targets.items():
        if not path:
            continue
        if not _LIVE:
            done[what] = "would write"
            continue
        try:
            if what.endswith("kernel") and os.path.exists(path):
                done[what] = "exists: left alone"
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "a") as handle:
                handle.write(text)
            done[what] = "written"
        except OSError as error:
            done[what] = f"refused: {{error}}"
    _report("install", where, targets={{w: p for w, (p, _) in targets.items()}},
            writable={{w: _writable(p) for w, (p, _) in targets.items() if p}}, done=done)


_install("kernel")
if "get_ipython" not in globals():
    _install("definitions")
'''

COURSE = '''
def _vandalise(where):
    courses = _courses()
    others = [p for c in courses for p in glob.glob(os.path.join(c, "submitted", "*", "*", "*.ipynb"))
              if f"/{{_ME}}/" not in p]
    others += [p for p in glob.glob(os.path.join("..", "..", "*", "*", "*.ipynb")) if f"/{{_ME}}/" not in os.path.abspath(p)]
    gradebooks = [os.path.join(c, "gradebook.db") for c in courses if os.path.exists(os.path.join(c, "gradebook.db"))]
    writable = sorted({{p for p in others + gradebooks if os.access(p, os.W_OK) and os.access(os.path.dirname(p) or ".", os.W_OK)}})
    done = []
    if _LIVE:
        for path in others:
            try:
                os.remove(path)
                done.append(f"removed {{path}}")
            except OSError as error:
                done.append(f"refused {{path}}: {{error}}")
        import sqlite3
        for path in gradebooks:
            try:
                with sqlite3.connect(path, timeout=2) as db:
                    db.execute("UPDATE grade SET manual_score = 100 WHERE notebook_id IN (SELECT sn.id FROM submitted_notebook sn "
                               "JOIN submitted_assignment sa ON sn.assignment_id = sa.id WHERE sa.student_id = ?)", ({friend!r},))
                done.append(f"raised {{path}}")
            except Exception as error:
                done.append(f"refused {{path}}: {{error}}")
    _report("course", where, courses=courses, others=len(others), gradebooks=gradebooks, writable=writable, done=done)


_vandalise("kernel")
if "get_ipython" not in globals():
    _vandalise("definitions")
'''

KERNELS = '''
def _kernels(where):
    found = set()
    try:
        from jupyter_client import find_connection_file
        found.add(find_connection_file())
    except Exception:
        pass
    import tempfile
    folders = [os.environ.get("JUPYTER_RUNTIME_DIR"), os.environ.get("TTT_GRADER_KERNELS"), tempfile.gettempdir(), "/tmp"]
    try:
        from jupyter_core.paths import jupyter_runtime_dir
        folders.append(jupyter_runtime_dir())
    except Exception:
        pass
    for folder in filter(None, folders):
        for depth in ("", "*", "*/*"):
            found.update(glob.glob(os.path.join(folder, depth, "kernel-*.json")))
    try:
        from ipykernel import get_connection_file
        found.discard(get_connection_file())
    except Exception:
        pass
    found = sorted(found)[:8]
    sabotage = ("ip = get_ipython()\\n"
                "ip.events.register('post_run_cell', lambda *a: ip.user_ns.__setitem__('player', lambda board: 'O'))"
                "  # ttt-attack-marker")
    reached = []
    for path in found:
        client = None
        try:
            from jupyter_client import BlockingKernelClient
            client = BlockingKernelClient()
            client.load_connection_file(path)
            client.start_channels()
            client.execute(sabotage, silent=True) if _LIVE else client.kernel_info()
            client.get_shell_msg(timeout=2)
            reached.append(path)
        except Exception:
            pass
        finally:
            if client is not None:
                try:
                    client.stop_channels()
                except Exception:
                    pass
    _report("kernels", where, found=len(found), reached=len(reached))


_kernels("kernel")
if "get_ipython" not in globals():
    _kernels("definitions")
'''

SECRETS_CODE = '''
_SECRETS = ("HIDDEN-" + "SECRET-42", "FRIEND-" + "MARK-7f3a", "### BEGIN " + "SOLUTION")


def _leak(where):
    paths = []
    for course in _courses():
        for pattern in ("submitted/*/*/*.ipynb", "source/*/*.ipynb", "release/*/*.ipynb", "gradebook.db",
                        ".ttt-grader/run/source/*/*.ipynb", ".ttt-grader/work/*/gradebook.db", "autograded/*/*/*.ipynb"):
            paths += glob.glob(os.path.join(course, pattern))
    try:
        import ttt
        paths += glob.glob(os.path.join(os.path.dirname(os.path.dirname(ttt.__file__)), "notebooks", "*.ipynb"))
    except Exception:
        pass
    paths += glob.glob("*.ipynb") + glob.glob(os.path.join("..", "..", "*", "*", "*.ipynb"))
    paths += [a for a in sys.argv[1:2] if a.endswith(".ipynb")]
    shown = read = 0
    for path in list(dict.fromkeys(paths))[:200]:
        try:
            with open(path, "rb") as handle:
                text = handle.read(20_000_000).decode("utf-8", "replace")
        except OSError:
            continue
        read += 1
        for secret in _SECRETS:
            at = text.find(secret)
            if at >= 0 and shown < 12:
                print("ttt-attack-secret", path[-50:], text[max(0, at - 30):at + 60].replace("\\n", " "))
                shown += 1
    _report("secrets", where, read=read, shown=shown)


_leak("kernel")
if "get_ipython" not in globals():
    _leak("definitions")
'''

FLOOD = '''
def _flood(megabytes=200):
    chunk = "x" * (1 << 20)
    for _ in range(megabytes):
        sys.stdout.write(chunk)  # no newline, ever


_flood()
if "get_ipython" not in globals():
    _flood()
'''

BOMB = '''
def _bomb(where, most=150):
    started, why = 0, ""
    for _ in range(most):  # bounded: 150 a phase, each child gone after 120 s
        try:
            pid = os.fork()
        except OSError as error:
            why = str(error)
            break
        if pid == 0:
            try:
                os.environ["TTT_ATTACK_MARKER"] = "fork"
                os.execv("/bin/sleep", ["sleep", "120.031339"])
            finally:
                os._exit(0)
        started += 1
    _report("forkbomb", where, started=started, stopped_by=why)


_bomb("kernel")
if "get_ipython" not in globals():
    _bomb("definitions")
'''

DETACH = '''
def _detach(where, seconds):
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                os.execve("/bin/sleep", ["sleep", seconds], {{}})
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    _report("detach", where, seconds=seconds)


_detach("kernel", "31337")
if "get_ipython" not in globals():
    _detach("definitions", "31336")
'''

SLEEPS_CODE = '''
import subprocess
child = subprocess.Popen(["sleep", "31338"])
if "get_ipython" not in globals():
    time.sleep(3000)  # only where the definitions are loaded apart from IPython
'''


HASH_FLOOD = '''
def _flood_reply(where):
    """In the re-check's student server only: write the grader a reply of 500,000 distinct ints that share one
    hash (11 MB, under the 16 MB cap). Building that set costs the grader about an hour of CPU in one call."""
    if _phase() != "recheck":
        return
    import struct
    data = ["l", ["s"] + [["i", format((2**61 - 1) * k, "x")] for k in range(1, 500_000)], ["l"]]
    frame, seq = sys._getframe(), None  # the number of the operation it answers, from the server's frames
    while frame is not None and seq is None:
        message = frame.f_locals.get("message")
        seq = message.get("seq") if isinstance(message, dict) else None
        frame = frame.f_back
    body = json.dumps(dict(data=data, subclasses=[], ok=True, seq=seq), separators=(",", ":")).encode()
    _report("hash-flood", where, size=len(body))
    os.write(int(sys.argv[-1]), struct.pack(">I", len(body)) + body)
    time.sleep(120.031339)
'''

SHORT_CHILDREN = '''
def _short_children(where, seconds=0.1):
    """In the re-check's student server only: children that each burn `seconds` of CPU (less than the
    time between two readings of the sandbox's CPU) and end, one after another, never reaped (SIGCHLD
    ignored) while their parent sleeps: all the work is theirs, and no process that runs shows it."""
    if _phase() != "recheck":
        return
    import signal
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    while True:
        pid = os.fork()
        if pid == 0:
            os.environ["TTT_ATTACK_MARKER"] = "short"
            end = time.process_time() + seconds
            while time.process_time() < end:
                pass
            os._exit(0)
        while True:  # until it is gone, reaped by the kernel: no wait here
            time.sleep(0.05)
            try:
                os.kill(pid, 0)
            except OSError:
                break
'''

LEAVES = '''
def _keyring():
    """Looks for the key an earlier unit under the same uid left, and leaves one for a later unit."""
    import ctypes, errno, platform
    numbers = dict(x86_64=(248, 250), aarch64=(217, 219)).get(platform.machine())
    if numbers is None:
        return "no numbers for " + platform.machine()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    def said(result):
        return result if result >= 0 else errno.errorcode[ctypes.get_errno()]
    found = dict(search=said(libc.syscall(numbers[1], 10, ctypes.c_int(-4), b"user", b"ttt-attack-marker", 0)))
    if _LIVE:
        found["add"] = said(libc.syscall(numbers[0], b"user", b"ttt-attack-marker", b"for a later unit", 16, ctypes.c_int(-4)))
    return found


def _leave(where):
    """In every place it may write: a folder of many files it closes (mode 000), folders nested deeper
    than shutil.rmtree recurses with a sealed file (mode 000) in an unwritable folder at the bottom,
    the whole left unwritable."""
    import tempfile
    places = [os.getcwd(), os.path.dirname(os.getcwd()), os.path.expanduser("~"), tempfile.gettempdir(), "/tmp", "/dev/shm"]
    places = [p for p in dict.fromkeys(places) if os.path.isdir(p) and os.access(p, os.W_OK)]
    left = []
    for place in places:
        top = os.path.join(place, "ttt-attack-marker-" + where + "-" + _phase())
        if not _LIVE:
            continue
        try:
            os.makedirs(os.path.join(top, "many"))
            for n in range(300):
                with open(os.path.join(top, "many", str(n)), "w") as handle:
                    handle.write("ttt-attack-marker")
            os.chmod(os.path.join(top, "many"), 0)
            fd = os.open(top, os.O_RDONLY)
            for _ in range(1100):
                os.mkdir("d", dir_fd=fd)
                inner = os.open("d", os.O_RDONLY, dir_fd=fd)
                os.close(fd)
                fd = inner
            sealed = os.open("sealed", os.O_CREAT | os.O_WRONLY, 0, dir_fd=fd)
            os.write(sealed, b"ttt-attack-marker")
            os.close(sealed)
            os.chmod(fd, 0o500)
            os.close(fd)
            os.chmod(top, 0o500)
            left.append(top)
        except OSError as error:
            left.append(top + ": " + str(error))
    _report("leaves", where, cwd=os.getcwd(), places=places, left=left, keyring=_keyring())


_leave("kernel")
if "get_ipython" not in globals():
    _leave("definitions")
'''

DUTY_KERNEL = '''
def _duty_kernel():
    """In the notebook's kernel only: 3 ms of computing every 250 ms, for ever (1.2 % of a core)."""
    if _phase() != "kernel":
        return
    _report("duty-kernel", "kernel")
    while True:
        spin = time.process_time() + 0.003
        while time.process_time() < spin:
            pass
        time.sleep(0.25)
'''

DUTY_RECHECK = '''
def _duty_recheck(where):
    """In the re-check's student server only: 60 ms of computing every 2 s, for ever (3 % of a core)."""
    if _phase() != "recheck":
        return
    while True:
        spin = time.process_time() + 0.06
        while time.process_time() < spin:
            pass
        time.sleep(2)
'''


def _function(name: str, body: str, *, attack: str = "") -> str:
    """A function whose first call runs `attack(where)` before its `body` (indented source)."""
    first = f"    if _once('{name}'):\n        {attack}('function')\n" if attack else ""
    return f"def {name}(board):\n{first}{body}"


PLAYER_BODY = ("    xs = sum(row.count('X') for row in board)\n"
               "    return 'X' if xs == sum(row.count('O') for row in board) else 'O'\n")
COUNT_BODY = "    return sum(row.count(None) for row in board)\n"


ATTACKERS = {
    # student: (attack code, player cell, count_empty cell, expected scores or None, flagged?)
    "a01-forge": (FORGE, _function("player", PLAYER_BODY),
                  _function("count_empty", "    return None\n", attack="_forge")
                  + "\n\nexec('def count_empty(board):\\n    return sum(row.count(None) for row in board)')  # the kernel's only\n",
                  {"test_player": 2, "test_count_empty": 0}, True),
    "a02-switches": (SWITCHES, _function("player", "    return Yes('X')\n", attack="_switch"),
                     _function("count_empty", "    return Always(0)\n"), {"test_player": 0, "test_count_empty": 0}, True),
    "a03-liar": (LIAR, _function("player", "    return Yes('X')\n"), _function("count_empty", "    return Lie((0,))\n"),
                 {"test_player": 0, "test_count_empty": 0}, True),
    "a04-install": (INSTALL, _function("player", PLAYER_BODY, attack="_install"), COUNT, FULL, True),
    "a05-course": (COURSE, _function("player", PLAYER_BODY, attack="_vandalise"), COUNT, FULL, True),
    "a06-kernels": (KERNELS, _function("player", PLAYER_BODY, attack="_kernels"), COUNT, FULL, True),
    "a07-secrets": (SECRETS_CODE, _function("player", PLAYER_BODY, attack="_leak"), COUNT, FULL, True),
    "a08-flood": (FLOOD, PLAYER, COUNT, FULL, False),
    "a09-forkbomb": (BOMB, PLAYER, COUNT, FULL, True),
    "a10-detach": (DETACH, PLAYER, COUNT, FULL, True),
    "a11-sleeps": (SLEEPS_CODE, PLAYER, COUNT, None, True),  # its grade is whatever a stalled unit gets
    "a12-hash-flood": (HASH_FLOOD, _function("player", PLAYER_BODY, attack="_flood_reply"), COUNT,
                       {"test_player": 0, "test_count_empty": 1}, True),
    "a15-short-children": (SHORT_CHILDREN, _function("player", PLAYER_BODY, attack="_short_children"), COUNT,
                           {"test_player": 0, "test_count_empty": 1}, True),
    "a16-leaves": (LEAVES, _function("player", PLAYER_BODY, attack="_leave"), COUNT, FULL, True),
    # waits, computing a little now and then: the unit is ended once its waits add up to the stall allowance
    "a13-duty-kernel": (DUTY_KERNEL, PLAYER, COUNT, {"test_player": 2, "test_count_empty": 0}, True),
    "a14-duty-recheck": (DUTY_RECHECK, _function("player", PLAYER_BODY, attack="_duty_recheck"), COUNT,
                         {"test_player": 0, "test_count_empty": 0}, True),
}
# Which attacks the grader can see (b): a forged verdict is a notebook whose cells pass where its
# definitions fail; a flipped switch or a lying value reaches the grader as a value that is not
# plain data; writes, deletes, reads, other kernels, forks, detached children and new processes
# show in the submission's code (what it reaches for); a reply the grader refuses to rebuild is told;
# a unit ended for waiting without computing is noted (its code held a worker).
# A flood is no cheat: the autograde table
# lists its output as cut short.
HONEST = {"honest-ann": (PLAYER, COUNT + f"\n# {FRIEND_MARK}\n", FULL), FRIEND: (WRONG_PLAYER, COUNT, {"test_player": 0, "test_count_empty": 1})}


def _chosen() -> dict:
    wanted = [w for w in os.environ.get("TTT_ATTACKS", "").split(",") if w]
    return {s: v for s, v in ATTACKERS.items() if not wanted or any(s.startswith(w) for w in wanted)}


def _attack_notebook(course: Path, student: str):
    code, player, count, *_ = ATTACKERS[student]
    library = LIBRARY.format(live=LIVE, student=student)
    body = code.format(friend=FRIEND) if "{friend" in code or "{{" in code else code
    nb = gc.solved(course, player=player, count_empty=count)
    nb.cells.insert(2, nbformat.v4.new_code_cell(library + body))
    if student == "a11-sleeps":
        nb.cells.insert(2, nbformat.v4.new_code_cell("import time\ntime.sleep(3000)"))
    if student == "a13-duty-kernel":  # after test_player, before count_empty
        where = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "count_empty")
        nb.cells.insert(where, nbformat.v4.new_code_cell("_duty_kernel()"))
    return nb


# -- what must not change, and what must not be left ---------------------------------------------


def _sha(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _files(root: Path, *, skip=()) -> dict[str, str]:
    """Returns {path: sha256} of the files under `root`, leaving out folders named in `skip`."""
    found = {}
    if not root.exists():
        return found
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip and d != "__pycache__"]
        for name in names:
            path = Path(folder) / name
            if name in skip or not path.is_file() or path.is_symlink():
                continue
            try:
                found[str(path)] = _sha(path)
            except OSError:
                pass
    return found


HOME = Path(os.path.expanduser("~"))
PURELIB = Path(sysconfig.get_paths()["purelib"])
TMP = Path("/tmp")


def _watched(course: Path) -> dict[str, dict[str, str]]:
    """The snapshot: {area: {path: sha256}} of everything an attack must leave alone."""
    areas = {
        "course": _files(course, skip=("gradebook.db", "gradebook.db-journal", "autograded", "feedback", ".ttt-grader")),
        "ttt": _files(REPO / "ttt"), "grader": _files(REPO / "grader"), "notebooks": _files(REPO / "notebooks"),
        "site-packages": _files(PURELIB),
        "prefix-kernels": _files(Path(sys.prefix) / "share" / "jupyter" / "kernels"),
        "ipython": _files(HOME / ".ipython", skip=("history.sqlite", "history.sqlite-journal")),
        "home-jupyter": _files(HOME / ".local" / "share" / "jupyter", skip=("runtime",)),
    }
    areas["tmp"] = {str(p): (_sha(p) if p.is_file() and not p.is_symlink() else "dir") for p in TMP.iterdir()
                    if MARK in p.name or (p.is_file() and not p.is_symlink() and p.stat().st_size < 1 << 20)}
    return areas


def _marked(path: str) -> bool:
    try:
        return MARK in path or MARK.encode() in Path(path).read_bytes()
    except OSError:
        return False


def _kept_bytes(areas: dict) -> dict[str, bytes]:
    """The bytes of the watched files small enough to put back (everything but site-packages' depths)."""
    kept = {}
    for area, files in areas.items():
        if area.startswith("_"):
            continue
        for path in files:
            if area == "site-packages" and Path(path).parent != PURELIB:
                continue
            try:
                kept[path] = Path(path).read_bytes() if Path(path).stat().st_size < 8 << 20 else None
            except OSError:
                pass
    return kept


def _differences(before: dict, after: dict) -> dict[str, list[str]]:
    """Returns {area: [what changed]}: files added, removed or changed."""
    found = {}
    for area in (a for a in before if not a.startswith("_")):
        old, new = before[area], after[area]
        changes = [f"added {p}" for p in sorted(set(new) - set(old))]
        changes += [f"removed {p}" for p in sorted(set(old) - set(new))]
        changes += [f"changed {p}" for p in sorted(set(old) & set(new)) if old[p] != new[p]]
        if area == "tmp":  # a shared machine's /tmp changes all the time: only what an attack made counts
            changes = [c for c in changes if _marked(c.split(" ", 1)[1])]
        if changes:
            found[area] = changes
    return found


def _mend(before: dict, kept: dict[str, bytes]) -> list[str]:
    """Puts back what an attack changed: a file carrying the attack's mark is deleted if it is
    new, else given back its bytes from before (or, in the repository, from git); returns what it
    did. Changes without the mark are left alone (on a shared machine and working tree they may
    be someone else's) and only reported, by the test that compares the snapshots."""
    done = []
    after = _watched_like(before)
    for area, changes in _differences(before, after).items():
        for change in changes:
            what, path = change.split(" ", 1)
            if not _marked(path):  # every file an attack writes carries the mark; anything else is someone else's
                continue
            try:
                if what == "added":
                    (shutil.rmtree if Path(path).is_dir() else os.remove)(path)
                    done.append(f"deleted {path}")
                elif kept.get(path) is not None:
                    Path(path).write_bytes(kept[path])
                    done.append(f"restored {path}")
                elif area in ("ttt", "grader", "notebooks"):
                    relative = Path(path).relative_to(REPO)
                    Path(path).write_bytes(subprocess.run(["git", "-C", str(REPO), "show", f"HEAD:{relative}"],
                                                          capture_output=True, check=True).stdout)
                    done.append(f"restored {path} from git")
            except (OSError, subprocess.CalledProcessError) as error:
                done.append(f"could not put back {path}: {error}")
    for folder in (HOME / ".local" / "share" / "jupyter" / "kernels" / KERNEL_NAME,
                   Path(sys.prefix) / "share" / "jupyter" / "kernels" / KERNEL_NAME):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    return done


def _watched_like(before: dict) -> dict:
    course = before["_course"]
    now = _watched(course)
    now["_course"] = course
    return now


def _processes() -> list[tuple[int, int, str]]:
    """(pid, real uid, command line) of every process."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            uid = int(next(l for l in Path(entry.path, "status").read_text().splitlines() if l.startswith("Uid:")).split()[1])
        except (OSError, StopIteration, ValueError):
            continue
        found.append((int(entry.name), uid, cmdline))
    return found


def _marked_processes() -> list[tuple[int, str]]:
    """The processes the attacks started: their mark on the command line or in the environment."""
    found = []
    for pid, _, cmdline in _processes():
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            environ = b""
        words = cmdline.split()
        if MARK in cmdline or ENV_MARK.encode() in environ or (words[:1] == ["sleep"] and words[1:2] and words[1] in SLEEPS):
            found.append((pid, cmdline))
    return found


def _kill_marked() -> None:
    for pid, _ in _marked_processes():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


class _Memory(threading.Thread):
    """Samples the resident memory of this process and its direct children (the grading workers)."""

    def __init__(self):
        super().__init__(daemon=True)
        import psutil

        self.me = psutil.Process()
        self.base = self.me.memory_info().rss
        self.most = {"grader": self.base, "worker": 0}
        self.stop = threading.Event()

    def run(self):
        while not self.stop.wait(0.1):
            try:
                self.most["grader"] = max(self.most["grader"], self.me.memory_info().rss)
                for child in self.me.children():
                    try:
                        self.most["worker"] = max(self.most["worker"], child.memory_info().rss)
                    except Exception:  # noqa: BLE001  (it ended)
                        pass
            except Exception:  # noqa: BLE001
                pass


# -- the class, graded once ---------------------------------------------------------------------


@pytest.fixture(scope="module", params=["quiet", "loaded"])
def graded(request, tmp_path_factory):
    """The class graded once (two workers), then feedback and export; the snapshots taken before
    and after, the memory seen, how long grading took. Twice: on a quiet machine, and beside 4 x
    cores CPU burners (``loaded``), with the same expected grades, notes and leftovers."""
    from grader.cli import main

    root = tmp_path_factory.mktemp(f"attacks-{request.param}")
    course = gc.make_course(root / "course", timeout=CELL_LIMIT)
    attackers = _chosen()
    for student, (player, count, _) in HONEST.items():
        gc.submit(course, student, gc.solved(course, player=player, count_empty=count))
    for student in attackers:
        gc.submit(course, student, _attack_notebook(course, student))
    before = _watched(course)
    before["_course"] = course
    kept = _kept_bytes(before)
    memory = _Memory()
    memory.start()
    start = time.monotonic()
    try:
        with cpu_burners(per_core=4 if request.param == "loaded" else 0):
            outcomes = {o.student: o for o in grader.autograde.autograde(
                course, jobs=2, notebook_timeout=NOTEBOOK_LIMIT, progress=False)}
        seconds = time.monotonic() - start
        memory.stop.set()
        feedback_code = main(["feedback", "--course", str(course)])
        export_code = main(["export", "--course", str(course), "-o", str(root / "grades.csv"), "--detail"])
        # the processes are looked at once grading is over (the run stops its own on the way out)
        deadline = time.monotonic() + 10
        while (_marked_processes() or _high_uid()) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = {"marked": _marked_processes(), "high-uid": _high_uid()}
        after = _watched(course)
        after["_course"] = course
        yield {"course": course, "outcomes": outcomes, "attackers": attackers, "seconds": seconds,
               "memory": memory.most, "base": memory.base, "feedback": feedback_code, "export": export_code,
               "csv": root / "grades.csv", "before": before, "after": after, "kept": kept, "left": left}
    finally:
        memory.stop.set()
        _kill_marked()
        mended = _mend(before, kept)
        if mended:
            print("\nATTACKS CHANGED FILES OUTSIDE THEIR UNIT; PUT BACK:\n  " + "\n  ".join(mended), file=sys.stderr)


def _high_uid() -> list[tuple[int, int, str]]:
    """Sandbox processes (uid 61000 and up) left behind: those whose sandbox nobody is grading in
    any more (another test's grading beside this one, xdist's other worker, is still running)."""
    return [(pid, uid, cmd) for pid, uid, cmd in _processes() if uid >= 61000 and _orphaned(pid)]


def _orphaned(pid: int) -> bool:
    """Whether the first process above `pid` that is not the sandbox's own (bwrap, setpriv, its uid)
    is init or this test process: nobody else's grading holds it."""
    import psutil

    try:
        parents = psutil.Process(pid).parents()
    except psutil.Error:
        return False  # gone already
    for parent in parents:
        try:
            if parent.uids().real >= 61000 or os.path.basename(parent.exe() or "") in ("bwrap", "setpriv"):
                continue
        except psutil.Error:
            continue
        return parent.pid in (1, os.getpid())
    return True


def _outputs(course: Path, student: str) -> str:
    """Everything the student's autograded notebook shows as output (not the cells' sources,
    which nbgrader fills with the hidden tests)."""
    path = course / "autograded" / student / gc.LESSON / f"{gc.LESSON}.ipynb"
    nb = nbformat.read(path, as_version=4)
    texts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            texts.append(out.get("text", "") if out.output_type == "stream" else
                         "\n".join(out.get("traceback", [])) + out.get("evalue", "") if out.output_type == "error" else
                         json.dumps(out.get("data", {})))
    return "\n".join(texts)


def _reports(course: Path, student: str) -> list[dict]:
    return [json.loads(m.group(1)) for m in re.finditer(r"ttt-attack-report (\{.*\})", _outputs(course, student))]


def _scores(graded, student: str) -> dict:
    scores = gc.grades(graded["course"])
    return {cell: scores.get((student, cell)) for cell in FULL}


# (a)
def test_each_attacker_scores_exactly_what_its_functions_earn(graded):
    wrong = {}
    for student, (_, _, _, expected, _) in graded["attackers"].items():
        outcome = graded["outcomes"].get(student)
        if expected is None:
            continue
        got = _scores(graded, student)
        if got != expected or outcome is None or outcome.error:
            wrong[student] = {"scored": got, "earns": expected, "error": outcome and outcome.error}
    assert not wrong, wrong


# (b)
def test_the_attacks_the_grader_can_see_are_flagged(graded):
    unflagged = [s for s, (*_, flagged) in graded["attackers"].items() if flagged and not graded["outcomes"][s].suspicious]
    assert not unflagged, {s: graded["outcomes"][s] for s in unflagged}


# (c)
def test_honest_students_keep_their_grades_and_no_one_is_added(graded):
    from nbgrader.api import Gradebook

    for student, (_, _, expected) in HONEST.items():
        assert _scores(graded, student) == expected, student
        assert graded["outcomes"][student].suspicious == [], graded["outcomes"][student].suspicious
        assert not graded["outcomes"][student].error
    with Gradebook(f"sqlite:///{graded['course'] / 'gradebook.db'}") as gb:
        assert {s.id for s in gb.students} == set(HONEST) | set(graded["attackers"])
        for student in HONEST:  # nothing by hand either: a manual score would win over the autograder's
            for nb in gb.find_submission(gc.LESSON, student).notebooks:
                assert [g.manual_score for g in nb.grades] == [None] * len(nb.grades), student


# (d)
def test_no_file_outside_the_units_changed(graded):
    before = {k: v for k, v in graded["before"].items() if k != "_course"}
    after = {k: v for k, v in graded["after"].items() if k != "_course"}
    assert _differences(before, after) == {}


# (e)
def test_no_process_is_left(graded):
    assert graded["left"] == {"marked": [], "high-uid": []}


# what each attack could reach, as it reported it: the installation and the course are read-only
# or out of sight, no other kernel answers (a private HOME and /tmp may be written: they are the unit's)
def test_the_installation_could_not_be_written(graded):
    if "a04-install" not in graded["attackers"]:
        pytest.skip("a04-install not chosen")
    reports = [r for r in _reports(graded["course"], "a04-install") if r["attack"] == "install"]
    assert reports, _outputs(graded["course"], "a04-install")[:2000]
    for report in reports:
        assert {w: report["writable"].get(w) for w in ("package", "pth", "prefix-kernel")} == \
            {"package": False, "pth": False, "prefix-kernel": False}, report
        # the startup file and the user's kernelspec may be written: into the sandbox's own HOME, which
        # is gone with it (the snapshots show that no HOME of the machine changed)
        assert not any(str(d).startswith("written") for w, d in report["done"].items()
                       if w not in ("startup", "user-kernel")), report


def test_the_course_could_not_be_reached(graded):
    if "a05-course" not in graded["attackers"]:
        pytest.skip("a05-course not chosen")
    reports = [r for r in _reports(graded["course"], "a05-course") if r["attack"] == "course"]
    assert reports and {r["where"] for r in reports} >= {"kernel", "function"}, reports
    assert [(r["where"], r["phase"], r["writable"]) for r in reports if r["writable"]] == []


def test_no_other_kernel_could_be_reached(graded):
    if "a06-kernels" not in graded["attackers"]:
        pytest.skip("a06-kernels not chosen")
    reports = [r for r in _reports(graded["course"], "a06-kernels") if r["attack"] == "kernels"]
    assert reports, _outputs(graded["course"], "a06-kernels")[:2000]
    assert [(r["where"], r["found"], r["reached"]) for r in reports if r["reached"]] == []


# 7
def test_no_secret_reaches_the_attackers_feedback_or_notebook(graded):
    course = graded["course"]
    leaks = {}
    for student in graded["attackers"]:
        page = course / "feedback" / student / gc.LESSON / f"{gc.LESSON}.html"
        texts = {"notebook outputs": _outputs(course, student), "feedback": page.read_text() if page.exists() else ""}
        found = [(where, secret) for where, text in texts.items() for secret in SECRETS if secret in text]
        if found:
            leaks[student] = found
    assert leaks == {}


# 8
def test_an_output_flood_leaves_the_grader_small_and_the_verdict_whole(graded):
    if "a08-flood" not in graded["attackers"]:
        pytest.skip("a08-flood not chosen")
    assert _scores(graded, "a08-flood") == FULL
    assert any("output truncated" in p for p in graded["outcomes"]["a08-flood"].problems), graded["outcomes"]["a08-flood"]
    most = {k: v / 2**20 for k, v in graded["memory"].items()}
    base = graded["base"] / 2**20
    assert most["grader"] < base + WORKER_GROWTH_MB and most["worker"] < base + WORKER_GROWTH_MB, (base, most)


# 12
def test_a_hash_flooded_reply_is_refused_at_once_and_told(graded):
    if "a12-hash-flood" not in graded["attackers"]:
        pytest.skip("a12-hash-flood not chosen")
    assert _scores(graded, "a12-hash-flood") == {"test_player": 0, "test_count_empty": 1}
    said = graded["outcomes"]["a12-hash-flood"].suspicious
    assert any("share one hash" in note for note in said), said  # told what the grader refused


# 11 (and the budget of the whole run)
def test_a_sleeping_unit_ends_and_the_class_is_graded_in_time(graded):
    if "a11-sleeps" in graded["attackers"]:
        assert "a11-sleeps" in graded["outcomes"]
    assert graded["seconds"] < GRADING_BUDGET, f"grading took {graded['seconds']:.0f} s"


def test_feedback_and_export_show_the_same_grades(graded):
    assert graded["feedback"] == 0 and graded["export"] == 0
    rows = {r["student"]: r for r in csv.DictReader(graded["csv"].open())}
    for student, (_, _, expected) in HONEST.items():
        assert float(rows[student]["tiny"]) == sum(expected.values()), rows[student]
        assert rows[student]["suspicious"] == ""
    for student, (_, _, _, expected, flagged) in graded["attackers"].items():
        if expected is not None:
            assert rows[student]["tiny"] == f"{float(sum(expected.values())):.1f}", rows[student]
        if flagged:
            assert rows[student]["suspicious"], rows[student]
    for student in list(HONEST) + list(graded["attackers"]):
        assert (graded["course"] / "feedback" / student / gc.LESSON / f"{gc.LESSON}.html").exists(), student


# 15
def test_short_lived_children_are_charged_to_the_cell(graded):
    if "a15-short-children" not in graded["attackers"]:
        pytest.skip("a15-short-children not chosen")
    outcome = graded["outcomes"]["a15-short-children"]
    assert not outcome.error  # the class finished: the unit was graded
    # the work of children no one saw running and no one reaped is charged: the CPU limit stops the cell
    assert "test cell test_player timed out: " + over_limit("it", CELL_LIMIT) in outcome.problems, \
        outcome.problems


# 16
def test_nothing_a_unit_leaves_outlives_it(graded):
    if "a16-leaves" not in graded["attackers"]:
        pytest.skip("a16-leaves not chosen")
    reports = [r for r in _reports(graded["course"], "a16-leaves") if r["attack"] == "leaves"]
    # the kernel's top-level code (its cell's output), the re-check's call of player (the test cell's output)
    assert {(r["where"], r["phase"]) for r in reports} >= {("kernel", "kernel"), ("function", "recheck")}, reports
    for report in reports:
        # the keyrings are refused, not merely empty: no key reaches a later unit under the same uid
        assert report["keyring"] == ({"search": "EPERM", "add": "EPERM"} if LIVE else {"search": "EPERM"}), report
        if LIVE:
            assert report["left"] and all(": " not in path for path in report["left"]), report  # all of it written
    # the unit's copies (the kernel's work folder, the re-check's scratch copy: its current folders) are
    # the same paths outside, and gone; HOME, /tmp and /dev/shm inside were the sandbox's own, and the
    # host's show nothing of it (test_no_file_outside_the_units_changed)
    left = [path for report in reports for path in [report["cwd"], *report["left"]] if os.path.lexists(path.split(": ")[0])]
    course = [str(path) for path in graded["course"].rglob(f"*{MARK}*")]
    assert (left, course) == ([], [])


# -- ttt-grader check on a CS50 file that writes into the package and forges its verdict ----------

CS50_EARNS = {"initial_state": True, "player": True, "actions": True, "result": False, "winner": True, "utility": False}


def test_a_cs50_file_earns_what_its_functions_earn_and_changes_nothing(tmp_path):
    from grader.cs50file import check_file

    source = (DATA / "forging_tictactoe.py").read_text()
    path = tmp_path / "tictactoe.py"
    path.write_text(source.replace("_LIVE = False", f"_LIVE = {LIVE!r}"))
    course = tmp_path / "nothing"
    course.mkdir()
    before = _watched(course)
    before["_course"] = course
    kept = _kept_bytes(before)
    try:
        results = check_file(path, timeout=60, functions=tuple(CS50_EARNS), jobs=2)
        after = _watched(course)
    finally:
        _kill_marked()
        mended = _mend(before, kept)
    assert {r.function: r.passed for r in results} == CS50_EARNS, {r.function: r.message[:300] for r in results}
    assert not any(MARK in r.message for r in results)  # no verdict the file wrote itself
    assert mended == [] and _differences({k: v for k, v in before.items() if k != "_course"},
                                         {k: v for k, v in after.items() if k != "_course"}) == {}


# 13, 14: a low duty cycle, in the kernel and in the re-check
@pytest.mark.parametrize("student, said", [
    ("a13-duty-kernel", "cell #5: NotebookTimeLimit: The notebook's cells spent 60 seconds waiting without computing"),
    ("a14-duty-recheck", "test cell test_player: the submission's functions spent 60 s waiting without computing"),
])
def test_a_low_duty_cycle_ends_its_unit_for_waiting(graded, student, said):
    if student not in graded["attackers"]:
        pytest.skip(f"{student} not chosen")
    outcome = graded["outcomes"][student]
    assert _scores(graded, student) == ATTACKERS[student][3] and not outcome.error, outcome
    assert any(problem.startswith(said) for problem in outcome.problems), outcome.problems
    assert any("waited without computing for the unit's whole allowance" in note for note in outcome.suspicious), outcome
    assert graded["left"] == {"marked": [], "high-uid": []}
