"""Shared test set-up: tests marked ``dot`` skip, saying why, where Graphviz's ``dot`` is missing."""

from __future__ import annotations

import shutil

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if shutil.which("dot") is None:
        missing = pytest.mark.skip(reason="needs Graphviz's dot: `make setup` installs it (or apt-get install graphviz)")
        for item in items:
            if "dot" in item.keywords:
                item.add_marker(missing)
