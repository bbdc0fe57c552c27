"""What a student or an instructor reads is written once: no text of 28 characters or more (a
message, a help text, a note) appears twice in the source of ``ttt`` or ``grader``. Docstrings
are not messages; an f-string's fixed parts count on their own, so a wording repeated around
different values is found too (the CPU-time wording is `ttt.limits.over_limit`)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHORTEST = 28


def texts(path: Path):
    """Yield (line, text) for each string literal of `path` that is not a docstring."""
    tree = ast.parse(path.read_text())
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skipped.add(id(first.value))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):  # a string standing alone
            skipped.add(id(node.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped:
            yield node.lineno, node.value.strip()


def test_no_message_is_written_twice():
    places = defaultdict(list)
    for package in ("ttt", "grader"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for line, text in texts(path):
                if len(text) >= SHORTEST:
                    places[text].append(f"{path.relative_to(ROOT)}:{line}")
    twice = {text: where for text, where in places.items() if len(where) > 1}
    assert not twice, "written more than once (give each one home):\n" + "\n".join(
        f"  {text[:80]!r}: {', '.join(where)}" for text, where in twice.items())


def test_the_scan_finds_a_repeated_message(tmp_path):
    path = tmp_path / "twice.py"
    path.write_text('"""Doc."""\nA = f"the test used more than its {1} s of CPU time, said twice"\n'
                    'B = f"the test used more than its {2} s of CPU time, said twice"\n')
    found = [text for _, text in texts(path)]
    assert found.count("s of CPU time, said twice") == 2 and "Doc." not in found
