"""The docs site builds, with every warning an error, as ``make docs`` builds it; its API pages
hold the docstrings of every module of ``ttt`` and ``grader``. (The pages' examples run in
tests/test_examples.py, with the README's.)"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def modules(package: str) -> list[str]:
    names = []
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__main__" or "student_lab" in parts:  # the students' Jupyter settings, not a module
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def documented() -> set[str]:
    found = set()
    for page in (DOCS / "api").glob("*.md"):
        found |= set(re.findall(r"^\.\. automodule:: (\S+)$", page.read_text(), re.MULTILINE))
    return found


def test_every_module_has_its_api_page():
    missing = sorted(set(modules("ttt") + modules("grader")) - documented())
    assert not missing, f"add these modules to a page in docs/api/ (an automodule directive each): {missing}"


def test_make_docs_builds_as_the_test_does():
    makefile = (ROOT / "Makefile").read_text()
    assert "sphinx-build -b html -W --keep-going docs docs/_build/html" in makefile
    assert "docs/_build" in (ROOT / ".gitignore").read_text()


@pytest.mark.slow
@pytest.mark.dot
def test_the_docs_build_without_a_warning(tmp_path):
    out = tmp_path / "html"
    done = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q",
                           "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    assert not done.stderr.strip(), done.stderr[-5000:]
    for page in ["index", "getting-started", "library", "players", "pictures-and-widgets", "instructors",
                 "grading-pipeline", "development", "benchmarks", "api/index"]:
        assert (out / f"{page}.html").exists(), page
    # autodoc rendered the docstrings as objects (not as text): a function and a class each
    search = (out / "api" / "ttt-search.html").read_text()
    assert 'id="ttt.search.alphabeta"' in search and 'id="ttt.search.SearchResult"' in search
    assert 'id="grader.autograde.autograde"' in (out / "api" / "grader-grading.html").read_text()
    # the grading pipeline is drawn (the diagram's nodes name the preprocessors in order)
    pipeline = (out / "grading-pipeline.html").read_text()
    pictures = [out / "_images" / name for name in re.findall(r'_images/(graphviz-[0-9a-f]+\.svg)', pipeline)]
    assert pictures and all(picture.exists() for picture in pictures)
    svg = pictures[0].read_text()
    assert svg.index("SafeExecute") < svg.index("SaveAutoGrades") and "grader.recheck" in svg
    shutil.rmtree(tmp_path / "doctrees", ignore_errors=True)
