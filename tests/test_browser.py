"""A student's JupyterLab, tested in a real browser: the minimax lesson and the widgets.

The fixtures start JupyterLab on a free loopback port (token, no browser, no news or update
checks, a temporary root directory holding copies of the notebooks) and drive Debian's Chromium
through Playwright; nothing is downloaded. The tests run the minimax lesson top to bottom (Run >
Run All Cells), play a game on the lesson's `ttt.widgets.PlayableBoard` (against the lesson's
own minimax) and, in a small notebook of their own, step through `ttt.widgets.SearchExplorer`
until alpha-beta prunes a branch. Screenshots go to ``tests/artifacts/browser/`` (its path is
printed) so that a person can look at what a student sees.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

import nbformat
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect, sync_playwright

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent
LESSON = REPO / "notebooks" / "04-minimax.ipynb"
ARTIFACTS = REPO / "tests" / "artifacts" / "browser"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# The minimax lesson shows the board widget but not the explorer: a small notebook shows it,
# from a position where alpha-beta's first cut-off comes at step 10 (of 224).
EXPLORER_NOTEBOOK = "explorer.ipynb"
EXPLORER_CELLS = [
    "from ttt.widgets import SearchExplorer",
    'SearchExplorer("XOX/.O./...", algorithm="alphabeta")',
]
# What a notebook shows when something went wrong: a traceback (or anything on stderr) and a
# widget that its front end could not draw.
STDERR = '.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]'
WIDGET_ERROR = "Error displaying widget"
# JupyterLab settings that keep it quiet: no news, no update checks (no network here).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def artifacts() -> Path:
    """Return the folder for the screenshots, after printing its path.

    Each run overwrites the same names (so parallel workers never delete each other's files);
    only the pictures of a failed start are cleared.
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for stale in ARTIFACTS.glob("run-all-did-not-start-*.png"):
        stale.unlink()
    print(f"\nbrowser screenshots: {ARTIFACTS}")
    return ARTIFACTS


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory):
    """Start JupyterLab on a copy of the notebooks; return (base URL, token, root dir).

    The server runs in its own process group with private config, runtime, settings and
    workspace directories; it is shut down (its kernels with it) whatever the tests do.
    """
    home = tmp_path_factory.mktemp("lab")
    root = home / "root"
    root.mkdir()
    if LESSON.exists():
        shutil.copy(LESSON, root / LESSON.name)
    write_notebook(root / EXPLORER_NOTEBOOK, EXPLORER_CELLS)
    for name, settings in LAB_SETTINGS.items():
        path = home / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings))
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
        IPYTHONDIR=str(home / "ipython"),
        MPLBACKEND="module://matplotlib_inline.backend_inline",
    )
    env.pop("JUPYTER_TOKEN", None)
    port, token = free_port(), secrets.token_hex(16)
    command = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    log = (home / "server.log").open("wb")
    server = subprocess.Popen(
        command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_for_server(server, url, token, log_path=home / "server.log")
        yield url, token, root
    finally:
        stop_server(server, url, token)
        log.close()


@pytest.fixture(scope="module")
def browser():
    """Return Debian's Chromium driven by Playwright (skip when Chromium is not installed)."""
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium; `make test` does it as root)")
    with sync_playwright() as playwright:
        # Playwright gives every launch a fresh, temporary user-data directory.
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def lesson(browser, lab, artifacts):
    """Return a page with the minimax lesson open, after Run All Cells (once for this module)."""
    assert LESSON.exists(), f"the minimax lesson {LESSON} is missing"
    with new_page(browser) as page:
        open_notebook(page, lab, LESSON.name)
        run_all_cells(page, timeout=150_000)
        shoot(page, artifacts / "01-lesson-after-run-all.png")
        yield page


@pytest.fixture
def explorer(browser, lab, artifacts):
    """Return a page with the explorer notebook open and run."""
    with new_page(browser) as page:
        open_notebook(page, lab, EXPLORER_NOTEBOOK)
        run_all_cells(page)
        yield page


# ----------------------------------------------------------------------------- helpers


