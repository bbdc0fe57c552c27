"""ForgetDuplicateIds: a copied cell that DeduplicateIds emptied becomes an ordinary cell, without nbgrader metadata."""

from __future__ import annotations

import copy

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell
from nbgrader.preprocessors import DeduplicateIds

from grader.preprocessors import ForgetDuplicateIds

from . import changed_cells, grade_id


@pytest.fixture
def preprocessors():
    """The two steps as the sanitize step of autograding runs them, in this order."""
    return DeduplicateIds(), ForgetDuplicateIds()


def _grade_ids_as_overwrite_cells_reads_them(nb) -> list[str]:
    # nbgrader 0.9.6's OverwriteCells.add_missing_task_cells, which KeyErrors on nbgrader metadata without a grade id
    return [cell["metadata"]["nbgrader"]["grade_id"] for cell in nb.cells if "nbgrader" in cell["metadata"]]


def test_deduplicate_ids_alone_leaves_metadata_that_overwrite_cells_cannot_read(preprocessors, submitted):
    """The submission's copies are emptied, not removed, by DeduplicateIds: reading their grade ids fails."""
    nb, _ = preprocessors[0].preprocess(submitted, {})
    assert [i for i, cell in enumerate(nb.cells) if cell.metadata.get("nbgrader") == {}] == [2, 4]
    with pytest.raises(KeyError, match="grade_id"):
        _grade_ids_as_overwrite_cells_reads_them(nb)


def test_after_it_every_nbgrader_cell_has_a_grade_id_and_each_id_appears_once(preprocessors, submitted, released):
    """The grade ids left are the lesson's, once each, in order: the copies are ordinary cells."""
    for step in preprocessors:
        submitted, _ = step.preprocess(submitted, {})
    assert _grade_ids_as_overwrite_cells_reads_them(submitted) == [grade_id(c) for c in released.cells if grade_id(c)]


def test_the_copies_keep_their_text_and_other_metadata(preprocessors, submitted):
    """Only the emptied nbgrader entry goes: the copy's source and other metadata stay, and no other cell changes."""
    deduplicated, _ = preprocessors[0].preprocess(copy.deepcopy(submitted), {})
    nb, _ = preprocessors[1].preprocess(copy.deepcopy(deduplicated), {})
    assert changed_cells(deduplicated, nb) == [2, 4]
    for i in (2, 4):
        assert "nbgrader" not in nb.cells[i].metadata
        assert nb.cells[i].source == submitted.cells[i].source
        assert nb.cells[i].metadata == {k: v for k, v in submitted.cells[i].metadata.items() if k != "nbgrader"} != {}


@pytest.mark.parametrize("cell, kept", [
    (new_code_cell("print('mine')"), True),
    (new_markdown_cell("my notes"), True),
    (new_markdown_cell("my notes", metadata={"nbgrader": {}}), False),
    (new_code_cell("x = 1", metadata={"nbgrader": {"schema_version": 3}}), False),
    (new_code_cell("x = 1", metadata={"nbgrader": {"grade_id": "x", "solution": True, "grade": False, "locked": False,
                                                   "schema_version": 3}}), True),
], ids=["code-without-nbgrader", "markdown-without-nbgrader", "markdown-emptied", "entry-without-grade-id", "answer"])
def test_it_removes_exactly_the_nbgrader_entries_without_a_grade_id(cell, kept):
    """A cell without nbgrader metadata, or with a grade id, is left as it is; an entry without a grade id goes."""
    out, _ = ForgetDuplicateIds().preprocess_cell(copy.deepcopy(cell), {}, 0)
    assert (out == cell) is kept
    assert "grade_id" in out.metadata.get("nbgrader", {"grade_id": None})
