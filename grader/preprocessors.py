"""Two nbgrader preprocessors that ``ttt-grader`` adds to nbgrader's pipelines.

``ForgetDuplicateIds`` runs right after nbgrader's ``DeduplicateIds`` when autograding: that
preprocessor empties the nbgrader metadata of a copied cell, which ``OverwriteCells`` (with
``add_missing_cells``) then fails on (KeyError 'grade_id', nbgrader 0.9.6); this one removes
the emptied metadata, so the copy is graded as the ordinary cell it now is.

Feedback without the hidden tests, only what the check said: ``HideTestCode`` is an nbgrader
preprocessor for ``GenerateFeedback``, run just before nbgrader's ``ClearHiddenTests`` (which
removes the hidden tests' code): in every test cell with hidden tests it shortens each error's
traceback, which would quote the hidden test lines, to ``AssertionError: <the check's
message>``. Errors in test cells without hidden tests keep their traceback.

Feedback that runs no student code in the reader's browser: ``SafeFeedback`` is nbconvert's own
``SanitizeHTML`` (bleach), run last in ``GenerateFeedback`` over every cell: HTML and Markdown
outputs are cleaned, outputs of any other type that a browser would run or render as markup
(JavaScript, SVG, widgets) are dropped, and Markdown and raw cells are cleaned, so a
submission's ``<script>``, ``onerror`` attributes and the like reach the feedback as text.
nbconvert's preprocessor leaves Markdown's ``>`` (quotes, ``v >= beta``), ``&`` and ``<``
before a space or ``=`` escaped, which would show as ``&gt;`` in the feedback; none of them can
open a tag, so ``SafeFeedback`` puts them back.
"""

from __future__ import annotations

import re

from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution
from traitlets import Bool


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


_HARMLESS = re.compile(r"&gt;|&amp;(?=\s)|&lt;(?=[\s=])")


class SafeFeedback(SanitizeHTML):
    """nbconvert's SanitizeHTML (escaping, not stripping), with Markdown's harmless ``>``,
    ``&`` and ``<`` put back; on by default (nbconvert's preprocessors are off until enabled)."""

    enabled = Bool(True, help="Whether to sanitise the feedback (on unless turned off)").tag(config=True)

    def sanitize_html_tags(self, html_str):
        """Returns the text with every tag and attribute bleach does not allow escaped."""
        cleaned = super().sanitize_html_tags(html_str)
        return _HARMLESS.sub(lambda m: {"&gt;": ">", "&amp;": "&", "&lt;": "<"}[m.group(0)], cleaned)
