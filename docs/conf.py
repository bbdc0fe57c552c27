"""Sphinx configuration of ttt's documentation: ``make docs`` builds it into docs/_build/html.

The pages are Markdown (MyST); the API pages are made from the docstrings of ``ttt`` and
``grader`` by autodoc; diagrams are Graphviz, drawn by the same ``dot`` the search trees use.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the package as it is in this checkout, installed or not

project = "ttt"
author = "the ttt authors"
copyright = "the ttt authors, MIT licence"
release = version = "0.1.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.graphviz",
    "sphinx.ext.viewcode",
]
root_doc = "index"
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]

# Markdown: headings get anchors so pages link to sections (`instructors.md#grading-a-class`).
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# The docstrings write `name` for a name in the code: a link where Sphinx knows it, code otherwise.
default_role = "py:obj"
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True

graphviz_output_format = "svg"

html_theme = "alabaster"
html_title = "ttt: tic-tac-toe for teaching game-playing AI"
html_theme_options = {"description": "tic-tac-toe for teaching game-playing AI", "fixed_sidebar": True}
