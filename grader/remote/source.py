"""What loading a submission's definitions means: a cell's source as plain Python, and the
statements of it that loading runs (`KEPT`). The one place that says so, for the student server and
for the grader's own reading of a submission."""

from __future__ import annotations

import ast

KEPT = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign,
        ast.AugAssign, ast.If, ast.Try)


def python_source(source: str) -> str:
    """Returns a cell's source as plain Python (IPython's magics and shell escapes translated)."""
    try:
        ast.parse(source)
        return source
    except SyntaxError:
        pass
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


def definitions(source: str) -> list[ast.stmt]:
    """Returns the statements of a cell that loading a submission runs: its definitions (`KEPT`),
    each to be run on its own; none for a cell that is not Python (after IPython's translation)."""
    try:
        tree = ast.parse(python_source(source))
    except (SyntaxError, ValueError):
        return []
    return [statement for statement in tree.body if isinstance(statement, KEPT)]
