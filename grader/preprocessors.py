"""Three nbgrader preprocessors that ``ttt-grader`` adds to nbgrader's pipelines.

``StderrAsStdout`` runs right after execution when autograding: nbgrader scores a test cell
that wrote anything to stderr as failed, so a correct function that calls ``warnings.warn``
(or a library that logs) would lose its marks; this one turns stderr output into ordinary
output, so only an error fails a cell.

``ForgetDuplicateIds`` runs right after nbgrader's ``DeduplicateIds`` when autograding: that
preprocessor empties the nbgrader metadata of a copied cell, which ``OverwriteCells`` (with
``add_missing_cells``) then fails on (KeyError 'grade_id', nbgrader 0.9.6); this one removes
the emptied metadata, so the copy is graded as the ordinary cell it now is.

Feedback without the hidden tests, only what the check said: ``HideTestCode`` is an nbgrader
preprocessor for ``GenerateFeedback``, run just before nbgrader's ``ClearHiddenTests`` (which
removes the hidden tests' code): in every test cell with hidden tests it shortens each error's
traceback, which would quote the hidden test lines, to ``AssertionError: <the check's
message>``. Errors in test cells without hidden tests keep their traceback.
"""

from __future__ import annotations

from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution


class HideTestCode(NbGraderPreprocessor):
    """Keeps only ``ename: evalue`` of errors in test cells that hold hidden tests."""

    def preprocess_cell(self, cell, resources, cell_index):
        """Returns the cell, its tracebacks cut to the error's name and message if it has hidden tests."""
        hidden = ClearHiddenTests(config=self.config).begin_test_delimeter in cell.source
        if cell.cell_type == "code" and is_grade(cell) and not is_solution(cell) and hidden:
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


class StderrAsStdout(NbGraderPreprocessor):
    """Turns each code cell's stderr output into stdout output (only errors fail a test cell)."""

    def preprocess_cell(self, cell, resources, cell_index):
        """Returns the cell, its stderr streams renamed stdout."""
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.output_type == "stream" and output.name == "stderr":
                output.name = "stdout"
        return cell, resources
