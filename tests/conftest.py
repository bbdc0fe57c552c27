"""Shared test set-up: tests marked ``dot``, ``sandbox`` or ``numba`` fail at once, saying why, where
Graphviz's ``dot``, a sandbox or the fast extra is missing (`make test` installs them all: a test never
passes by not running)."""

from __future__ import annotations

import shutil

import pytest


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``dot``, ``sandbox`` or ``numba`` fails at once, saying why, where that is missing."""
    if "dot" in item.keywords and shutil.which("dot") is None:
        pytest.fail("needs Graphviz's dot: `make setup` installs it (or apt-get install graphviz)", pytrace=False)
    if "sandbox" in item.keywords:
        from grader.sandbox import available

        if available() is not None:
            pytest.fail(f"no sandbox on this machine: {available()}", pytrace=False)
    if "numba" in item.keywords:
        from ttt.engine import compiled

        if not compiled.AVAILABLE:
            pytest.fail(f"the fast extra (numba) is not installed: {compiled.INSTALL_HINT}", pytrace=False)
