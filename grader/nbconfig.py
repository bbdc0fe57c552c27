"""The course's nbgrader configuration, with the grading settings ``ttt-grader`` relies on.

Precedence, lowest first: the defaults here, the course's ``nbgrader_config.py``, then the
command line. Everything goes through nbgrader's own config system, so ``Execute.timeout`` or
``LimitOutput.max_lines`` set in ``nbgrader_config.py`` apply to ``ttt-grader`` as well.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from traitlets.config import Config

from grader.course import course_config

def _tools_on_path() -> None:
    """Puts this Python's scripts folder on PATH: nbgrader runs ``alembic`` from there when it
    creates a gradebook, and a virtualenv's tools are not on PATH unless it is activated."""
    scripts = os.path.dirname(sys.executable)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([scripts, os.environ.get("PATH", "")])


@dataclass(frozen=True)
class Settings:
    """What the instructor chose for one grading run, on the command line or as arguments; each
    None keeps the course's own setting (``nbgrader_config.py``). One value, handed from the run
    to every worker, local or on a cluster.

    - ``timeout``: CPU seconds a cell may use, in the notebook's kernel and in the re-check alike
      (``Execute.timeout``);
    - ``notebook_timeout``: CPU seconds a whole notebook's cells may use (``SafeExecute.notebook_timeout``);
    - ``stall_timeout``: wall seconds a notebook's cells may spend waiting without computing
      (sleeping, or waiting for what never comes), in all (``SafeExecute.stall_timeout``): the
      only limit the clock sets;
    - ``memory_mb``: the memory cap of each kernel and student server (``SafeExecute.memory_mb``);
    - ``sandbox``: student code runs in the sandbox (False only at the instructor's explicit word)."""

    timeout: int | None = None
    notebook_timeout: int | None = None
    stall_timeout: int | None = None
    memory_mb: int | None = None
    sandbox: bool = True


def grading_config(course: Path, settings: Settings = Settings(), **chosen) -> Config:
    """Returns the nbgrader Config to grade ``course`` with: safe execution, restored test
    cells, hidden tests and their tracebacks left out of feedback, feedback HTML sanitised;
    ``settings`` (or the same fields as keywords, ``timeout=9``) over the course's own."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearHiddenTests, ClearOutput,
                                        DeduplicateIds, GetGrades, IgnorePattern, LimitOutput,
                                        OverwriteCells, OverwriteKernelspec, SaveAutoGrades)

    from grader.execute import SafeExecute
    from grader.feedback import HideTestCode, LabelTests, RestoreStudentText, SafeFeedback, ShieldStudentText, WrapLongLines
    from grader.preprocessors import ForgetDuplicateIds, Recheck, StderrAsStdout

    _tools_on_path()
    course = Path(course).resolve()
    config = Config()
    config.Autograde.sanitize_preprocessors = [
        ClearOutput, DeduplicateIds, ForgetDuplicateIds, OverwriteKernelspec, OverwriteCells, CheckCellMetadata]
    config.Autograde.autograde_preprocessors = [
        SafeExecute, StderrAsStdout, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, Recheck, SaveAutoGrades,
        AssignLatePenalties, CheckCellMetadata]
    config.OverwriteCells.add_missing_cells = True
    from nbgrader.converters import GenerateAssignment

    from grader.preprocessors import MarkSelfCheck

    # the released lessons carry the course's self-check switch (SelfCheck.enabled) to the students
    config.GenerateAssignment.preprocessors = [*GenerateAssignment.class_traits()["preprocessors"].default(), MarkSelfCheck]
    config.GenerateFeedback.preprocessors = [GetGrades, LabelTests, HideTestCode, ShieldStudentText, ClearHiddenTests,
                                             RestoreStudentText, SafeFeedback, CSSHTMLHeaderPreprocessor, WrapLongLines]
    config.merge(course_config(course))
    settings = replace(settings, **chosen)
    if settings.timeout is not None:
        config.Execute.timeout = int(settings.timeout)
    for name in ("memory_mb", "notebook_timeout", "stall_timeout"):
        if getattr(settings, name) is not None:
            setattr(config.SafeExecute, name, int(getattr(settings, name)))
    config.CourseDirectory.root = str(course)
    return config
