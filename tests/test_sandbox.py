"""grader.sandbox: what student code run in the sandbox can and cannot see and do, with the real bubblewrap."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import psutil
import pytest

import grader.sandbox as sandbox_module
import ttt
from grader.sandbox import (Limits, Sandbox, SandboxUnavailable, Tree, available, refused_calls_program, remove_folder,
                            run_limited)

REASON = available()
needs_sandbox = pytest.mark.sandbox  # fails, saying why, where none can start (tests/conftest.py)
ROOT = os.geteuid() == 0


def start(code: str, sandbox: Sandbox | None = None, *, cwd: str | Path = "/tmp", **popen) -> subprocess.Popen:
    """Return the running sandbox that runs Python `code`, its output (text) on pipes."""
    sandbox = sandbox or Sandbox()
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    return sandbox.popen([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, text=True, **popen)


def run(code: str, sandbox: Sandbox | None = None, *, cwd: str | Path = "/tmp") -> str:
    """Return what Python `code` printed in a sandbox; fails the test when it does not exit with 0."""
    process = start(code, sandbox, cwd=cwd)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    return out


def outcome(code: str, **kw) -> dict:
    """Return the JSON object Python `code` printed last in a sandbox."""
    return json.loads(run(code, **kw).splitlines()[-1])


def until_line(process: subprocess.Popen, expected: str) -> None:
    """Wait for `process` to print the line `expected`; fails the test when it prints something else."""
    line = process.stdout.readline().strip()
    assert line == expected, (line, process.stderr.read() if process.poll() is not None else "")


PROJECT = Path(ttt.__file__).resolve().parents[1]
ATTEMPT = """
import errno, json, os
def attempt(path, mode="a"):
    try:
        with open(path, mode) as file:
            file.write("x")
        return "written"
    except OSError as error:
        return errno.errorcode[error.errno]
"""


@needs_sandbox
def test_installation_is_read_only():
    package = os.path.dirname(ttt.__file__)
    site = sysconfig.get_paths()["purelib"]
    pth = next(str(path) for path in Path(site).glob("*.pth"))
    targets = [os.path.join(package, "x.py"), os.path.join(package, "__init__.py"), os.path.join(site, "x.pth"),
               pth, os.path.join(sys.prefix, "x"), os.path.join(os.path.realpath(sys.base_prefix), "x"),
               "/usr/x", "/etc/x", "/x"]
    before = Path(pth).read_text()
    found = outcome(ATTEMPT + f"print(json.dumps({{path: attempt(path) for path in {targets!r}}}))")
    assert set(found.values()) <= {"EROFS", "EACCES"}, found
    assert Path(pth).read_text() == before and not os.path.exists(os.path.join(package, "x.py"))


@needs_sandbox
def test_home_and_tmp_are_private_and_fresh(tmp_path):
    code = ATTEMPT + """
print(json.dumps({"home": os.environ["HOME"], "tmp": os.environ["TMPDIR"], "there": sorted(os.listdir("/tmp")),
                  "home files": os.listdir(os.environ["HOME"]), "writes": [attempt("/tmp/mark"),
                  attempt(os.path.expanduser("~/mark")), attempt("/dev/shm/mark")]}))
"""
    first, second = outcome(code), outcome(code)
    assert first["home"] == "/home/student" and first["tmp"] == "/tmp"
    assert first["writes"] == ["written"] * 3
    # the installation is bound read-only where it is: a project cloned under /tmp shows its first folder there
    bound = [PROJECT.relative_to("/tmp").parts[0]] if PROJECT.is_relative_to("/tmp") else []
    assert first["there"] == bound and first["home files"] == []
    assert second["there"] == bound and second["home files"] == []  # the last sandbox's files are gone
    assert not os.path.exists("/tmp/mark") and not os.path.exists("/home/student/mark")


@needs_sandbox
def test_only_the_installation_is_visible_of_the_host():
    project = Path(ttt.__file__).resolve().parents[1]
    found = outcome(f"""
import json, os
def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as error:
        return error.strerror
print(json.dumps({{path: listing(path) for path in
                  ["/", "/root", "/work", "/var", "/home", {str(project)!r}, "/proc/1/root/root"]}}))
