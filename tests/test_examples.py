"""The examples users read run as written: every ``>>>`` example in the library's docstrings
(``pytest --doctest-modules ttt``, in a pytest of its own) and in the README, with the outputs
they show."""

from __future__ import annotations

import doctest
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def test_the_library_s_docstring_examples_run():
    # A pytest of its own: --doctest-modules over tests/ would turn the test modules into
    # doctest items too, and fixtures that look up their module's tests would break.
    done = subprocess.run([sys.executable, "-m", "pytest", "--doctest-modules", "ttt", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout, done.stdout[-2000:]


def test_the_readme_s_examples_run():
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 4 and result.failed == 0
