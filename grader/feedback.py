"""The feedback page a student reads (nbgrader's ``GenerateFeedback``, its pipeline in
``grader.nbconfig``): what it shows of each test cell, and what it never shows or runs.

Feedback without the hidden tests, only what the check said: ``HideTestCode`` is an nbgrader
preprocessor for ``GenerateFeedback``, run just before nbgrader's ``ClearHiddenTests`` (which
removes the hidden tests' code): in every test cell with hidden tests it shortens each error's
traceback, which would quote the hidden test lines, to ``AssertionError: <the check's
message>``. Errors in test cells without hidden tests keep their traceback.

``LabelTests``, run before ``HideTestCode``, heads each test cell's output with the function it
grades ("Tests of `winner`: 2 points, all or nothing"), and labels what the hidden tests said:
an error raised after the visible tests passed is the hidden tests' ("hidden tests: ..."); the
checks label their own summaries the same way.

Feedback that runs no student code in the reader's browser: ``SafeFeedback`` is nbconvert's own
``SanitizeHTML`` (bleach), run last in ``GenerateFeedback`` over every cell: HTML and Markdown
outputs are cleaned, outputs of any other type that a browser would run or render as markup
(JavaScript, SVG, widgets) are dropped, and Markdown and raw cells are cleaned, so a
submission's ``<script>``, ``onerror`` attributes and the like reach the feedback as text.
nbconvert's preprocessor leaves Markdown's ``>`` (quotes, ``v >= beta``), ``&`` and ``<``
before a space, a digit or ``=`` escaped (and ``&`` before a space or another ``&``), which would
show as ``&gt;`` in the feedback (in a code span, as ``&amp;lt;``); none of them can
open a tag, so ``SafeFeedback`` puts them back.

A student's own text never stops the feedback: nbgrader's ``ClearHiddenTests`` raises on a hidden
tests marker ("BEGIN HIDDEN TESTS") anywhere but in a test cell, and would cut a student's cell
at an "END HIDDEN TESTS" line. ``ShieldStudentText``, run just before it, sets aside the text of
every cell that is not one of the lesson's test cells (their text is the lesson's, put back by
nbgrader when it graded), and ``RestoreStudentText``, run just after it, puts that text back as
the student wrote it.

``WrapLongLines``, run after nbconvert's ``CSSHTMLHeaderPreprocessor`` in ``GenerateFeedback``,
adds one style to the feedback page: a long line of output wraps inside the page instead of
running off its right edge.
"""

from __future__ import annotations

import html
import re

from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbformat.v4 import new_output
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor
from traitlets import Bool, Unicode

from grader.cells import is_test_cell

class HideTestCode(NbGraderPreprocessor):
    """Keeps only ``ename: evalue`` of errors in test cells that hold hidden tests."""

    def preprocess_cell(self, cell, resources, cell_index):
        """Returns the cell, its tracebacks cut to the error's name and message if it has hidden tests."""
        hidden = ClearHiddenTests(config=self.config).begin_test_delimeter in cell.source
        if is_test_cell(cell) and hidden:
            for output in cell.get("outputs", []):
                if output.output_type == "error":
                    output.traceback = [f"{output.ename}: {output.evalue}"]
        return cell, resources

_CHECK = re.compile(r"_ = (check_\w+)\((\w+)")

_WHAT = {"check_alphabeta": " (correct moves)", "check_alphabeta_calls": " (pruning)"}

def graded_function(cell) -> str | None:
    """Returns the name of the function a test cell grades, as its hidden test calls it: 'winner', 'alphabeta (pruning)'."""
    found = _CHECK.search(cell.source)
    return f"{found.group(2)}{_WHAT.get(found.group(1), '')}" if found else None

class LabelTests(NbGraderPreprocessor):
    """Heads each test cell's output with the function it grades; labels the hidden tests' failure."""

    def preprocess_cell(self, cell, resources, cell_index):
        """Returns the cell with a heading output first, and an error after passing visible tests labelled as hidden."""
        name = graded_function(cell) if is_test_cell(cell) else None
        if name is None:
            return cell, resources
        points = cell.metadata.nbgrader.get("points", 0)
        heading = f"Tests of {name}: {points:g} point{'s' if points != 1 else ''}, all or nothing (every visible and hidden test must pass)"
        outputs = list(cell.get("outputs", []))
        printed = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
        for output in outputs:
            if output.get("output_type") == "error" and "passes the visible tests" in printed:
                output.evalue = f"hidden tests: {output.evalue}"
                output.traceback = [f"{output.ename}: {output.evalue}"]
        cell.outputs = [new_output("display_data", data={"text/plain": heading, "text/html": f"<b>{html.escape(heading)}</b>"})] + outputs
        return cell, resources

def name_test_links(page: str, notebook) -> str:
    """Returns a feedback page whose summary links read as the function each test cell grades.

    nbgrader's feedback template writes every test cell's link in the summary as "Test cell";
    `notebook` (the lesson's source) says which function each cell, by its grade id, grades.
    """
    for cell in notebook.cells:
        name = graded_function(cell) if is_test_cell(cell) else None
        if name is not None:
            grade_id = cell.metadata.nbgrader.grade_id
            page = page.replace(f'<a href="#{grade_id}">Test cell</a>', f'<a href="#{grade_id}">Tests of {html.escape(name)}</a>')
    return page

_SET_ASIDE = "ttt_grader_student_text"  # the cell metadata key that holds a student's text while hidden tests are cleared

class ShieldStudentText(NbGraderPreprocessor):
    """Sets aside the text of every cell that is not a test cell, so that ClearHiddenTests does not read it."""

    def preprocess_cell(self, cell, resources, cell_index):
        """Returns the cell, its text held in its metadata and left empty, unless it is a test cell."""
        if not is_test_cell(cell):
            cell.metadata[_SET_ASIDE] = cell.source
            cell.source = ""
        return cell, resources

class RestoreStudentText(NbGraderPreprocessor):
    """Puts back the text ShieldStudentText set aside."""

    def preprocess_cell(self, cell, resources, cell_index):
        """Returns the cell with its own text again."""
        if _SET_ASIDE in cell.metadata:
            cell.source = cell.metadata.pop(_SET_ASIDE)
        return cell, resources

_HARMLESS = re.compile(r"&gt;|&amp;(?=[\s&]|$)|&lt;(?=[\s=\d])")

class SafeFeedback(SanitizeHTML):
    """nbconvert's SanitizeHTML (escaping, not stripping), with Markdown's harmless ``>``,
    ``&`` and ``<`` put back; on by default (nbconvert's preprocessors are off until enabled)."""

    enabled = Bool(True, help="Whether to sanitise the feedback (on unless turned off)").tag(config=True)

    def sanitize_html_tags(self, html_str):
        """Returns the text with every tag and attribute bleach does not allow escaped."""
        cleaned = super().sanitize_html_tags(html_str)
        return _HARMLESS.sub(lambda m: {"&gt;": ">", "&amp;": "&", "&lt;": "<"}[m.group(0)], cleaned)

class WrapLongLines(NbGraderPreprocessor):
    """Feedback pages wrap long lines of output (a long message, a printed list) at the page's edge."""

    enabled = Bool(True, help="Whether the feedback wraps long lines of output").tag(config=True)
    css = Unicode("div.output_area pre { white-space: pre-wrap; overflow-wrap: anywhere; }",
                  help="The style added to the feedback page").tag(config=True)

    def preprocess(self, nb, resources):
        resources.setdefault("inlining", {}).setdefault("css", []).append(self.css)
        return nb, resources