@contextlib.contextmanager
def new_page(browser) -> Iterator:
    """Yield a page in a fresh browser context (no cookies or storage from other pages)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    try:
        yield context.new_page()
    finally:
        context.close()


def write_notebook(path: Path, sources: list[str]) -> None:
    """Write a Python 3 notebook with one code cell per source, without outputs."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(nb, path)


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(url: str, token: str, path: str, *, method: str = "GET", timeout: float = 5) -> bytes:
    """Return the body of a request to the Jupyter server's REST API."""
    request = urllib.request.Request(
        url + path, method=method, headers={"Authorization": f"token {token}"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read()


def wait_for_server(server: subprocess.Popen, url: str, token: str, *, log_path: Path) -> None:
    """Return once the server answers, or fail with its log if it dies or takes a minute."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"JupyterLab exited with {server.returncode}:\n{log_path.read_text()}")
        try:
            api(url, token, "api/status", timeout=2)
            return
        except (urllib.error.URLError, OSError):
            time.sleep(0.25)
    pytest.fail(f"JupyterLab did not answer within 60 s:\n{log_path.read_text()}")


def stop_server(server: subprocess.Popen, url: str, token: str) -> None:
    """Shut the server down with its kernels; kill its process group if it will not go."""
    if server.poll() is None:
        try:
            api(url, token, "api/shutdown", method="POST")
        except (urllib.error.URLError, OSError):
            pass
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(server.pid, sig)
        except ProcessLookupError:
            break
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            continue


def open_notebook(page, lab, name: str) -> None:
    """Open notebook `name` in JupyterLab (a fresh workspace) and wait for its idle kernel."""
    url, token, _ = lab
    page.goto(f"{url}lab/tree/{name}?reset&token={token}")
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
    deadline = time.monotonic() + 60
    while not kernel_ready(lab, name):  # started and idle, as the server sees it
        assert time.monotonic() < deadline, f"no idle kernel for {name} after 60 s"
        time.sleep(0.25)
    wait_kernel_idle(page)


def kernel_ready(lab, name: str) -> bool:
    """Return whether the server has a session for notebook `name` with an idle kernel."""
    url, token, _ = lab
    sessions = json.loads(api(url, token, "api/sessions"))
    return any(
        s["path"] == name and (s.get("kernel") or {}).get("execution_state") == "idle" for s in sessions
    )


def wait_kernel_idle(page, *, timeout: float = 60_000) -> None:
    """Return once the page shows the notebook's kernel idle and no cell waiting to run."""
    page.wait_for_function(
        """() => {
            const status = document.querySelector('.jp-Notebook-ExecutionIndicator');
            const busy = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
                .some(p => p.textContent.includes('*'));
            return status && status.dataset.status === 'idle' && !busy;
        }""",
        timeout=timeout,
    )


def run_all_cells(page, *, timeout: float = 120_000) -> None:
    """Run every cell through the Run menu, as a student would; return when all have run.

    A student whose click did nothing clicks again: so does this, once, if no cell has started
    within 15 s (nothing ran, so nothing runs twice).
    """
    for attempt in (1, 2):
        page.locator(".jp-NotebookPanel .jp-Notebook").first.click()
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:  # the first prompt turns to [*] or to a number: the run has begun
            page.wait_for_function(
                """() => { const p = document.querySelector('.jp-CodeCell .jp-InputPrompt');
                           return p && /\\[(\\*|\\d+)\\]/.test(p.textContent); }""",
                timeout=15_000,
            )
            break
        except PlaywrightTimeout:
            page.screenshot(path=str(ARTIFACTS / f"run-all-did-not-start-{attempt}.png"))
            print(f"Run All Cells: no cell started after attempt {attempt}; prompts {prompts(page)}")
            if attempt == 2:
                raise
    wait_kernel_idle(page, timeout=timeout)


def errors_shown(page) -> list[str]:
    """Return the texts of the error outputs and broken widgets that the page shows."""
    # textContent, not innerText: cells scrolled out of view are not laid out.
    return page.evaluate(
        """([stderr, broken]) => [
            ...[...document.querySelectorAll(stderr)].map(e => e.textContent),
            ...[...document.querySelectorAll('.jp-OutputArea-output')]
                .map(e => e.textContent).filter(t => t.includes(broken)),
        ]""",
        [STDERR, WIDGET_ERROR],
    )


def prompts(page) -> list[str]:
    """Return the input prompts of the notebook's code cells, in order ('[3]:', '[ ]:', ...)."""
    return [p.strip() for p in page.locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()]


def marks_on(squares) -> list[str]:
    """Return the marks on the board's nine squares ('X', 'O' or '')."""
    return [text.strip() for text in squares.all_inner_texts()]


def tree_shown(widget) -> dict:
    """Return how many tree nodes the explorer shows, and how many dashed pruned branches."""
    return widget.locator(".ttt-tree svg").evaluate(
        """svg => {
            const shown = el => {
                for (let e = el; e && e !== svg; e = e.parentElement)
                    if (getComputedStyle(e).display === 'none') return false;
                return true;
            };
            const dashed = g => [...g.querySelectorAll('path')]
                .some(p => (p.getAttribute('stroke-dasharray') || 'none') !== 'none');
            return {
                nodes: [...svg.querySelectorAll('g.node:not(.pruned)')].filter(shown).length,
                dashed: [...svg.querySelectorAll('g.pruned, g[id^="pruned"]')]
                    .filter(shown).filter(dashed).length,
            };
        }"""
    )


def shoot(target, path: Path) -> None:
    """Save a screenshot of a page or an element to `path`."""
    target.screenshot(path=str(path))


# ----------------------------------------------------------------------------- tests


def test_minimax_lesson_runs_without_errors(lesson):
    """Run All Cells on the minimax lesson: every code cell runs and none shows an error."""
    assert errors_shown(lesson) == []
    code = [c for c in nbformat.read(LESSON, as_version=4).cells if c.cell_type == "code"]
    shown = prompts(lesson)
    assert len(shown) == len(code)
    not_run = [i for i, (cell, p) in enumerate(zip(code, shown)) if cell.source.strip() and not re.fullmatch(r"\[\d+\]:", p)]
    assert not_run == [], f"code cells {not_run} did not run (prompts {shown})"


def test_board_widget_plays_a_game_to_its_end(lesson, artifacts):
    """Click squares on the lesson's board: the computer replies each time; the game ends."""
    widget = lesson.locator(".ttt-playable").first
    squares, status = widget.locator(".ttt-board .ttt-square"), widget.locator(".ttt-status")
    widget.scroll_into_view_if_needed()
    assert squares.count() == 9
    assert "Your move" in status.inner_text()
    shoot(widget, artifacts / "02-board-start.png")
    preference = [4, 0, 2, 6, 8, 1, 3, 5, 7]  # centre, corners, edges
    for move in range(1, 6):
        marks = marks_on(squares)
        assert marks.count("X") == marks.count("O") == move - 1, marks
        if move == 2:  # a taken square is refused with a message, and changes nothing
            squares.nth(4).click()
            expect(status).to_contain_text("is taken by X")
            assert marks_on(squares) == marks
        square = next(s for s in preference if marks[s] == "")
        squares.nth(square).click()
        # The computer has replied, or the game is over.
        lesson.wait_for_function(
            """([board, status, n]) => {
                const marks = [...board.querySelectorAll('.ttt-square')].filter(b => b.innerText.trim()).length;
                return marks >= n || /wins|draw/.test(status.innerText);
            }""",
            arg=[widget.locator(".ttt-board").element_handle(), status.element_handle(), 2 * move],
        )
        marks = marks_on(squares)
        assert marks[square] == "X", f"clicked square {square}, board {marks}"
        shoot(widget, artifacts / f"03-board-move-{move}.png")
        if re.search(r"wins|draw", status.inner_text()):
            break
        assert marks.count("O") == move, f"the computer did not reply to square {square}: {marks}"
    text = status.inner_text()
    assert re.search(r"It's a draw|O wins: the computer", text), f"the game did not end in a draw or loss: {text!r}"
    shoot(lesson, artifacts / "04-lesson-board-game-over.png")
    # A click after the end is refused with a message, and changes nothing.
    squares.nth(marks.index("")).click()
    expect(status).to_contain_text("The game is over")
    assert marks_on(squares) == marks
    assert errors_shown(lesson) == []


def test_explorer_steps_grow_the_tree_until_a_pruned_branch(explorer, artifacts):
    """Press Step: the tree shows more nodes; a dashed pruned branch appears at the cut-off."""
    widget = explorer.locator(".ttt-explorer").first
    sentence = widget.locator(".ttt-sentence")
    widget.locator(".ttt-tree svg").wait_for()
    assert errors_shown(explorer) == []
    shoot(explorer, artifacts / "05-explorer-start.png")
    seen = [tree_shown(widget)]
    for k in range(1, 31):
        widget.locator(".ttt-step").click()
        explorer.wait_for_function(
            "([el, k]) => el.innerText.startsWith(`Step ${k} of`)", arg=[sentence.element_handle(), k]
        )
        seen.append(tree_shown(widget))
        if k == 3:
            shoot(widget, artifacts / "06-explorer-step-3.png")
        if seen[-1]["dashed"]:
            break
    nodes = [s["nodes"] for s in seen]
    assert nodes == sorted(nodes) and nodes[3] > nodes[0], f"nodes shown at steps 0..{k}: {nodes}"
    assert seen[-1]["dashed"], f"no dashed pruned branch within {k} steps: {seen}"
    assert not any(s["dashed"] for s in seen[:-1])
    shoot(explorer, artifacts / "07-explorer-pruned.png")
    shoot(widget, artifacts / "08-explorer-pruned-widget.png")
    widget.locator(".ttt-back").click()
    explorer.wait_for_function(
        "([el, k]) => el.innerText.startsWith(`Step ${k} of`)", arg=[sentence.element_handle(), k - 1]
    )
    assert tree_shown(widget) == seen[-2], "Back did not undo the last step"
    assert errors_shown(explorer) == []
