"""Feedback without the hidden tests: only what the check said.

``HideTestCode`` is an nbgrader preprocessor for ``GenerateFeedback``, run after nbgrader's
``ClearHiddenTests``: in every autograder test cell it shortens each error's traceback (which
would quote the hidden test lines) to its last line, ``AssertionError: <the check's message>``.
"""

from __future__ import annotations

from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution


class HideTestCode(NbGraderPreprocessor):
    """Keeps only ``ename: evalue`` of errors in test cells."""

    def preprocess_cell(self, cell, resources, cell_index):
        """Returns the cell, its test tracebacks cut to the error's name and message."""
        if cell.cell_type == "code" and is_grade(cell) and not is_solution(cell):
            for output in cell.get("outputs", []):
                if output.output_type == "error":
                    output.traceback = [f"{output.ename}: {output.evalue}"]
        return cell, resources