""")
    assert found["/"] == sorted(set(found["/"]) & {"bin", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32",
                                                  "proc", "sbin", "tmp", "usr"} | {*Path(sys.prefix).parts[1:2],
                                                  *Path(os.path.realpath(sys.base_prefix)).parts[1:2],
                                                  *project.parts[1:2]})
    assert found["/var"] == "No such file or directory"
    assert found["/home"] == ["student"]
    assert set(found[str(project)]) <= {"ttt", "grader", ".venv"}, found  # no notebooks/, tests/, course/
    if os.path.realpath(sys.base_prefix).startswith("/root/"):
        assert found["/root"] == [Path(os.path.realpath(sys.base_prefix)).parts[2]]  # only the way to Python
    else:
        assert found["/root"] == "No such file or directory"


@needs_sandbox
def test_no_network():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    try:
        found = outcome(f"""
import json, socket
def connect(address):
    try:
        socket.create_connection(address, timeout=2).close()
        return "connected"
    except OSError as error:
        return type(error).__name__
print(json.dumps({{"local": connect(("127.0.0.1", {server.getsockname()[1]})), "outside": connect(("1.1.1.1", 53)),
                  "interfaces": [name for _, name in socket.if_nameindex()]}}))
""")
    finally:
        server.close()
    assert found["local"] != "connected" and found["outside"] != "connected", found
    assert found["interfaces"] == ["lo"]


@needs_sandbox
def test_own_pid_namespace_and_uid():
    one, two = Sandbox(), Sandbox()
    code = """
import json, os
pids = sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
print(json.dumps({"pids": pids, "me": os.getpid(), "uid": os.getuid(), "gid": os.getgid(),
                  "groups": os.getgroups(), "caps": open("/proc/self/status").read().split("CapEff:")[1].split()[0]}))
"""
    found = outcome(code, sandbox=one)
    assert found["pids"] == [1, found["me"]] and found["me"] <= 3  # bwrap's init and this process only
    assert int(found["caps"], 16) == 0
    if ROOT:
        assert found["uid"] == found["gid"] == one.uid >= sandbox_module.FIRST_UID
        assert found["groups"] == []
        assert one.uid != two.uid
        assert outcome(code, sandbox=two)["uid"] == two.uid
        with pytest.raises(ValueError):
            Sandbox(uid=0)
    else:
        assert found["uid"] == os.getuid()


@needs_sandbox
def test_writable_folder_is_writable_and_chowned(tmp_path):
    unit = tmp_path / "deep" / "unit"
    (unit / "sub").mkdir(parents=True)
    (unit / "sub" / "given.txt").write_text("given")
    os.symlink("/etc/passwd", unit / "link")
    passwd = os.stat("/etc/passwd")
    sandbox = Sandbox([unit])
    found = outcome(ATTEMPT + """
print(json.dumps({"new": attempt("made.txt", "w"), "given": attempt("sub/given.txt"), "cwd": os.getcwd(),
                  "beside": attempt("../beside.txt", "w")}))
""", sandbox=sandbox, cwd=unit)
    assert found == {"new": "written", "given": "written", "cwd": str(unit),
                     "beside": "EACCES" if ROOT else found["beside"]}
    assert (unit / "made.txt").read_text() == "x" and (unit / "sub" / "given.txt").read_text() == "givenx"
    assert not (unit.parent / "beside.txt").exists()
    if ROOT:
        for path in [unit, unit / "sub", unit / "sub" / "given.txt", unit / "made.txt"]:
            assert path.stat().st_uid == sandbox.uid, path
        assert os.lstat(unit / "link").st_uid == sandbox.uid
        after = os.stat("/etc/passwd")
        assert (after.st_uid, after.st_gid) == (passwd.st_uid, passwd.st_gid)  # the link was not followed


@needs_sandbox
def test_fork_bomb_stops_at_the_process_limit():
    limit = 24
    process = start("""
import os, time
first = os.getpid()
while True:
    try:
        os.fork()
    except OSError:
        if os.getpid() == first:
            print("full", flush=True)
            first = None
        time.sleep(0.05)
