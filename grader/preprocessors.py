"""The nbgrader preprocessors that ``ttt-grader`` adds to nbgrader's pipelines.

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

``MarkSelfCheck``, run last in ``GenerateAssignment``, writes the course's self-check switch into
each released lesson's metadata (``ttt.self_check``: False when the course's
``SelfCheck.enabled`` is False, ``grader.selfcheck``), so the students' copies carry it.

``Recheck``, run in the autograde pipeline just before nbgrader's ``SaveAutoGrades``, runs each
test cell again apart from the notebook (``grader.recheck``) and writes its verdict into the cell's
outputs, so nbgrader scores the cell once, on the verdict.

``WrapLongLines``, run after nbconvert's ``CSSHTMLHeaderPreprocessor`` in ``GenerateFeedback``,
adds one style to the feedback page: a long line of output wraps inside the page instead of
running off its right edge.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbformat.v4 import new_output
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor
from traitlets import Bool, Float, Integer, Unicode

from ttt.limits import over_limit

from grader.cells import is_test_cell
from grader.course import enabled_in
from grader.execute import STALL_SECONDS


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


class ForgetDuplicateIds(NbGraderPreprocessor):
    """Removes the empty nbgrader metadata that DeduplicateIds leaves on copied cells."""

    def preprocess_cell(self, cell, resources, cell_index):
        """Returns the cell, without an nbgrader metadata entry that has no grade id."""
        if "nbgrader" in cell.metadata and "grade_id" not in cell.metadata["nbgrader"]:
            del cell.metadata["nbgrader"]
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


class StderrAsStdout(NbGraderPreprocessor):
    """Turns each code cell's stderr output into stdout output (only errors fail a test cell)."""

    def preprocess_cell(self, cell, resources, cell_index):
        """Returns the cell, its stderr streams renamed stdout."""
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.output_type == "stream" and output.name == "stderr":
                output.name = "stdout"
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


class MarkSelfCheck(NbGraderPreprocessor):
    """A lesson released from a course whose ``SelfCheck.enabled`` is False says so in its metadata."""

    def preprocess(self, nb, resources):
        own = nb.metadata.setdefault("ttt", {})
        own.pop("self_check", None)
        if not enabled_in(self.config):
            own["self_check"] = False
        if not own:
            del nb.metadata["ttt"]
        return nb, resources


RECHECK_REPORT = "ttt_grader_recheck"  # the notebook metadata key the re-check leaves its report under


