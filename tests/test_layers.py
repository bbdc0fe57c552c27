"""The library is layered one way, as the README says: rules -> search -> trace -> pictures ->
widgets; so is the grader: course -> machine -> checks -> steps -> configuration -> run ->
commands. A module imports only from its own layer and the layers before it; the library never
imports the grader."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ttt"
GRADER = PACKAGE.parent / "grader"
LAYERS = {  # module (or package) -> its layer, in order
    "ttt.errors": 0, "ttt.limits": 0, "ttt.registry": 0, "ttt.games": 0, "ttt.tictactoe": 0,
    "ttt.search": 1, "ttt.engine": 1, "ttt.agents": 1, "ttt.play": 1,
    "ttt.trace": 2, "ttt.call_recorder": 2,
    "ttt.draw": 3, "ttt.charts": 3,
    "ttt.widgets": 4, "ttt.widgets.steps": 4, "ttt.widgets.picture": 4, "ttt.cli": 4, "ttt.__main__": 4,
}
GRADER_LAYERS = {  # the README's grader table, a layer a row
    "grader.course": 0, "grader.layout": 0, "grader.cells": 0,
    "grader.processes": 1, "grader.kernel": 1, "grader.sandbox": 1,
    "grader.checks": 2, "grader.remote": 2,
    "grader.stage": 3, "grader.execute": 3, "grader.recheck": 3, "grader.preprocessors": 3, "grader.feedback": 3,
    "grader.nbconfig": 4,
    "grader.gradebook": 5, "grader.worker": 5, "grader.cluster": 5, "grader.autograde": 5,
    "grader.collect": 6, "grader.course_ops": 6, "grader.selfcheck": 6, "grader.check_button": 6, "grader.validate": 6, "grader.cs50file": 6, "grader.cli": 6,
    "grader.__main__": 6,
}
# A Trace shown in a notebook draws itself: ttt.draw is imported when it is displayed, not before.
# The explorer's sentences, once ttt.draw's, are still found there (as the docs import them) when asked for.
# A tree where dot cannot run is a widget the page draws (ttt.widgets.picture), imported only then.
ALLOWED = {("ttt.trace", "ttt.draw"), ("ttt.draw", "ttt.widgets.steps"), ("ttt.draw", "ttt.widgets.picture")}


def layer(module: str, layers: dict = LAYERS) -> int | None:
    for name, level in layers.items():
        if module == name or module.startswith(name + "."):
            return level
    return None


def imported(path: Path, package: str = "ttt") -> set[str]:
    """The modules of `package` a file imports anywhere in it (``from ttt import x`` counts as ttt.x)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == package}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == package:
            found |= {f"{node.module}.{a.name}" if node.module == package else node.module for a in node.names}
    return found


FILES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_a_module_imports_only_from_its_layer_and_those_before(path):
    name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
    if name == "ttt":
        return
    own = layer(name)
    assert own is not None, f"{name} is in no layer: add it to LAYERS and to the README's table"
    upward = sorted(m for m in imported(path) if (layer(m) or 0) > own and (name, m) not in ALLOWED)
    assert not upward, f"{name} (layer {own}) imports {', '.join(upward)} from a later layer"


def test_the_readme_table_names_every_module():
    readme = (PACKAGE.parent / "README.md").read_text()
    for name in LAYERS:
        if name != "ttt.__main__":
            assert f"`{name}`" in readme, name


GRADER_FILES = sorted(p for p in GRADER.rglob("*.py") if "student_lab" not in p.parts)


@pytest.mark.parametrize("path", GRADER_FILES, ids=lambda p: str(p.relative_to(GRADER.parent)))
def test_a_grader_module_imports_only_from_its_layer_and_those_before(path):
    name = ".".join(path.relative_to(GRADER.parent).with_suffix("").parts).removesuffix(".__init__")
    if name == "grader":
        return
    own = layer(name, GRADER_LAYERS)
    assert own is not None, f"{name} is in no layer: add it to GRADER_LAYERS and to the README's grader table"
    upward = sorted(m for m in imported(path, "grader") if (layer(m, GRADER_LAYERS) or 0) > own)
    assert not upward, f"{name} (layer {own}) imports {', '.join(upward)} from a later layer"


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_the_library_never_imports_the_grader(path):
    assert not imported(path, "grader"), f"{path.name} imports the grader"


def test_the_readme_grader_table_names_every_module():
    readme = (PACKAGE.parent / "README.md").read_text()
    table = readme[readme.index("<!-- grader-modules -->"):readme.index("<!-- /grader-modules -->")]
    for name in GRADER_LAYERS:
        if name != "grader.__main__":
            assert f"`{name}`" in table, name


REMOTE = ("grader.remote.errors", "grader.remote.protocol", "grader.remote.source", "grader.remote.server",
          "grader.remote.client")  # the student server's package, in order: each imports only from those before it


@pytest.mark.parametrize("module", REMOTE)
def test_the_student_server_s_modules_import_one_way(module):
    path = GRADER.parent / (module.replace(".", "/") + ".py")
    later = REMOTE[REMOTE.index(module) + 1:]
    reached = {m for m in imported(path, "grader") if m.startswith("grader.remote")}
    assert not reached & set(later), f"{module} imports {', '.join(sorted(reached & set(later)))}, which come after it"
    assert reached <= set(REMOTE[:REMOTE.index(module)]), f"{module} imports {', '.join(sorted(reached))} (not its modules)"


def test_the_student_server_s_package_holds_those_modules():
    found = {f"grader.remote.{p.stem}" for p in (GRADER / "remote").glob("*.py") if not p.stem.startswith("__")}
    assert found == set(REMOTE)


LONGEST = 600  # lines a module may have, but for those below, each with the reason it is one module
LONG_MODULES = {
    "ttt/engine/compiled.py": "the big boards' engine compiled by Numba: its kernels call each other and are compiled, "
                              "and cached on disk, as one module",
    "grader/sandbox.py": "one sandbox: bubblewrap's command, its system-call filter, its limits, its user and its folders, "
                         "which every line of Sandbox uses together",
    "grader/checks/student.py": "a student's function as the checks call it: the wrapper, its stand-in helpers and its "
                                "spies share the tables of the reference's answers and the traps",
    "grader/remote/server.py": "the student server: one class whose operations share the submission's namespace, "
                               "its limits and its traps",
    "grader/remote/client.py": "the trusted end of the protocol: one class (Remote) whose state, the server's process, "
                               "the planned calls and the test's budget, every method reads",
}


@pytest.mark.parametrize("path", FILES + GRADER_FILES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_a_module_is_short_or_says_why_not(path):
    name = str(path.relative_to(PACKAGE.parent))
    lines = len(path.read_text().splitlines())
    if name in LONG_MODULES:
        assert lines > LONGEST, f"{name} is {lines} lines now: take it out of LONG_MODULES"
    else:
        assert lines <= LONGEST, f"{name} is {lines} lines: split it, or say in LONG_MODULES why it is one module"