""", Sandbox(limits=Limits(processes=limit)))
    tree = Tree(process.pid)
    try:
        until_line(process, "full")
        time.sleep(0.5)
        count = len(tree.processes())
        assert 2 <= count <= limit + 2, count  # + bwrap outside and bwrap's init inside
        assert subprocess.run(["true"]).returncode == 0  # the machine still starts processes
    finally:
        tree.kill()
    assert not tree.alive() and tree.processes() == []
    process.wait(timeout=10)


@needs_sandbox
def test_kill_ends_a_double_forked_setsid_child():
    process = start("""
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execve("/bin/sleep", ["sleep", "300"], {})
    os._exit(0)
os.wait()
print("forked", flush=True)
time.sleep(300)
""")
    tree = Tree(process.pid)
    until_line(process, "forked")
    deadline = time.monotonic() + 10
    while (sleeper := next((psutil.Process(pid) for pid in tree.processes()
                            if psutil.Process(pid).name() == "sleep"), None)) is None:  # it may not have run exec yet
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert sleeper.environ() == {}
    assert sleeper.ppid() in tree.processes()  # re-parented to the pid namespace's init, inside the tree
    tree.kill()
    assert not tree.alive()
    assert not psutil.pid_exists(sleeper.pid) or sleeper.status() == psutil.STATUS_ZOMBIE
    tree.kill()  # again: nothing to do
    process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL


@needs_sandbox
def test_killing_the_outer_process_ends_the_sandbox():
    process = start("""
import os, time
if os.fork() == 0:
    os.setsid()
    time.sleep(300)
print("forked", flush=True)
time.sleep(300)
""")
    until_line(process, "forked")
    inside = [psutil.Process(pid) for pid in Tree(process.pid).processes()[1:]]
    assert len(inside) == 3  # bwrap's init, python, its child
    process.kill()  # what a KernelManager does to the kernel it started
    process.wait(timeout=10)
    gone, alive = psutil.wait_procs(inside, timeout=10)
    assert alive == []


@needs_sandbox
def test_memory_limit_gives_memory_error():
    found = outcome("""
import json
try:
    block = bytearray(600 * 2**20)
    print(json.dumps("allocated"))
except MemoryError:
    print(json.dumps("MemoryError"))
""", sandbox=Sandbox(limits=Limits(memory_mb=512)))
    assert found == "MemoryError"


@needs_sandbox
@pytest.mark.parametrize("cgroup", [True, False], ids=["cgroup", "processes"])
def test_cpu_seconds_counts_busy_loops_and_reaped_children(cgroup):
    process = start("""
import os, sys, time
def burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
child = os.fork()
if child == 0:
    burn(0.5)
    os._exit(0)
os.waitpid(child, 0)
print("reaped", flush=True)
sys.stdin.readline()
burn(0.4)
print("burnt", flush=True)
time.sleep(300)
""", stdin=subprocess.PIPE)
    tree = Tree(process.pid, cgroup=cgroup)
    assert (tree.cgroup is not None) == cgroup
    try:
        until_line(process, "reaped")
        first = tree.cpu_seconds()  # the child was never seen running: its time is in its parent's reaped part
        assert first >= 0.45
        process.stdin.write("go\n")
        process.stdin.flush()
        until_line(process, "burnt")
        seen = [tree.cpu_seconds() for _ in range(5)]
        assert seen == sorted(seen) and seen[0] >= first + 0.35
        assert seen[-1] < first + 0.4 + 0.5  # nothing counted twice
    finally:
        tree.kill()
        process.wait(timeout=10)
    assert tree.cpu_seconds() >= seen[-1]  # never decreases, not even once all is gone


@needs_sandbox
@pytest.mark.parametrize("cgroup", [True, False], ids=["cgroup", "processes"])
def test_cpu_seconds_keeps_a_seen_child_that_no_one_reaps(cgroup):
    process = start("""
import os, signal, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children vanish when they exit, their time with them
if os.fork() == 0:
    end = time.process_time() + 0.6
    while time.process_time() < end:
        pass
    os._exit(0)
