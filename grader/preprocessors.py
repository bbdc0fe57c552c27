"""Two nbgrader preprocessors that ``ttt-grader`` adds to nbgrader's pipelines.

``ForgetDuplicateIds`` runs right after nbgrader's ``DeduplicateIds`` when autograding: that
preprocessor empties the nbgrader metadata of a copied cell, which ``OverwriteCells`` (with
``add_missing_cells``) then fails on (KeyError 'grade_id', nbgrader 0.9.6); this one removes
the emptied metadata, so the copy is graded as the ordinary cell it now is.

Feedback without the hidden tests, only what the check said: ``HideTestCode`` is an nbgrader preprocessor for ``GenerateFeedback``, run after nbgrader's
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


class ForgetDuplicateIds(NbGraderPreprocessor):
    """Removes the empty nbgrader metadata that DeduplicateIds leaves on copied cells."""

    def preprocess_cell(self, cell, resources, cell_index):
        """Returns the cell, without an nbgrader metadata entry that has no grade id."""
        if "nbgrader" in cell.metadata and "grade_id" not in cell.metadata["nbgrader"]:
            del cell.metadata["nbgrader"]
        return cell, resources
