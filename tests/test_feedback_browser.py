"""Feedback a TA or a student opens in a browser runs none of the submission's code.

A submission of the tiny course carries four kinds of payload: a ``display(HTML('<script>'))``,
an ``<img onerror>`` in HTML, HTML inside a Markdown output, and raw HTML in a Markdown cell
(plus JavaScript and SVG outputs). Each payload would set a global, change the page's title and
make a request to a listener on the loopback interface. The feedback ``ttt-grader feedback``
writes is opened in Debian's Chromium (Playwright, ``--no-sandbox``): nothing ran, no request
came, and the feedback still reads (the lesson, the payloads as text, the score; a long line
of output wraps inside the page). The same
notebook converted by plain nbconvert, unsanitised, runs every payload: the test can fail.
"""

from __future__ import annotations

import http.server
import shutil
import sys
import threading
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import grading_course as gc  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]


def _payload(kind: str, port: int) -> str:
    """JavaScript that leaves three marks: a global, the title, a request to the listener."""
    return f"window.pwned=(window.pwned||[]).concat('{kind}');document.title='PWNED {kind}';" \
           f"fetch('http://127.0.0.1:{port}/{kind}').catch(function(){{}});"


def _attr(js: str) -> str:
    return js.replace("'", "&#39;")


def hostile_notebook(course: Path, port: int) -> nbformat.NotebookNode:
    nb = gc.solved(course)
    script = _payload("script", port)
    onerror = _attr(_payload("onerror", port))
    markdown = _attr(_payload("markdown-output", port))
    raw = _attr(_payload("raw-html", port))
    svg = _payload("svg", port)
    # The payloads' code cell goes first: ttt-grader runs no cell after the last test cell.
    nb.cells[:0] = [
        nbformat.v4.new_code_cell(
            "from IPython.display import HTML, Markdown, Javascript, SVG, display\n"
            f"display(HTML(\"<b>visible-html-output</b><script>{script}</script>\"))\n"
            f"display(HTML(\"<img src='nowhere.png' onerror='{onerror}'>\"))\n"
            f"display(Markdown(\"**visible-markdown-output** <img src='nowhere.png' onerror='{markdown}'>\"))\n"
            f"display(Javascript(\"{_payload('javascript', port)}\"))\n"
            f"display(SVG(\"<svg xmlns='http://www.w3.org/2000/svg'><script>{svg}</script></svg>\"))\n"
            "print('a-long-line ' * 150 + 'z' * 600)  # wraps inside the page\n"),
    ]
    nb.cells += [
        nbformat.v4.new_markdown_cell(
            f"visible-markdown-cell, with `v >= beta` and a < b\n\n<script>{_payload('raw-script', port)}</script>\n\n"
            f"<img src=\"nowhere.png\" onerror='{raw}'>\n\n<iframe srcdoc=\"<script>parent.pwned=(parent.pwned||[]).concat('iframe')</script>\"></iframe>"),
    ]
    return nb


class _Listener(http.server.BaseHTTPRequestHandler):
    hits: list = []

    def do_GET(self):  # noqa: N802 (the standard library's name)
        self.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def listener():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Listener)
    _Listener.hits = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], _Listener.hits
    server.shutdown()


def _open(path: Path) -> dict:
    """Opens a file in Chromium; returns the marks the payloads would leave and the page's text."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            dialogs = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(path.as_uri(), wait_until="domcontentloaded")
            page.wait_for_timeout(2500)  # let images fail (onerror) and fetches go out
            return {"pwned": page.evaluate("window.pwned || null"), "title": page.title(),
                    "text": page.inner_text("body"), "dialogs": dialogs,
                    "cut": page.evaluate("Array.from(document.querySelectorAll('div.output_area pre'))"
                                         ".filter(e => e.scrollWidth > e.clientWidth + 1).length")}
        finally:
            browser.close()


def test_feedback_runs_no_payload_and_still_reads(tmp_path, listener):
    assert CHROMIUM is not None, "needs Debian's chromium (apt-get install chromium; `make test` does it as root)"
    from nbconvert import HTMLExporter

    from grader.autograde import autograde
    from grader.course_ops import feedback

    port, hits = listener
    course = gc.make_course(tmp_path / "course", timeout=20)
    gc.submit(course, "mallory", hostile_notebook(course, port))
    [outcome] = autograde(course, jobs=1, progress=False)
    assert outcome.score == 3, outcome
    [html] = feedback(course)

    # the payloads are live: the autograded notebook, converted without a sanitiser, runs them
    graded = course / "autograded" / "mallory" / gc.LESSON / f"{gc.LESSON}.ipynb"
    unsafe = tmp_path / "unsanitised.html"
    unsafe.write_text(HTMLExporter().from_notebook_node(nbformat.read(graded, as_version=4))[0])
    seen = _open(unsafe)
    assert {"script", "onerror", "markdown-output", "raw-script", "raw-html"} <= set(seen["pwned"] or []), seen["pwned"]
    assert seen["title"].startswith("PWNED")
    assert {"/script", "/onerror", "/raw-html"} <= set(hits)

    hits.clear()
    seen = _open(html)
    assert seen["pwned"] is None and not seen["title"].startswith("PWNED") and not seen["dialogs"]
    assert hits == []
    assert seen["cut"] == 0, f"{seen['cut']} outputs run past their box (a scroll bar hides the rest of the line)"
    text = seen["text"]
    for visible in ("Tiny lesson", "visible-html-output", "visible-markdown-output", "visible-markdown-cell",
                    "v >= beta", "a < b", "<script>", "onerror=", "3.0 / 3.0"):
        assert visible in text, visible
