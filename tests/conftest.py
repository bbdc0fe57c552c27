"""Shared test set-up: tests marked ``dot`` fail at once, saying why, where Graphviz's ``dot`` is missing
(`make test` installs it: a test never passes by not running)."""

from __future__ import annotations

import shutil

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if shutil.which("dot") is None:
        for item in items:
            if "dot" in item.keywords:
                item.add_marker(pytest.mark.usefixtures("_dot_is_missing"))


@pytest.fixture
def _dot_is_missing() -> None:
    pytest.fail("needs Graphviz's dot: `make setup` installs it (or apt-get install graphviz)", pytrace=False)
