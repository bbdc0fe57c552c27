"""Unit tests of the nbgrader preprocessors in ``grader.preprocessors``, one file each, on fixture notebooks.

The notebooks in ``tests/data/preprocessors/`` come from a real release and real grading of a small
lesson (``winner`` and ``terminal`` from lesson 2), each as the step that runs the preprocessor
receives it:

- ``released.ipynb``: the lesson as nbgrader's ``GenerateAssignment`` hands it to ``MarkSelfCheck``;
- ``submitted-duplicate-ids.ipynb``: a submission with a copied test cell and a copied answer cell,
  as the sanitize step of ``Autograde`` reads it (``ForgetDuplicateIds``);
- ``executed.ipynb``: a submission just run in a kernel, as execution hands it to ``StderrAsStdout``
  (a warning and a log line on stderr, a ``NameError``); its hidden checks ran in the kernel too,
  as ``SafeExecute`` runs them when the re-check does not take them apart;
- ``to-execute.ipynb``: a submission as the sanitize step leaves it, for ``SafeExecute`` to run: a
  test cell with hidden tests, a cell that loops, one that ends its kernel, one that prints without
  end, and a cell after the last test cell;
- ``autograded.ipynb``: a graded submission as ``GenerateFeedback`` reads it (``LabelTests``,
  ``HideTestCode``, ``ShieldStudentText``, ``RestoreStudentText``, ``WrapLongLines``): a hidden
  check failed after the visible tests passed, a test cell without hidden tests failed with its
  traceback, a test cell with hidden tests failed on a ``NameError``, the student's own cells quote
  nbgrader's hidden-tests markers, and an answer printed a long line;
- ``autograded-hostile.ipynb``: a graded submission whose cells show HTML with a ``<script>``, an
  ``onerror`` attribute, JavaScript, SVG, Markdown and a widget (``SafeFeedback``).
"""

from __future__ import annotations

from pathlib import Path

import nbformat

DATA = Path(__file__).resolve().parent.parent / "data" / "preprocessors"


def read_notebook(name: str) -> nbformat.NotebookNode:
    """Returns the fixture notebook ``tests/data/preprocessors/<name>.ipynb``, read afresh."""
    return nbformat.read(DATA / f"{name}.ipynb", as_version=4)


def grade_id(cell) -> str | None:
    """Returns a cell's nbgrader grade id, or None for a cell without one."""
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def cell_with_id(nb, wanted: str):
    """Returns the cell of `nb` whose grade id is `wanted`."""
    return next(cell for cell in nb.cells if grade_id(cell) == wanted)


def changed_cells(before, after) -> list[int]:
    """Returns the indices of the cells that differ between two versions of a notebook."""
    assert len(before.cells) == len(after.cells)
    return [i for i, (old, new) in enumerate(zip(before.cells, after.cells)) if old != new]


def index_of(nb, wanted: str) -> int:
    """Returns the index of the cell of `nb` whose grade id is `wanted`."""
    return next(i for i, cell in enumerate(nb.cells) if grade_id(cell) == wanted)
