"""The lessons' charts on screen: JupyterLab draws ttt.charts' specifications itself, in both themes.

What the page shows is read from the DOM (Vega's SVG: one mark a bar or square, the axis and
legend text) and compared with the table each chart was given, and screenshots are kept.
"""

from __future__ import annotations

import pytest

from test_browser import (  # noqa: F401  (artifacts and browser are fixtures)
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

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "charts.ipynb"
CELLS = [
    "from ttt import charts\n"
    "ENDINGS = [{'moves': m, 'result': who, 'positions': n} for m in range(5, 10) for who, n in "
    "zip(('X wins', 'O wins', 'tie'), (m * 10, m * 5, m))]",
    "charts.bars(ENDINGS, x='moves', y='positions', group='result', x_title='moves played when the game ends')",
    "names = ['random', 'win-block', 'centre']\n"
    "grid = charts.heatmap([{'row': a, 'column': b, 'games lost': None if a == b else 10 * i + j} "
    "for i, a in enumerate(names) for j, b in enumerate(names)], x='column', y='row', value='games lost', "
    "domain=(0, 100), title='games lost')\n"
    "weakest = charts.bars([{'player': a, 'games lost': 10 * (i + 1)} for i, a in enumerate(names)], x='player', "
    "y='games lost', horizontal=True, title='who is weakest')\n"
    "charts.side_by_side(grid, weakest)",
    "charts.bars([{'depth': d, 'result': r, 'games': n} for d in (1, 2) for r, n in (('wins', 3 * d), ('losses', 4 - d))], "
    "x='depth', y='games', group='result', stacked=True, colors={'wins': 'seagreen', 'losses': 'firebrick'})",
    "charts.bars([{'position': p, 'order': o, 'nodes': n} for p in ('a', 'b') for o, n in (('best', 10), ('worst', 10_000))], "
    "x='position', y='nodes', group='order', log=True)",
]
MARKS = [15, 6 + 3, 4, 4]  # bars and squares each chart draws (the heatmap's diagonal is left blank)
TEXTS = [["moves played when the game ends", "positions", "X wins", "O wins", "tie"],
         ["games lost", "who is weakest", "win-block", "centre"], ["wins", "losses", "depth"], ["best", "worst", "nodes"]]


@pytest.fixture(scope="module", params=list(THEMES))
def charts_page(request, browser, tmp_path_factory):
    theme = request.param
    with running_lab(tmp_path_factory.mktemp(f"charts-{theme}"), theme=theme, notebooks={NOTEBOOK: CELLS}) as (url, token, root):
        with new_page(browser) as page:
            open_notebook(page, (url, token, root, theme), NOTEBOOK)
            run_all_cells(page)
            yield page, theme


def test_each_chart_draws_its_table_in_both_themes(charts_page, artifacts):
    page, theme = charts_page
    assert errors_shown(page) == []
    outputs = page.locator(".jp-CodeCell").filter(has=page.locator(".vega-embed"))
    assert outputs.count() == len(MARKS)
    for k, (marks, texts) in enumerate(zip(MARKS, TEXTS)):
        chart = outputs.nth(k).locator(".vega-embed svg").first
        chart.scroll_into_view_if_needed()
        chart.wait_for()
        drawn = chart.locator("g.mark-rect.role-mark path").count()
        assert drawn == marks, f"chart {k} ({theme}): {drawn} bars or squares on screen, not {marks}"
        words = chart.locator("text").all_text_contents()
        assert [t for t in texts if t not in words] == [], f"chart {k} ({theme}): {words}"
        box = chart.bounding_box()
        assert box["width"] > 150 and box["height"] > 100
        flat = [b for b in (p.bounding_box() for p in chart.locator("g.mark-rect.role-mark path").all()) if b["height"] < 1]
        assert flat == [], f"chart {k} ({theme}): bars drawn with no height: {flat}"
        shoot(outputs.nth(k).locator(".jp-OutputArea-output").first, artifacts / f"{theme}-chart-{k}.png")
    if theme == "dark":  # the chart's text is light on the dark page, not black on black
        fill = outputs.first.locator(".vega-embed svg text").first.evaluate("t => getComputedStyle(t).fill")
        assert fill not in ("rgb(0, 0, 0)", "#000"), fill
