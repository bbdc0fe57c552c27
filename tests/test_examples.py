"""The examples users read run as written: every ``>>>`` example in the library's docstrings
(``pytest --doctest-modules ttt``, in a pytest of its own), in the README, in every page of the
docs and in the benchmarks' README, with the outputs they show. A ``python`` block in those
pages holds ``>>>`` examples only, so that none is left untested."""

from __future__ import annotations

import doctest
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, ROOT / "benchmarks" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PAGES = [page for page in PAGES if "_build" not in page.parts]
PYTHON_BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def test_the_library_s_docstring_examples_run():
    # A pytest of its own: --doctest-modules over tests/ would turn the test modules into
    # doctest items too, and fixtures that look up their module's tests would break.
    done = subprocess.run([sys.executable, "-m", "pytest", "--doctest-modules", "ttt", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout, done.stdout[-2000:]


def python_blocks(page: Path) -> list[str]:
    return PYTHON_BLOCK.findall(page.read_text())


def test_the_pages_are_found():
    names = {page.relative_to(ROOT).as_posix() for page in PAGES}
    assert {"README.md", "docs/index.md", "docs/instructors.md", "benchmarks/README.md"} <= names
    assert len(python_blocks(README)) >= 1


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_python_block_is_a_doctest(page):
    for block in python_blocks(page):
        lines = [line for line in block.splitlines() if line.strip()]
        assert lines and lines[0].startswith(">>> "), (
            f"{page.name}: a python block that is not a doctest (write it as >>> examples with their "
            f"outputs, or mark it bash or text if it is not Python):\n{block}")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_the_page_s_examples_run(page):
    result = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False,
                              report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {page.name} failed (printed above)"
    if python_blocks(page):
        assert result.attempted >= len(python_blocks(page))
    if page == README:
        assert result.attempted >= 4
