"""Search trees where Graphviz's dot cannot run, on screen: the page draws them with WebAssembly Graphviz.

The kernel runs with no dot on its PATH (as on a laptop without Graphviz, or Python in the
browser). Each tree, a student's own minimax recorded through its calls, an alpha-beta search
with cut-offs and a Monte Carlo tree search, is drawn by the page; what is on screen (the SVG's
nodes, edges and their text) is compared with what dot itself draws from the same DOT text, in
both themes, and screenshots are kept.
"""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET

import pytest

from test_browser import (  # noqa: F401  (artifacts and browser are fixtures)
    STUDENT_CODE,
    THEMES,
    artifacts,
    browser,
    errors_shown,
    new_page,
    open_notebook,
    run_all_cells,
    running_lab,
    shoot,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.dot]

NOTEBOOK = "trees.ipynb"
TREES = 3
CELLS = [
    "import os\nos.environ['PATH'] = ''  # no Graphviz here: no dot on the PATH\n"
    "from ttt.draw import draw_tree\nfrom ttt.games.classic import TicTacToe, parse_board\n"
    "from ttt.trace import record, record_calls\n"
    "def keep(k, tree):\n    open(f'tree-{k}.dot', 'w').write(tree.source)\n    return tree",
    STUDENT_CODE,
    "with record_calls(globals()) as recording:\n    minimax([['X', 'O', 'X'], ['O', 'X', None], [None, None, 'O']])\n"
    "keep(0, draw_tree(recording.trace()))",
    'keep(1, draw_tree(record(TicTacToe(), parse_board("XO./.X./..."), algorithm="alphabeta"), max_nodes=60))',
    'keep(2, draw_tree(record(TicTacToe(), parse_board("XO./.X./..."), algorithm="mcts", iterations=40, seed=3), max_nodes=40))',
]
SVG = "{http://www.w3.org/2000/svg}"


def drawn_by_dot(dot_text: str) -> dict:
    """Return {element id: (class, [its texts])} of the SVG that dot draws from `dot_text`."""
    svg = subprocess.run(["dot", "-Tsvg"], input=dot_text, capture_output=True, text=True, check=True).stdout
    root = ET.fromstring(svg[svg.index("<svg"):])
    return {g.get("id"): (g.get("class"), [t.text or "" for t in g.iter(f"{SVG}text")])
            for g in root.iter(f"{SVG}g") if {"node", "edge"} & set((g.get("class") or "").split())}


ON_SCREEN = """svg => Object.fromEntries([...svg.querySelectorAll('g.node, g.edge')].map(
    g => [g.id, [g.getAttribute('class'), [...g.querySelectorAll('text')].map(t => t.textContent)]]))"""


@pytest.fixture(scope="module", params=list(THEMES))
def trees_page(request, browser, tmp_path_factory):
    theme = request.param
    with running_lab(tmp_path_factory.mktemp(f"trees-{theme}"), theme=theme, notebooks={NOTEBOOK: CELLS}) as (url, token, root):
        with new_page(browser) as page:
            open_notebook(page, (url, token, root, theme), NOTEBOOK)
            run_all_cells(page)
            yield page, theme, root


def test_each_tree_is_drawn_by_the_page_as_dot_draws_it(trees_page, artifacts):
    page, theme, root = trees_page
    pictures = page.locator(".ttt-dot-picture")
    pictures.nth(TREES - 1).wait_for(timeout=60_000)
    assert pictures.count() == TREES
    drawn = []
    for k in range(TREES):
        picture = pictures.nth(k)
        picture.scroll_into_view_if_needed()
        svg = picture.locator("svg.ttt-tree-picture")
        svg.wait_for(timeout=60_000)
        drawn.append(drawn_by_dot((root / f"tree-{k}.dot").read_text()))
        shown = {i: (c, texts) for i, (c, texts) in svg.evaluate(ON_SCREEN).items()}  # JSON's lists as dot's tuples
        assert shown == drawn[k], f"tree {k} ({theme})"
        assert picture.locator(".ttt-status").text_content() == ""
        box = svg.bounding_box()
        column = picture.evaluate("e => e.closest('.jp-OutputArea-output').getBoundingClientRect().width")
        assert 100 < box["width"] <= column + 1, f"tree {k} ({theme}) is {box['width']} wide in a {column} column"
        shoot(picture, artifacts / f"{theme}-tree-without-dot-{k}.png")
    assert any(re.match(r"pruned\d", i) for i in drawn[1]), "the alpha-beta tree shows its cut-offs"
    assert errors_shown(page) == []
