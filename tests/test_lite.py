"""The lessons' browser-only site (``make lite``): built, served on 127.0.0.1 with every other host
blocked, and used in real Chromium as a student would, the lessons filled with the instructor's
solutions. Python runs in the page (Pyodide): no kernel on the machine, nothing fetched from anywhere else."""

from __future__ import annotations

import contextlib
import functools
import http.server
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Iterator

import nbformat
import pytest

from ttt.limits import still_running

from test_browser import (  # noqa: F401  (artifacts and browser are fixtures)
    VIEWPORT,
    artifacts,
    browser,
    errors_shown,
    prompts,
    run_all_cells,
    shoot,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from grading import filled  # noqa: E402  (the released lesson with the instructor's solutions: one home)

LESSONS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
ENDLESS = "endless.ipynb"
ENDLESS_CELLS = ["from ttt.tictactoe import initial_state\nfrom grader.checks import returned",
                 "def player(board):\n    while True:\n        pass\n\nreturned(player, initial_state(), seconds=2)"]


class _Files(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".mjs": "text/javascript", ".js": "text/javascript", ".json": "application/json"}

    def log_message(self, *args) -> None:
        pass


def build_site(work: Path, notebooks: dict[str, nbformat.NotebookNode]) -> Path:
    """`make lite` (its set-up and the lessons' site), then a site of `notebooks` (name -> notebook) in `work`/site."""
    made = subprocess.run(["make", "lite"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    contents = work / "contents"
    contents.mkdir()
    for name, notebook in notebooks.items():
        nbformat.write(notebook, contents / name)
    built = subprocess.run([str(ROOT / ".venv-lite" / "bin" / "python"), "lite/build.py", "--lessons", str(contents),
                            "--output", str(work / "site")], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return work / "site"


def site_notebook(cells: list[str]) -> nbformat.NotebookNode:
    """A notebook of code `cells` for the site's Python (Pyodide) kernel."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    notebook.metadata["kernelspec"] = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
    return notebook


def filled_lessons(work: Path, lessons: list[str]) -> dict[str, nbformat.NotebookNode]:
    """The released `lessons` with the instructor's solutions filled in, by notebook name."""
    from grader.course_ops import release

    release(work / "course", lessons=lessons)
    return {f"{lesson}.ipynb": filled(lesson, work / "course" / "release" / lesson / f"{lesson}.ipynb") for lesson in lessons}


@contextlib.contextmanager
def serving(folder: Path) -> Iterator[str]:
    """Serve `folder` on 127.0.0.1 (any free port) while in the block; yield its URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Files, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


@contextlib.contextmanager
def local_only_page(browser) -> Iterator:
    """Yield a page on which every request to a host other than 127.0.0.1 fails, and is noted (`page.outside`)."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(60_000)
    outside: list[str] = []

    def route(request_route) -> None:
        url = request_route.request.url
        if urllib.parse.urlsplit(url).hostname == "127.0.0.1" or url.startswith(("data:", "blob:")):
            request_route.continue_()
        else:
            outside.append(url)
            request_route.abort()

    context.route("**/*", route)
    try:
        page = context.new_page()
        page.outside = outside
        yield page
    finally:
        context.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site of the filled lessons and a notebook with an endless loop, served on 127.0.0.1; yields its URL."""
    work = tmp_path_factory.mktemp("lite")
    notebooks = {**filled_lessons(work, LESSONS), ENDLESS: site_notebook(ENDLESS_CELLS)}
    with serving(build_site(work, notebooks)) as url:
        yield url


@pytest.fixture
def page(browser, site):
    with local_only_page(browser) as page:
        yield page


def open_and_run(page, site: str, name: str, artifacts: Path) -> float:
    """Opens `name` in the site's JupyterLab, runs all its cells; returns the seconds it took."""
    started = time.monotonic()
    page.goto(f"{site}lab/index.html?path={name}")
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(timeout=120_000)
    run_all_cells(page, timeout=900_000)
    shoot(page, artifacts / f"lite-{Path(name).stem}.png")
    return time.monotonic() - started


# What a lesson shows, read from its source: each is asserted on screen in the site.
SHOWS = {"chart": "charts.", "tree": "draw_tree(", "board": "PlayableBoard(", "big board": "BigBoard(", "explorer": "SearchExplorer("}


def shows(lesson: str) -> set[str]:
    code = "\n".join(c.source for c in nbformat.read(ROOT / "notebooks" / f"{lesson}.ipynb", 4).cells if c.cell_type == "code")
    return {what for what, call in SHOWS.items() if call in code}


def test_the_lessons_show_charts_trees_and_boards():
    """The lessons between them draw a chart, a tree and a board: the site is tested on each."""
    assert {"chart", "tree", "board"} <= set().union(*map(shows, LESSONS))


def answers_a_click(page, widget: str) -> None:
    """Click the first free square of the first `widget` board; the computer replies (two more marks)."""
    board = page.locator(widget).first
    board.scroll_into_view_if_needed()
    marks = f"[...document.querySelectorAll('{widget}')][0].querySelectorAll('.ttt-square[data-mark=\"X\"], .ttt-square[data-mark=\"O\"]').length"
    before = page.evaluate(f"() => {marks}")
    board.locator(".ttt-square.ttt-legal").first.click()
    page.wait_for_function(f"() => {marks} >= {before + 2}", timeout=120_000)


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_lesson_runs_top_to_bottom_in_the_browser_with_nothing_from_another_host(page, site, lesson, artifacts):
    seconds = open_and_run(page, site, f"{lesson}.ipynb", artifacts)
    code = [c for c in nbformat.read(ROOT / "notebooks" / f"{lesson}.ipynb", 4).cells if c.cell_type == "code"]
    shown = prompts(page)
    assert len(shown) == len(code) and all(p.strip() != "[ ]:" and "*" not in p for p in shown), shown
    assert errors_shown(page) == [], errors_shown(page)
    text = "\n".join(page.locator(".jp-OutputArea-output").all_text_contents())
    assert "passes the visible tests" in text, text[-2000:]
    assert "hidden tests are run by the grader, which cannot run inside a web page" in text  # the last cell says what to do instead of a check
    words = page.locator(".jp-MarkdownCell").all_text_contents()
    assert any("In this site the visible tests" in w for w in words) and not any("Validate" in w for w in words)
    assert "In this site" in words[0] and "Kernel → Restart Kernel" in words[0], words[0]  # the site's own first note
    views = shows(lesson)
    if "chart" in views:  # drawn by the page
        chart = page.locator(".vega-embed").first
        chart.locator("svg g.role-mark").first.wait_for(timeout=60_000)
        chart.scroll_into_view_if_needed()
        shoot(chart, artifacts / f"lite-{lesson}-chart.png")
    if "tree" in views:  # drawn by the page's WebAssembly Graphviz, as dot would
        page.locator(".ttt-dot-picture svg.ttt-tree-picture g.node").first.wait_for(timeout=120_000)
        assert page.locator(".ttt-dot-picture .ttt-status[data-kind='error']").count() == 0
        tree = page.locator(".ttt-dot-picture").first
        tree.scroll_into_view_if_needed()
        shoot(tree, artifacts / f"lite-{lesson}-tree.png")
    if "explorer" in views:
        explorer = page.locator(".ttt-explorer").first
        explorer.scroll_into_view_if_needed()
        explorer.locator(".ttt-step").click()  # a step is taken in the page: the root is reached
        explorer.locator(".ttt-node").first.wait_for(timeout=60_000)
    if "board" in views:
        answers_a_click(page, ".ttt-playable")
    if "big board" in views:
        answers_a_click(page, ".ttt-bigboard")
    shoot(page, artifacts / f"lite-{lesson}-done.png")
    assert page.outside == [], page.outside
    print(f"{lesson}: {seconds:.0f} s to open and run in the browser; shows {sorted(views)}")


def test_an_endless_loop_in_a_students_function_is_stopped_with_the_lessons_message(page, site, artifacts):
    open_and_run(page, site, ENDLESS, artifacts)
    text = "\n".join(page.locator(".jp-OutputArea-output").all_text_contents())
    assert f"player(board): {still_running(2)}: does every loop" in text, text[-2000:]
    assert page.outside == [], page.outside


def test_the_sites_benchmark_prints_the_site_beside_cpython():
    """``benchmarks/lite.py`` runs to the end (here, not in test_benchmarks.py: one site build at a time)."""
    import re

    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "lite.py")], cwd=ROOT, capture_output=True, text=True,
                          timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr[-5000:]
    out = done.stdout
    assert "Chromium is not installed" not in out, out
    number = r"[\d,]+\.\d+"
    assert re.search(rf"the site: {number} MB in [\d,]+ files", out), out
    for row in ["a notebook's first result", "lesson 01, filled", "count to 5,000,000, bare", "count to 5,000,000, under cpu_limit",
                "fib\\(30\\), bare", "fib\\(30\\), under cpu_limit"]:
        assert re.search(rf"{row}.*\s{number}\s+{number}\s+{number}x\n", out), (row, out)
    assert len(re.findall(rf"cpu_limit's cost: {number}x in the page, {number}x on CPython", out)) == 2, out
    print(out)
