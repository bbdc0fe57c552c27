"""The library is layered one way, as the README says: rules -> search -> trace -> pictures ->
widgets. A module imports only from its own layer and the layers before it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ttt"
LAYERS = {  # module (or package) -> its layer, in order
    "ttt.errors": 0, "ttt.limits": 0, "ttt.games": 0, "ttt.tictactoe": 0,
    "ttt.search": 1, "ttt.engine": 1, "ttt.agents": 1, "ttt.play": 1,
    "ttt.trace": 2,
    "ttt.draw": 3,
    "ttt.widgets": 4, "ttt.cli": 4, "ttt.__main__": 4,
}
# A Trace shown in a notebook draws itself: ttt.draw is imported when it is displayed, not before.
ALLOWED = {("ttt.trace", "ttt.draw")}


def layer(module: str) -> int | None:
    for name, level in LAYERS.items():
        if module == name or module.startswith(name + "."):
            return level
    return None


def imported(path: Path) -> set[str]:
    """The ttt modules a file imports anywhere in it (``from ttt import x`` counts as ttt.x)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("ttt")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ttt"):
            found |= {f"{node.module}.{a.name}" if node.module == "ttt" else node.module for a in node.names}
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