time.sleep(300)
""")
    tree = Tree(process.pid, cgroup=cgroup)
    assert (tree.cgroup is not None) == cgroup
    try:
        deadline = time.monotonic() + 10
        while len(tree.processes()) < 4 and time.monotonic() < deadline:  # bwrap, its init, python, the child
            time.sleep(0.02)
        while len(tree.processes()) == 4 and time.monotonic() < deadline:
            tree.cpu_seconds()
            time.sleep(0.05)
        assert tree.cpu_seconds() >= 0.5
    finally:
        tree.kill()
        process.wait(timeout=10)


@needs_sandbox
@pytest.mark.parametrize("code, limits, expected", [
    ("while True: pass", {"cpu_seconds": 0.3}, "cpu"),
    ("import time; time.sleep(300)", {"cpu_seconds": 5, "stall_seconds": 0.6}, "stall"),
    ("pass", {"cpu_seconds": 5}, "dead"),
    ("import time; time.sleep(300)", {"cpu_seconds": 5, "done_after": 0.3}, None),
])
def test_run_limited(code, limits, expected):
    done_after = limits.pop("done_after", 60)
    process = start(code)
    tree = Tree(process.pid)
    began = time.monotonic()
    try:
        found = run_limited(tree, poll=0.05, done=lambda: time.monotonic() - began > done_after, **limits)
    finally:
        tree.kill()
        process.wait(timeout=10)
    assert found == expected
    assert time.monotonic() - began < 10


KEYRING = """
import ctypes, errno, json, platform
add_key, keyctl = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
USER_KEYRING, SEARCH = ctypes.c_int(-4), 10  # KEY_SPEC_USER_KEYRING, KEYCTL_SEARCH
def said(result):
    return result if result >= 0 else errno.errorcode[ctypes.get_errno()]
name = %r
found = {"search": said(libc.syscall(keyctl, SEARCH, USER_KEYRING, b"user", name, 0))}
if %r:
    found["add"] = said(libc.syscall(add_key, b"user", name, b"a note for a later unit", 23, USER_KEYRING))
print(json.dumps(found))
"""


@needs_sandbox
def test_no_kernel_keyring_outlives_a_sandbox():
    # a uid's keyrings outlive its processes, and sandbox uids come back: the same uid twice here
    uid = sandbox_module.FIRST_UID + sandbox_module.UID_COUNT - 1 if ROOT else None
    name = f"ttt-secret-{uuid.uuid4().hex}".encode()
    first = outcome(KEYRING % (name, True), sandbox=Sandbox(uid=uid))
    later = outcome(KEYRING % (name, False), sandbox=Sandbox(uid=uid))
    assert first == {"search": "EPERM", "add": "EPERM"}  # refused, not merely not found
    assert later == {"search": "EPERM"}


SCHEDULING = """
import json, os
found = {}
for name, change in [("nice", lambda: os.nice(19)), ("affinity", lambda: os.sched_setaffinity(0, {0})),
                     ("idle", lambda: os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))),
                     ("batch", lambda: os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))),
                     ("ordinary", lambda: os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0)))]:
    try:
        change()
        found[name] = "changed"
    except PermissionError:
        found[name] = "EPERM"
try:  # the session's share of the machine: a file, not a system call
    with open("/proc/self/autogroup", "w") as handle:
        handle.write("19")
    found["autogroup"] = "changed"
except OSError as error:
    found["autogroup"] = os.strerror(error.errno)