class Recheck(NbGraderPreprocessor):
    """The re-check as a step of nbgrader's autograde pipeline, after the notebook has run and
    before ``SaveAutoGrades`` scores it: each test cell's verdict is written into its outputs (a
    failed verdict as an error output, so nbgrader scores the cell zero), and nbgrader scores once.

    The re-check can only take marks away: a cell that failed in the kernel (a notebook stopped
    at its limit, say) keeps its outputs, and so its zero, whatever the definitions alone would
    earn. What it finds for the instructor (suspicious code, a test cell out of CPU time, a sandbox
    that could not start, a failure of the grader's own) is left in the notebook's metadata under
    ``RECHECK_REPORT``, which ``grader.worker`` reads and removes."""

    lessons = Unicode("", help="The folder of the lessons as the grader holds them (LESSON/NOTEBOOK.ipynb): "
                      "the test cells and the lesson's own cells come from there. Empty: no re-check.").tag(config=True)
    timeout = Float(120.0, help="CPU seconds each test cell may use, spent by the submission's functions.").tag(config=True)
    memory_mb = Integer(0, help="Memory cap of the submission's student server (MB); 0: the sandbox's default.").tag(config=True)
    sandboxed = Bool(True, help="Start the submission's student server in a sandbox (grader.sandbox).").tag(config=True)
    stall_timeout = Float(float(STALL_SECONDS), help="Wall seconds the submission's functions may choose to wait "
                          "(sleep, or wait for what never comes), in all: the re-check's share of --stall-timeout.").tag(config=True)

    def preprocess(self, nb, resources):
        """Re-checks the notebook's test cells; returns (nb, resources)."""
        ids = resources.get("nbgrader", {})
        lesson = Path(self.lessons) / ids.get("assignment", "") / f"{ids.get('notebook', '')}.ipynb"
        cells = [c for c in nb.cells if is_test_cell(c)]
        if not self.lessons or not cells or not lesson.is_file():
            return nb, resources
        from grader.recheck import NO_VERDICT, code_cells, judge, plain_cells, student_launcher
        from grader.remote import SandboxNotStarted

        report = {"problems": [], "suspicious": [], "unserved": "", "failed": ""}
        launcher = student_launcher(memory_mb=self.memory_mb or None) if self.sandboxed else None
        try:
            verdicts, notes = judge(plain_cells(nb.cells), code_cells(lesson), timeout=self.timeout,
                                    stall_seconds=self.stall_timeout,
                                    launcher=launcher, folder=Path(resources["metadata"]["path"]))
        except (SandboxNotStarted, OSError) as error:  # the machine's trouble: graded again, never failed
            report["unserved"] = f"the sandbox could not start: {error}"
        except BaseException as error:  # noqa: BLE001  (the grader's own trouble: the unit fails, as plain text)
            if isinstance(error, (KeyboardInterrupt, SystemExit)) and not hasattr(error, "remote_type"):
                raise
            report["failed"] = f"{type(error).__name__}: {str(error)[:300]}"
        else:
            report["suspicious"] = notes
            for cell in cells:
                self._judged(cell, verdicts.get(cell.metadata["nbgrader"]["grade_id"], NO_VERDICT), report)
        nb.metadata[RECHECK_REPORT] = report
        return nb, resources

    def _judged(self, cell, verdict, report: dict) -> None:
        """Writes a test cell's verdict (``grader.recheck.Verdict``) into its outputs, and what it
        means into the report."""
        from grader.execute import waited_note
        from grader.recheck import OUT_OF_TIME
        from grader.remote import STALLED_WORDS

        grade_id = cell.metadata["nbgrader"]["grade_id"]
        kernel_passed = not any(o.output_type == "error" for o in cell.outputs)
        if kernel_passed and (verdict.output or verdict.ename):
            _replace_outputs(cell, verdict)
        if verdict.ename == OUT_OF_TIME:
            waited = verdict.evalue.splitlines()[0] if STALLED_WORDS in verdict.evalue else ""  # RemoteStalled's
            report["problems"].append(f"test cell {grade_id}" + (f": {waited[:300]}" if waited else
                                      " timed out: " + over_limit("it", self.timeout)))
            if waited:
                report["suspicious"].append(waited_note(f"test cell {grade_id}, re-checked apart,"))
        # the hidden checks run here only (the kernel never sees them): their failure is no sign of cheating
        if not verdict.passed and kernel_passed and not verdict.hidden and verdict.ename != OUT_OF_TIME:
            report["suspicious"].append(f"cell {grade_id} passed in the notebook but fails when re-checked apart: {verdict.message}")
            _note(cell, verdict.message)


def _replace_outputs(cell, verdict) -> None:
    """Gives a test cell the kernel passed the re-check's output: what the checks left to it found."""
    from grader.execute import error_output

    cell.outputs = [new_output("stream", name="stdout", text=verdict.output)] if verdict.output else []
    if not verdict.passed and verdict.ename:
        cell.outputs.append(error_output(verdict.ename, verdict.evalue))


def _note(cell, message: str) -> None:
    """Adds the re-check's message to a test cell's outputs, so the feedback says why it scored zero."""
    cell.outputs.append(new_output("stream", name="stderr", text=(
        f"Re-checked apart from the rest of the notebook, this test fails, so it scores zero:\n{message}\n")))
