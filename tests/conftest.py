"""Shared test set-up: tests marked ``dot`` fail at once, saying why, where Graphviz's ``dot`` is missing
(`make test` installs it: a test never passes by not running)."""

from __future__ import annotations

import shutil

import pytest


def pytest_runtest_setup(item: pytest.Item) -> None:
    if "dot" in item.keywords and shutil.which("dot") is None:
        pytest.fail("needs Graphviz's dot: `make setup` installs it (or apt-get install graphviz)", pytrace=False)
