"""Fixtures that read the preprocessors' fixture notebooks (see ``__init__.py``), afresh for each test."""

from __future__ import annotations

import pytest

from . import read_notebook


@pytest.fixture
def released():
    """The lesson as GenerateAssignment hands it to its last preprocessor."""
    return read_notebook("released")


@pytest.fixture
def submitted():
    """A submission with a copied test cell and a copied answer cell, as the sanitize step reads it."""
    return read_notebook("submitted-duplicate-ids")


@pytest.fixture
def executed():
    """A submission just run, hidden tests and all, with stderr output."""
    return read_notebook("executed")


@pytest.fixture
def autograded():
    """A graded submission as GenerateFeedback reads it."""
    return read_notebook("autograded")


@pytest.fixture
def hostile():
    """A graded submission whose cells show markup and scripts."""
    return read_notebook("autograded-hostile")


@pytest.fixture
def resources():
    """The resources nbgrader passes a feedback preprocessor (the unit being converted)."""
    return {"nbgrader": {"notebook": "who-won", "assignment": "who-won", "student": "ann"}}