print(json.dumps(found))
"""


@needs_sandbox
def test_a_sandbox_cannot_change_how_it_is_scheduled():
    # at the lowest priority, or pinned to a busy core, its threads would wait for a core instead of
    # choosing to wait, and the stall rule leaves such waits out; asking for the ordinary policy, as
    # libzmq does on each of its threads (and aborts the kernel if refused), is allowed
    assert outcome(SCHEDULING) == {"nice": "EPERM", "affinity": "EPERM", "idle": "EPERM", "batch": "EPERM",
                                   "ordinary": "changed", "autogroup": "Read-only file system"}


def test_the_seccomp_filter_is_made_for_known_machines_only():
    for machine in ("x86_64", "aarch64"):
        program = refused_calls_program(machine)
        assert program and len(program) % 8 == 0  # whole struct sock_filter instructions
    assert refused_calls_program("x86_64") != refused_calls_program("aarch64")
    assert refused_calls_program("riscv64") is None  # no numbers for it: no filter, said by check


LEAVE = """
import os
def nest(base, levels):  # deeper than shutil.rmtree's recursion goes, made one folder at a time
    fd = os.open(base, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(os.open("sealed", os.O_CREAT | os.O_WRONLY, 0, dir_fd=fd))  # mode 000
    os.chmod(fd, 0o500)  # its folder unwritable
    os.close(fd)
os.mkdir("many")
for n in range(3000):
    open(f"many/{n}", "w").close()
os.mkdir("deep")
nest("deep", 1500)
os.chmod("deep", 0)
os.makedirs("shut/inner")
open("shut/inner/file", "w").close()
os.chmod("shut/inner/file", 0)
os.chmod("shut/inner", 0)
os.chmod("shut", 0o500)
os.mkdir(".removed-1")  # the name the grader gives what it moves up: never written over
os.symlink("/etc", "link")  # removed, never followed
os.symlink("/etc/hostname", ".removed-2")
os.chmod(".", 0)
print("left")
"""


@needs_sandbox
@pytest.mark.parametrize("remover", ["grader", "sandbox uid"])
def test_what_a_unit_leaves_is_removed(remover):
    # the folder's parent: the grader's (root-owned, others may pass), or the sandbox uid's (an ordinary user's)
    parent = Path(tempfile.mkdtemp(prefix="ttt-leaves-"))
    parent.chmod(0o711)
    unit = parent / "unit"
    unit.mkdir()
    sandbox = Sandbox([unit])
    try:
        assert run(LEAVE, sandbox, cwd=unit).strip() == "left"
        etc = sorted(os.listdir("/etc"))
        if remover == "sandbox uid" and ROOT:
            os.chown(parent, sandbox.uid, sandbox.uid)
            child = os.fork()
            if child == 0:  # the same uid as the code that left it all, and nothing more
                code = 1
                try:
                    os.setgroups([])
                    os.setresgid(sandbox.uid, sandbox.uid, sandbox.uid)
                    os.setresuid(sandbox.uid, sandbox.uid, sandbox.uid)
                    remove_folder(unit)
                    code = 0
                except BaseException as error:
                    print(f"the sandbox's uid could not remove it: {error!r}", file=sys.stderr)
                finally:
                    os._exit(code)
            assert os.waitpid(child, 0)[1] == 0
        else:
            remove_folder(unit)
        assert os.listdir(parent) == []
        assert sorted(os.listdir("/etc")) == etc and os.path.exists("/etc/hostname")
        remove_folder(unit)  # gone already: nothing to do
    finally:
        os.chown(parent, 0, 0) if ROOT else None
        shutil.rmtree(parent, ignore_errors=True)


@needs_sandbox
def test_the_re_checks_scratch_copy_is_gone_when_the_unit_ends(tmp_path):
    from grader.recheck import judge, student_launcher

    unit, scratch = tmp_path / "unit", tmp_path / "scratch"
    unit.mkdir()
    scratch.mkdir()
    (unit / "given.txt").write_text("the unit's own file")
    answer = {"source": "import os\nexec(" + repr(LEAVE) + ")\ndef here():\n    return os.getcwd()",
              "meta": {"solution": True, "grade_id": "answer"}}
    test = {"source": "assert here() != ''", "meta": {"grade": True, "grade_id": "here", "points": 1}}
    verdicts, _ = judge([answer, test], [{**answer, "source": "# YOUR CODE HERE"}, test], folder=unit,
                        launcher=student_launcher(under=scratch))
    assert verdicts["here"].passed, verdicts
    assert os.listdir(scratch) == []  # its copy, and all the code left in it, gone with the re-check
    assert os.listdir(unit) == ["given.txt"]


def test_command_for_an_ordinary_user(monkeypatch):
    monkeypatch.setattr(sandbox_module, "_is_root", lambda: False)
    command = Sandbox._unchecked().command(["python3", "-c", "pass"], cwd="/tmp", seccomp=7)
    assert os.path.basename(command[0]) == "bwrap"
    assert command[command.index("--seccomp") + 1] == "7"
    assert {"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
            "--clearenv"} <= set(command)
    assert not any("setpriv" in word for word in command)
    inner = command[command.index("--") + 1:]
    assert inner[-3:] == ["python3", "-c", "pass"] and "128" in " ".join(inner[:-3])  # RLIMIT_NPROC inside


def test_unavailable_says_how_to_install(monkeypatch):
    monkeypatch.setattr(sandbox_module, "_tool", lambda name: None)
    reason = available.__wrapped__()
    assert "apt-get install bubblewrap" in reason
    available.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="bubblewrap"):
            Sandbox()
    finally:
        available.cache_clear()


@needs_sandbox
@pytest.mark.slow
def test_kernel_launcher_runs_ipykernel_in_the_sandbox(tmp_path):
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    spec = tmp_path / "kernels" / "sandboxed"
    spec.mkdir(parents=True)
    spec.joinpath("kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "grader.sandbox", "kernel", "{connection_file}", "--memory-mb", "1024", "--",
                 sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "sandboxed", "language": "python", "interrupt_mode": "message"}))
    run_folder, unit = tmp_path / "run", tmp_path / "unit"
    run_folder.mkdir(mode=0o700)
    unit.mkdir()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    km = KernelManager(kernel_name="sandboxed", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(spec.parent)]),
                       transport="ipc", connection_file=str(run_folder / "kernel.json"))
    km.start_kernel(cwd=str(unit), env={**os.environ, "TTT_GRADER_MARK": "1", "SECRET_OF_OURS": "1",
                                         "JUPYTER_RUNTIME_DIR": str(tmp_path)})
    tree = Tree(km.provisioner.process.pid)
    client = km.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        printed = []

        def execute(code: str) -> dict:
            return client.execute_interactive(code, timeout=60, output_hook=lambda message: printed.append(
                message["content"].get("text", "")) if message["msg_type"] == "stream" else None)

        reply = execute(ATTEMPT + f"""
import socket
def connect():
    try:
        socket.create_connection(("127.0.0.1", {server.getsockname()[1]}), timeout=2).close()
        return "connected"
    except OSError as error:
        return type(error).__name__
print(json.dumps({{"uid": os.getuid(), "work": os.listdir({str(PROJECT.parent)!r}) if os.path.exists({str(PROJECT.parent)!r}) else None,
                  "root secrets": [name for name in (os.listdir("/root") if os.path.exists("/root") else [])
                                   if name != ".pyenv"],
                  "ttt": attempt({str(Path(ttt.__file__).resolve().parent / "x")!r}), "here": attempt("made.txt", "w"), "cwd": os.getcwd(),
                  "network": connect(), "env": sorted(os.environ)}}))
""")
        assert reply["content"]["status"] == "ok", reply["content"]
        found = json.loads("".join(printed).splitlines()[-1])
        if ROOT:
            assert found["uid"] != 0
        # beside the project nothing, but for the kernel's own run folder when the test's folders lie beside it
        beside = {PROJECT.name} | ({run_folder.relative_to(PROJECT.parent).parts[0]}
                                   if run_folder.is_relative_to(PROJECT.parent) else set())
        assert found["work"] is None or (PROJECT.name in found["work"] and set(found["work"]) <= beside), found["work"]
        assert found["root secrets"] == []
        # the kernel works in a copy of the notebook's folder, inside its own run folder: what it writes stays there
        assert found["ttt"] in ("EROFS", "EACCES") and found["here"] == "written" and found["cwd"] == str(run_folder / "work")
        assert found["network"] != "connected"
        assert "TTT_GRADER_MARK" in found["env"] and "SECRET_OF_OURS" not in found["env"]
        assert "JUPYTER_RUNTIME_DIR" not in found["env"]
        assert (run_folder / "work" / "made.txt").exists() and not (unit / "made.txt").exists()

        client.execute("while True: pass")  # an interrupt arrives as a message: a signal would end bwrap
        time.sleep(0.5)
        km.interrupt_kernel()
        reply = client.get_shell_msg(timeout=30)
        assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=False)
        server.close()
    deadline = time.monotonic() + 10
    while tree.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert tree.processes() == []
