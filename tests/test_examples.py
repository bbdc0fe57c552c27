"""The examples users read run as written: every ``>>>`` example in the library's docstrings and
in the README, with the outputs they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import ttt

README = Path(__file__).resolve().parent.parent / "README.md"
MODULES = sorted(m.name for m in pkgutil.walk_packages(ttt.__path__, "ttt.") if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_the_library_s_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (printed above)"


def test_the_readme_s_examples_run():
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 4 and result.failed == 0

