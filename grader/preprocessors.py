"""The nbgrader preprocessors that ``ttt-grader`` adds to nbgrader's pipelines.

``StderrAsStdout`` runs right after execution when autograding: nbgrader scores a test cell
that wrote anything to stderr as failed, so a correct function that calls ``warnings.warn``
(or a library that logs) would lose its marks; this one turns stderr output into ordinary
output, so only an error fails a cell.

``ForgetDuplicateIds`` runs right after nbgrader's ``DeduplicateIds`` when autograding: that
preprocessor empties the nbgrader metadata of a copied cell, which ``OverwriteCells`` (with
``add_missing_cells``) then fails on (KeyError 'grade_id', nbgrader 0.9.6); this one removes
the emptied metadata, so the copy is graded as the ordinary cell it now is.

``MarkSelfCheck``, run last in ``GenerateAssignment``, writes the course's self-check switch into
each released lesson's metadata (``ttt.self_check``: False when the course's
``SelfCheck.enabled`` is False, ``grader.selfcheck``), so the students' copies carry it.

``Recheck``, run in the autograde pipeline just before nbgrader's ``SaveAutoGrades``, runs each
test cell again apart from the notebook (``grader.recheck``) and writes its verdict into the cell's
outputs, so nbgrader scores the cell once, on the verdict.

The feedback's own steps are in ``grader.feedback``.
"""

from __future__ import annotations

from pathlib import Path

from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Float, Integer, Unicode

from ttt.limits import over_limit

from grader.cells import is_test_cell
from grader.course import enabled_in
from grader.execute import STALL_SECONDS


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
