"""The lessons' browser-only site (``make lite``): built, served on 127.0.0.1 with every other host
blocked, and used in real Chromium as a student would, the lessons filled with the instructor's
solutions. Python runs in the page (Pyodide): no kernel on the machine, nothing fetched from anywhere else."""

from __future__ import annotations

import functools
import http.server
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

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

LESSONS = ["01-boards-and-moves", "02-who-won"]
ENDLESS = "endless.ipynb"
ENDLESS_CELLS = ["from ttt.tictactoe import initial_state\nfrom grader.checks import returned",
                 "def player(board):\n    while True:\n        pass\n\nreturned(player, initial_state(), seconds=2)"]


class _Files(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".mjs": "text/javascript", ".js": "text/javascript", ".json": "application/json"}

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """`make lite` (its set-up and the site), then a site of the filled lessons, served on 127.0.0.1; yields its URL."""
    made = subprocess.run(["make", "lite"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    work = tmp_path_factory.mktemp("lite")
    lessons = work / "lessons"
    lessons.mkdir()
    from grader.course_ops import release

    release(work / "course", lessons=LESSONS)
    for lesson in LESSONS:
        nbformat.write(filled(lesson, work / "course" / "release" / lesson / f"{lesson}.ipynb"), lessons / f"{lesson}.ipynb")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in ENDLESS_CELLS])
    notebook.metadata["kernelspec"] = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
    nbformat.write(notebook, lessons / ENDLESS)
    built = subprocess.run([str(ROOT / ".venv-lite" / "bin" / "python"), "lite/build.py", "--lessons", str(lessons),
                            "--output", str(work / "site")], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Files, directory=str(work / "site")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


@pytest.fixture
def page(browser, site):
    """A page on which every request to a host other than 127.0.0.1 fails, and is noted (`page.outside`)."""
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


def open_and_run(page, site: str, name: str, artifacts: Path) -> float:
    """Opens `name` in the site's JupyterLab, runs all its cells; returns the seconds it took."""
    started = time.monotonic()
    page.goto(f"{site}lab/index.html?path={name}")
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(timeout=120_000)
    run_all_cells(page, timeout=900_000)
    shoot(page, artifacts / f"lite-{Path(name).stem}.png")
    return time.monotonic() - started


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_lesson_runs_top_to_bottom_in_the_browser_with_nothing_from_another_host(page, site, lesson, artifacts):
    seconds = open_and_run(page, site, f"{lesson}.ipynb", artifacts)
    code = [c for c in nbformat.read(ROOT / "notebooks" / f"{lesson}.ipynb", 4).cells if c.cell_type == "code"]
    shown = prompts(page)
    assert len(shown) == len(code) and all(p.strip() != "[ ]:" and "*" not in p for p in shown), shown
    assert errors_shown(page) == [], errors_shown(page)
    text = "\n".join(page.locator(".jp-OutputArea-output").all_inner_texts())
    assert "passes the visible tests" in text, text[-2000:]
    assert "hidden tests needs the grader" in text  # the last cell says what to do instead of a check
    if lesson == "02-who-won":  # its chart, drawn by the page
        assert page.locator(".vega-embed svg g.mark-rect.role-mark path").count() == 15
    else:  # its board answers a click: the computer (O) replies
        board = page.locator(".ttt-playable").first
        board.scroll_into_view_if_needed()
        board.locator(".ttt-square").nth(4).click()
        page.wait_for_function("() => [...document.querySelectorAll('.ttt-playable .ttt-square')].filter(s => /O/.test(s.textContent)).length >= 1",
                               timeout=60_000)
    assert page.outside == [], page.outside
    print(f"{lesson}: {seconds:.0f} s to open and run in the browser")


def test_an_endless_loop_in_a_students_function_is_stopped_with_the_lessons_message(page, site, artifacts):
    open_and_run(page, site, ENDLESS, artifacts)
    text = "\n".join(page.locator(".jp-OutputArea-output").all_inner_texts())
    assert f"player(board): {still_running(2)}: does every loop" in text, text[-2000:]
    assert page.outside == [], page.outside
