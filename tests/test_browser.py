"""What a student sees in JupyterLab, tested in a real browser: the boards, the explorer, a lesson.

The fixtures start JupyterLab on a free loopback port (token, no browser, no news or update
checks, a temporary root directory with notebooks of its own and a copy of the minimax lesson),
once in the light and once in the dark theme (set in the server's own settings folder), and
drive Debian's Chromium through Playwright; nothing is downloaded. After every action the tests
read what is ON SCREEN (the squares' text, the status line, the explorer's sentence) and compare
it with the Python objects behind it, asked through a second client of the notebook's kernel:
whole games on the 3x3 board from both sides and on the 9x9 board, New game, switching side
and opponent, clicks while the computer thinks, the explorer's position editor and 50 steps of
a 270-node alpha-beta search (the current node always inside the tree's box, the controls on
the screen). Text contrast is checked from computed styles. Screenshots of every widget in both
themes go to ``tests/artifacts/browser/`` (its path is printed).
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
from typing import Any, Iterator

import nbformat
import pytest
from jupyter_client import BlockingKernelClient
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
VIEWPORT = {"width": 1400, "height": 900}
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}
# The widgets under test, each under a name the kernel client reads it by. `slow` thinks until
# the test lets it answer (the file `SLOW_GATE` appears in the notebook's folder; a minute at
# most), so what the page shows while the computer thinks is tested however loaded the machine.
# `mine` plays a student's plain minimax (the tests' naive CS50 solution: no pruning, no memo),
# defined in the notebook as a student defines it; `ult` is ultimate.
WIDGETS_NOTEBOOK = "widgets.ipynb"
SLOW_GATE = "slow-go"
STUDENT_CODE = (REPO / "tests" / "data" / "naive_tictactoe.py").read_text()
WIDGET_CELLS = [
    "import pathlib, time\nfrom ttt.tictactoe import minimax as reference_minimax\n"
    "from ttt.widgets import BigBoard, PlayableBoard, SearchExplorer",
    f"def slow_minimax(board):\n    gate = pathlib.Path({SLOW_GATE!r})\n    deadline = time.monotonic() + 60\n"
    "    while not gate.exists() and time.monotonic() < deadline:\n        time.sleep(0.02)\n"
    "    gate.unlink(missing_ok=True)\n    return reference_minimax(board)",
    'board = PlayableBoard("minimax", side="X")\nboard',
    'slow = PlayableBoard(slow_minimax, side="X")\nslow',
    'big = BigBoard("nine-board", opponent="random", seed=1)\nbig',
    'explorer = SearchExplorer("XO./.X./...", algorithm="alphabeta")\nexplorer',
    "from ttt.draw import draw_tree\nfrom ttt.games.classic import TicTacToe, parse_board\nfrom ttt.trace import record\n"
    'draw_tree(record(TicTacToe(), parse_board("XO./.X./..."), ordered=True), max_depth=2)',
    STUDENT_CODE,
    'mine = PlayableBoard(minimax, side="X")\nmine',
    'ult = BigBoard("ultimate", opponent="random", side="O")\nult',
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
THEME_SETTINGS = "@jupyterlab/apputils-extension/themes.jupyterlab-settings"


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


@pytest.fixture(scope="module", params=list(THEMES))
def lab(request, tmp_path_factory: pytest.TempPathFactory):
    """Start JupyterLab in one theme on the test's notebooks; return (base URL, token, root dir, theme, home)."""
    theme = request.param
    home = tmp_path_factory.mktemp(f"lab-{theme}")
    copies = [LESSON] if LESSON.exists() else []
    with running_lab(home, theme=theme, notebooks={WIDGETS_NOTEBOOK: WIDGET_CELLS}, copies=copies) as (url, token, root):
        yield url, token, root, theme, home


@contextlib.contextmanager
def running_lab(home: Path, *, theme: str = "light", notebooks: dict[str, list[str]], copies: list[Path] = ()):
    """Run JupyterLab in `theme` on new notebooks (name -> cell sources) and copies of others; yield (URL, token, root).

    The server runs in its own process group with private config, runtime, settings and
    workspace directories under `home` (the theme is a user setting there); it is shut down
    (its kernels with it) whatever happens.
    """
    root = home / "root"
    root.mkdir()
    for path in copies:
        shutil.copy(path, root / path.name)
    for name, cells in notebooks.items():
        write_notebook(root / name, cells)
    settings = dict(LAB_SETTINGS, **{THEME_SETTINGS: {"theme": THEMES[theme]}})
    for name, values in settings.items():
        path = home / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
        IPYTHONDIR=str(home / "ipython"),
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
    """Return Debian's Chromium driven by Playwright (the test fails, saying so, when Chromium is not installed)."""
    if CHROMIUM is None:
        pytest.fail("Chromium is not installed (Debian: apt-get install chromium; `make test` does it as root)", pytrace=False)
    with sync_playwright() as playwright:
        # Playwright gives every launch a fresh, temporary user-data directory.
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def widgets(browser, lab, artifacts):
    """Return (page, kernel client) with the widgets notebook open and run, in this module's theme."""
    with new_page(browser) as page:
        open_notebook(page, lab, WIDGETS_NOTEBOOK)
        run_all_cells(page)
        assert errors_shown(page) == []
        theme = page.evaluate("document.body.dataset.jpThemeName")
        assert theme == THEMES[lab[3]], f"JupyterLab opened in theme {theme!r}, not {THEMES[lab[3]]!r}"
        with kernel_client(lab, WIDGETS_NOTEBOOK) as kernel:
            yield page, kernel


@pytest.fixture(scope="module")
def lesson(browser, lab, artifacts):
    """Return a page with the minimax lesson open, after Run All Cells (light theme only: it is slow)."""
    if lab[3] != "light":
        pytest.skip("the lesson runs once, in the light theme")
    assert LESSON.exists(), f"the minimax lesson {LESSON} is missing"
    with new_page(browser) as page:
        open_notebook(page, lab, LESSON.name)
        run_all_cells(page, timeout=150_000)
        shoot(page, artifacts / "lesson-04-after-run-all.png")
        yield page


# ----------------------------------------------------------------------------- helpers


@contextlib.contextmanager
def new_page(browser) -> Iterator:
    """Yield a page in a fresh browser context (no cookies or storage from other pages)."""
    context = browser.new_context(viewport=VIEWPORT)
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
    url, token = lab[0], lab[1]
    page.goto(f"{url}lab/tree/{name}?reset&token={token}")
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
    deadline = time.monotonic() + 60
    while not kernel_ready(lab, name):  # started and idle, as the server sees it
        assert time.monotonic() < deadline, f"no idle kernel for {name} after 60 s"
        time.sleep(0.25)
    wait_kernel_idle(page)


def kernel_ready(lab, name: str) -> bool:
    """Return whether the server has a session for notebook `name` with an idle kernel."""
    url, token = lab[0], lab[1]
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


def shoot(target, path: Path) -> None:
    """Save a screenshot of a page or an element to `path`."""
    target.screenshot(path=str(path))


# --- the kernel behind the page ---------------------------------------------------------------


@contextlib.contextmanager
def kernel_client(lab, name: str) -> Iterator[BlockingKernelClient]:
    """Yield a second client of notebook `name`'s kernel (its outputs never reach the page)."""
    url, token, _, _, home = lab
    sessions = json.loads(api(url, token, "api/sessions"))
    kernel_id = next(s["kernel"]["id"] for s in sessions if s["path"] == name)
    client = BlockingKernelClient(connection_file=str(home / "runtime" / f"kernel-{kernel_id}.json"))
    client.load_connection_file()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=30)
        yield client
    finally:
        client.stop_channels()


def py(kernel: BlockingKernelClient, expression: str) -> Any:
    """Return the value of a Python `expression` in the notebook's kernel (through JSON)."""
    out: list[str] = []

    def hook(msg: dict) -> None:
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            out.append("\n".join(msg["content"]["traceback"]))

    reply = kernel.execute_interactive(
        f"import json as _json\nprint(_json.dumps({expression}))", store_history=False, output_hook=hook, timeout=60
    )
    assert reply["content"]["status"] == "ok", "".join(out)
    return json.loads("".join(out))


BOARD_MODEL = (
    '{{"squares": {w}.squares_text(), "status": {w}.status, "legal": sorted({w}.square_of(m) '
    'for m in {w}.session.legal_moves()) if {w}.session.to_move == {w}.side and not {w}.busy else [], '
    '"side": {w}.side, "opponent": {w}.opponent, "over": {w}.session.over, "turn": {w}.turn}}'
)
# What a board shows: its squares' text ('.' for none), status line, legal squares, side, opponent.
BOARD_SHOWN = """root => {
    const squares = [...root.querySelectorAll('.ttt-board .ttt-square')];
    return {
        squares: squares.map(s => s.textContent.trim() || '.').join(''),
        numbers: squares.map(s => Number(s.dataset.square)),
        status: root.querySelector('.ttt-status').textContent,
        legal: squares.filter(s => s.classList.contains('ttt-legal')).map(s => Number(s.dataset.square)),
        side: root.querySelector('.ttt-side [aria-pressed="true"]').textContent,
        opponent: root.querySelector('.ttt-opponent').value,
        busy: root.dataset.busy,
        stamp: Number(root.dataset.stamp),
    };
}"""


def shown(widget) -> dict:
    """Return what a board widget shows on screen (its DOM), as `BOARD_SHOWN` reads it."""
    return widget.locator(".ttt-widget").first.evaluate(BOARD_SHOWN)


def settled(page, widget, after: int, *, timeout: float = 60_000) -> None:
    """Return once the board has redrawn from the kernel's state after stamp `after` and is not busy."""
    page.wait_for_function(
        "([root, after]) => Number(root.dataset.stamp) > after && root.dataset.busy === 'false'",
        arg=[widget.locator(".ttt-widget").first.element_handle(), after],
        timeout=timeout,
    )


def act(page, widget, action) -> None:
    """Do `action` (a click) and return once the board shows the kernel's answer."""
    before = shown(widget)["stamp"]
    action()
    settled(page, widget, before)


def check_board(widget, kernel, name: str) -> dict:
    """Assert that the board on screen is the Python object `name`'s board; return the model."""
    model = py(kernel, BOARD_MODEL.format(w=name))
    screen = shown(widget)
    n = len(model["squares"])
    assert screen["numbers"] == list(range(n)), "each square carries its number in data-square"
    assert screen["squares"] == model["squares"], f"on screen {screen['squares']}, in Python {model['squares']}"
    assert screen["status"] == model["status"]
    assert screen["legal"] == model["legal"]
    assert screen["side"] == model["side"] and screen["opponent"] == model["opponent"]
    assert screen["busy"] == "false"
    return model


def click_square(page, widget, kernel, name: str, square: int) -> dict:
    """Click square `square` on the board; return the model after checking the screen against it."""
    act(page, widget, lambda: widget.locator(f'.ttt-square[data-square="{square}"]').click())
    return check_board(widget, kernel, name)


def choose(squares: str, legal: list[int]) -> int:
    """Return the square a person picks: centre, corners, edges, the first legal one."""
    for s in (4, 0, 2, 6, 8, 1, 3, 5, 7):
        if s in legal:
            return s
    return legal[0]


# What fails 4.5:1 contrast: each visible element's own text against the background behind it.
CONTRAST = """root => {
    const rgba = c => { const m = c.match(/[\\d.]+/g).map(Number); return m.length === 3 ? [...m, 1] : m; };
    const lum = ([r, g, b]) => {
        const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const over = (top, bottom) => top.slice(0, 3).map((v, i) => v * top[3] + bottom[i] * (1 - top[3])).concat([1]);
    const background = el => {
        const layers = [];
        for (let e = el; e; e = e.parentElement) {
            const c = rgba(getComputedStyle(e).backgroundColor);
            if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
        }
        let bg = [255, 255, 255, 1];
        for (const c of layers.reverse()) bg = over(c, bg);
        return bg;
    };
    const failures = [];
    let checked = 0;
    for (const el of root.querySelectorAll('*')) {
        const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
        const field = el.matches('select, input[type=text], input[type=number]');
        if (!(own || field) || el.disabled || !el.getClientRects().length) continue;
        const style = getComputedStyle(el);
        if (style.visibility === 'hidden') continue;
        const bg = background(el);
        let opacity = 1;  // a faded element's text is fainter than its colour says
        for (let e = el; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
        const color = rgba(style.color);
        const fg = over([...color.slice(0, 3), color[3] * opacity], bg);
        const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
        const ratio = (a + 0.05) / (b + 0.05);
        checked += 1;
        if (ratio < 4.5) failures.push(`${el.className || el.tagName} "${(el.value || el.textContent).trim().slice(0, 30)}": ${ratio.toFixed(2)} (${style.color} on rgb(${bg.slice(0, 3).map(Math.round)}))`);
    }
    return {checked, failures};
}"""


# How the board looks: mark size and colours, the "You play" row, the winning line's colour.
LOOKS = """root => {
    const w = root.querySelector('.ttt-widget');
    const style = e => getComputedStyle(e);
    const x = w.querySelector('.ttt-square[data-mark="X"]'), o = w.querySelector('.ttt-square[data-mark="O"]');
    const win = w.querySelector('.ttt-square.ttt-win');
    const probe = document.createElement('span');
    probe.style.backgroundColor = 'var(--ttt-computer-win)';
    w.append(probe);
    const computerWin = style(probe).backgroundColor;
    probe.remove();
    const label = w.querySelector('.ttt-side').previousElementSibling.getBoundingClientRect();
    const toggle = w.querySelector('.ttt-side').getBoundingClientRect();
    return {
        markSize: parseFloat(style(x || o).fontSize),
        xColour: x ? style(x).color : null, oColour: o ? style(o).color : null,
        labelRow: Math.abs((label.top + label.bottom) / 2 - (toggle.top + toggle.bottom) / 2) < 6,
        wonBy: w.dataset.wonBy, winBackground: win ? style(win).backgroundColor : null, computerWin,
    };
}"""


def contrast_failures(widget, *, at_least: int = 6) -> list[str]:
    """Return the texts in `widget` whose contrast with their background is under 4.5:1 (fewer than `at_least` checked fails).

    Disabled controls are not checked (WCAG exempts them): a board whose computer thinks has fewer texts to check.
    """
    found = widget.evaluate(CONTRAST)
    assert found["checked"] >= at_least, f"only {found['checked']} texts were checked for contrast"
    return found["failures"]


# ----------------------------------------------------------------------------- the boards


def test_whole_games_on_the_3x3_board_from_both_sides_new_game_and_switches(widgets, lab, artifacts):
    """Every click, New game, side and opponent switch: the squares on screen are the Python board's."""
    page, kernel = widgets
    theme = lab[3]
    widget = page.locator(".jp-OutputArea-output").filter(has=page.locator(".ttt-playable")).nth(0)
    widget.scroll_into_view_if_needed()
    model = check_board(widget, kernel, "board")
    assert model["squares"] == "........." and "Your move" in model["status"]
    shoot(widget, artifacts / f"{theme}-board-start.png")
    labels = widget.locator(".ttt-opponent option").all_text_contents()
    assert len(labels) == len(set(labels)), f"a player is listed twice: {labels}"
    for side in ("X", "O"):
        if model["side"] != side:  # switching side starts a new game: the computer opens as X
            act(page, widget, lambda: widget.locator(f'.ttt-side [data-side="{side}"]').click())
            model = check_board(widget, kernel, "board")
            assert model["squares"].count("X") == 1 and model["squares"].count("O") == 0
        moves = 0
        while not model["over"]:
            if moves == 1:  # a taken square is refused with the reason and changes nothing
                taken = next(s for s, m in enumerate(model["squares"]) if m != ".")
                before = model["squares"]
                model = click_square(page, widget, kernel, "board", taken)
                assert model["squares"] == before and "cannot be played" in model["status"]
                assert widget.locator('.ttt-status[data-kind="error"]').count() == 1
                failures = contrast_failures(widget)  # the error line and the last move's tint too
                assert failures == [], f"{theme} theme: text under 4.5:1 contrast: {failures}"
            model = click_square(page, widget, kernel, "board", choose(model["squares"], model["legal"]))
            moves += 1
        assert re.search(r"It's a draw|wins: the computer", model["status"]), model["status"]
        looks = widget.evaluate(LOOKS)
        assert looks["markSize"] >= 24 and looks["xColour"] != looks["oColour"], looks  # big marks, X and O apart
        assert looks["labelRow"], "'You play' is not on the line of its X / O buttons"
        if "beat you" in model["status"]:  # the computer's winning line in its own colour, not the person's
            assert looks["wonBy"] == "computer" and looks["winBackground"] == looks["computerWin"], looks
        shoot(widget, artifacts / f"{theme}-board-game-over-as-{side}.png")
        free = model["squares"].index(".") if "." in model["squares"] else 0
        model = click_square(page, widget, kernel, "board", free)  # after the end: refused
        assert "The game is over" in model["status"]
        act(page, widget, lambda: widget.locator(".ttt-new").click())  # the whole board clears
        model = check_board(widget, kernel, "board")
        assert model["squares"].count(".") == (9 if side == "X" else 8)
    # Another opponent starts a new game too; the board clears.
    model = click_square(page, widget, kernel, "board", choose(model["squares"], model["legal"]))
    act(page, widget, lambda: widget.locator(".ttt-opponent").select_option("random"))
    model = check_board(widget, kernel, "board")
    assert model["opponent"] == "random" and model["squares"].count(".") == 8
    model = click_square(page, widget, kernel, "board", choose(model["squares"], model["legal"]))
    assert errors_shown(page) == []
    failures = contrast_failures(widget)
    assert failures == [], f"{theme} theme: text under 4.5:1 contrast: {failures}"


def test_the_computers_thinking_shows_its_search_inside_the_column(widgets, lab, artifacts):
    """Show the computer's thinking: its tree opens at the root, inside the notebook column."""
    page, kernel = widgets
    widget = page.locator(".jp-OutputArea-output").filter(has=page.locator(".ttt-playable")).nth(0)
    act(page, widget, lambda: widget.locator(".ttt-new").click())
    model = check_board(widget, kernel, "board")
    click_square(page, widget, kernel, "board", choose(model["squares"], model["legal"]))
    act(page, widget, lambda: widget.locator(".ttt-thinking").check())
    panel = widget.locator(".ttt-thinking-panel")
    expect(panel).to_be_visible()
    assert "Alpha-beta from" in panel.locator(".ttt-caption").inner_text()
    root = panel.locator('.ttt-node[data-node="0"] .ttt-node-box')
    tree = panel.locator(".ttt-tree")
    inside(root, tree)
    column = page.locator(".jp-NotebookPanel .jp-Notebook").first.bounding_box()
    box = tree.bounding_box()
    assert box["x"] >= column["x"] and box["x"] + box["width"] <= column["x"] + column["width"] + 1
    rows = py(kernel, "len(board.thinking_tree['nodes'])")
    assert panel.locator(".ttt-node").count() == rows and rows > 1
    shoot(widget, artifacts / f"{lab[3]}-board-thinking.png")
    failures = contrast_failures(widget)
    assert failures == [], f"{lab[3]} theme: text under 4.5:1 contrast: {failures}"
    act(page, widget, lambda: widget.locator(".ttt-thinking").uncheck())


CONTROLS = """root => {
    const controls = [...root.querySelectorAll('.ttt-side button, .ttt-opponent, .ttt-new, .ttt-thinking, .ttt-thinking-depth')];
    return {count: controls.length, enabled: controls.filter(c => !c.disabled).map(c => c.className + ' ' + (c.textContent || ''))};
}"""


def test_a_click_while_the_computer_thinks_is_refused_not_queued(widgets, lab, artifacts):
    """While the computer thinks: the clicked X shows at once, every control is disabled, other clicks do nothing.

    The slow opponent answers only when the test lets it (`SLOW_GATE`), so every check made
    while it thinks is made while it thinks, however slow the machine.
    """
    page, kernel = widgets
    gate = lab[2] / SLOW_GATE
    gate.unlink(missing_ok=True)
    widget = page.locator(".jp-OutputArea-output").filter(has=page.locator(".ttt-playable")).nth(1)
    widget.scroll_into_view_if_needed()
    labels = widget.locator(".ttt-opponent option").all_text_contents()
    assert labels.count("your slow_minimax") == 1 and labels.count("minimax") == 1, labels
    model = check_board(widget, kernel, "slow")
    assert widget.evaluate(CONTROLS)["enabled"] != [], "the controls are disabled while nobody thinks"
    before = shown(widget)["stamp"]
    widget.locator('.ttt-square[data-square="0"]').click()
    screen = shown(widget)  # at once, before the kernel has answered
    assert screen["squares"][0] == "X" and screen["busy"] == "true"
    assert "is thinking" in screen["status"]
    root = widget.locator(".ttt-widget").first.element_handle()
    page.wait_for_function(  # the kernel has the click and says so: it is thinking
        "([root, after]) => Number(root.dataset.stamp) > after && root.dataset.busy === 'true'", arg=[root, before],
        timeout=60_000)
    thinking_stamp = shown(widget)["stamp"]  # (the kernel answers nothing else until the computer has moved)
    controls = widget.evaluate(CONTROLS)
    assert controls["count"] == 6 and controls["enabled"] == [], f"usable while the computer thinks: {controls}"
    failures = contrast_failures(widget, at_least=3)  # the marks and the status line
    assert failures == [], f"{lab[3]} theme: text under 4.5:1 contrast while the computer thinks: {failures}"
    shoot(widget, artifacts / f"{lab[3]}-board-thinking-busy.png")
    for square in (4, 8):  # clicks while it thinks: refused on screen, never sent as moves
        widget.locator(f'.ttt-square[data-square="{square}"]').click()
        screen = shown(widget)
        assert screen["squares"][square] == "." and "wait for its move" in screen["status"]
    # New game and the other side, clicked anyway: a disabled button does nothing
    widget.locator(".ttt-new").click(force=True)
    widget.locator('.ttt-side [data-side="O"]').click(force=True)
    assert shown(widget)["side"] == "X"
    gate.touch()  # the computer may answer now
    settled(page, widget, thinking_stamp)
    model = check_board(widget, kernel, "slow")
    assert model["squares"].count("X") == 1 and model["squares"].count("O") == 1, model["squares"]
    assert model["side"] == "X" and widget.evaluate(CONTROLS)["enabled"] != []
    # Anything the page had sent while the computer thought reaches the kernel before this tick does
    # (ticking it searches again from the last position: let it answer at once).
    gate.touch()
    act(page, widget, lambda: widget.locator(".ttt-thinking").check())
    model = check_board(widget, kernel, "slow")
    assert model["squares"].count("X") == 1 and model["squares"].count("O") == 1 and model["side"] == "X", \
        f"a click made while the computer thought was played: {model}"
    act(page, widget, lambda: widget.locator(".ttt-thinking").uncheck())
    # A click sent for an earlier position (as a queued click would be) is refused by the kernel.
    stale = py(kernel, "(slow.click_square(8, turn=slow.turn - 1), slow.status)[1]")
    assert "before the last move" in stale
    act(page, widget, lambda: widget.locator(".ttt-new").click())
    check_board(widget, kernel, "slow")
    assert not gate.exists()


# What the thinking panel shows: its caption, each row (drawn or hidden) with its text, the stubs.
PANEL_SHOWN = """root => {
    const panel = root.querySelector('.ttt-thinking-panel');
    const rows = [...panel.querySelectorAll('.ttt-tree > div')];
    return {
        hidden: panel.hidden,
        caption: panel.querySelector('.ttt-caption').textContent,
        nodes: rows.filter(r => r.classList.contains('ttt-node')).map(r => ({
            id: Number(r.dataset.node), shown: !r.hidden,
            value: r.querySelector('.ttt-value').textContent,
            board: [...r.querySelectorAll('.ttt-mini-square')].map(s => s.textContent || '.').join(''),
            fold: r.querySelector('.ttt-fold').hidden ? '' : r.querySelector('.ttt-fold').textContent,
        })),
        stubs: rows.filter(r => r.classList.contains('ttt-stub') && !r.hidden).map(r => r.textContent),
    };
}"""


def expected_panel(tree: dict) -> dict:
    """Return what the thinking panel should show of `tree` (the model's ``thinking_tree``) at its last step.

    At the end a finished subtree of more than one node is folded into its summary, unless it
    is on the principal variation; a row shows when its parent shows and is open.
    """
    k = len(tree["steps"])
    nodes = {n["id"]: n for n in tree["nodes"]}

    def is_open(n: dict) -> bool:
        return n["parent"] is None or not (0 < n["done"] <= k) or n["size"] <= 1 or n["id"] in tree["pv"]

    def shows(n: dict) -> bool:
        return n["parent"] is None or (shows(nodes[n["parent"]]) and is_open(nodes[n["parent"]]) and n["enter"] <= k)

    rows = []
    for n in tree["nodes"]:
        value = [t for t in n["texts"] if t[0] <= k][-1][1]
        folded = n["parent"] is not None and 0 < n["done"] <= k and n["size"] > 1
        rows.append({"id": n["id"], "shown": shows(n), "value": value, "board": n["board"],
                     "fold": ("▾ fold" if is_open(n) else f"▸ {n['size']} nodes, {value}") if folded else ""})
    stubs = [s["text"] for s in tree["stubs"]
             if s["step"] <= k and shows(nodes[s["node"]]) and is_open(nodes[s["node"]])]
    return {"nodes": rows, "stubs": stubs}


def check_panel(widget, kernel, name: str) -> dict:
    """Assert the thinking panel on screen shows the Python board's `thinking_tree`; return the tree."""
    tree = py(kernel, f"{name}.thinking_tree")
    caption = py(kernel, f"{name}.thinking_caption")
    screen = widget.evaluate(PANEL_SHOWN)
    expected = expected_panel(tree)
    assert not screen["hidden"] and screen["caption"] == caption
    assert [n["id"] for n in screen["nodes"]] == [n["id"] for n in expected["nodes"]]
    for seen, want in zip(screen["nodes"], expected["nodes"]):
        if want["shown"]:
            assert seen == want, f"on screen {seen}, in Python {want}"
        else:
            assert not seen["shown"], f"row {seen} is shown, but its parent is folded"
    assert sorted(screen["stubs"]) == sorted(expected["stubs"])
    return tree


def test_the_computers_thinking_with_a_students_minimax_from_the_empty_board_and_mid_game(widgets, lab, artifacts):
    """A student's plain minimax, thinking ticked: the panel shows what Python drew, and no more is sent."""
    page, kernel = widgets
    widget = page.locator(".jp-OutputArea-output").filter(has=page.locator(".ttt-playable")).nth(2)
    widget.scroll_into_view_if_needed()
    assert widget.locator(".ttt-opponent option").all_text_contents().count("your minimax") == 1
    check_board(widget, kernel, "mine")
    act(page, widget, lambda: widget.locator(".ttt-thinking").check())
    assert "has not moved yet" in widget.locator(".ttt-caption").inner_text()
    # The computer opens from the empty board: its whole search (549,946 nodes) counted, 2 moves drawn.
    before = shown(widget)["stamp"]
    widget.locator('.ttt-side [data-side="O"]').click()
    settled(page, widget, before, timeout=300_000)
    model = check_board(widget, kernel, "mine")
    assert model["squares"].count("X") == 1 and model["side"] == "O"
    tree = check_panel(widget, kernel, "mine")
    assert tree["total"] == 549_946 and len(tree["nodes"]) == 1 + 9 + 72
    assert tree["nodes"][0]["board"] == "........." and "from .../.../..." in py(kernel, "mine.thinking_caption")
    sent = py(kernel, "len(_json.dumps(mine.thinking_tree))")
    assert sent < 100_000, f"{sent} bytes sent for {len(tree['nodes'])} drawn nodes"
    shoot(widget, artifacts / f"{lab[3]}-board-thinking-own-minimax-empty.png")
    # Mid-game: the person's reply, the computer's answer, its search from there.
    model = click_square(page, widget, kernel, "mine", choose(model["squares"], model["legal"]))
    assert model["squares"].count("X") == 2 and model["squares"].count("O") == 1
    tree = check_panel(widget, kernel, "mine")
    assert tree["nodes"][0]["board"].count(".") == 7 and len(tree["nodes"]) <= 300
    shoot(widget, artifacts / f"{lab[3]}-board-thinking-own-minimax-mid.png")
    failures = contrast_failures(widget)
    assert failures == [], f"{lab[3]} theme: text under 4.5:1 contrast: {failures}"
    act(page, widget, lambda: widget.locator(".ttt-thinking").uncheck())
    assert widget.locator(".ttt-thinking-panel").is_hidden()


def test_a_whole_game_on_the_9x9_board(widgets, lab, artifacts):
    """Nine-board against random: after every click the 81 squares on screen are the Python board's."""
    page, kernel = widgets
    widget = page.locator(".jp-OutputArea-output").filter(has=page.locator(".ttt-bigboard")).first
    widget.scroll_into_view_if_needed()
    model = check_board(widget, kernel, "big")
    assert model["squares"] == "." * 81
    small = widget.locator(".ttt-small-board").first.bounding_box()
    assert small["width"] < 140, f"a small board's frame is {small['width']} px wide"
    moves = 0
    while not model["over"]:
        model = click_square(page, widget, kernel, "big", model["legal"][len(model["legal"]) // 2])
        open_boards = [int(b) for b in widget.locator(".ttt-small-board.ttt-open").evaluate_all("e => e.map(b => b.dataset.board)")]
        assert open_boards == sorted({s // 9 for s in model["legal"]})
        moves += 1
        if moves == 3:
            shoot(widget, artifacts / f"{lab[3]}-bigboard-playing.png")
            failures = contrast_failures(widget)
            assert failures == [], f"{lab[3]} theme: text under 4.5:1 contrast: {failures}"
    assert re.search(r"wins|draw", model["status"])
    shoot(widget, artifacts / f"{lab[3]}-bigboard-game-over.png")
    act(page, widget, lambda: widget.locator(".ttt-new").click())  # all 81 squares clear
    model = check_board(widget, kernel, "big")
    assert model["squares"] == "." * 81
    act(page, widget, lambda: widget.locator('.ttt-side [data-side="O"]').click())
    model = check_board(widget, kernel, "big")
    assert model["squares"].count("X") == 1 and model["side"] == "O"
    model = click_square(page, widget, kernel, "big", model["legal"][0])
    assert model["squares"].count("O") == 1


# The colours of ultimate's boards: each won board's squares, the winning line's, and the theme's.
BOARD_COLOURS = """root => {
    const w = root.querySelector('.ttt-widget');
    const probe = document.createElement('span');
    w.append(probe);
    const colour = name => { probe.style.backgroundColor = `var(${name})`; return getComputedStyle(probe).backgroundColor; };
    const theme = {x: colour('--ttt-owner-x'), o: colour('--ttt-owner-o'), win: colour('--ttt-computer-win'),
                   youWin: colour('--ttt-you-win'), last: colour('--ttt-last')};
    probe.remove();
    const plain = s => !s.classList.contains('ttt-win') && !s.classList.contains('ttt-last');
    const seen = owner => [...new Set([...w.querySelectorAll(`.ttt-small-board[data-owner="${owner}"] .ttt-square`)]
        .filter(plain).map(s => getComputedStyle(s).backgroundColor))];
    return {theme, x: seen('X'), o: seen('O'), win: [...new Set([...w.querySelectorAll('.ttt-square.ttt-win')]
        .filter(s => !s.classList.contains('ttt-last')).map(s => getComputedStyle(s).backgroundColor))], wonBy: w.dataset.wonBy};
}"""


def rgb_distance(a: str, b: str) -> float:
    """Return how far apart two CSS rgb() colours are (0 to 441)."""
    x, y = ([float(v) for v in re.findall(r"[\d.]+", c)[:3]] for c in (a, b))
    return sum((p - q) ** 2 for p, q in zip(x, y)) ** 0.5


def test_in_ultimate_x_o_and_the_computers_win_have_colours_of_their_own(widgets, lab, artifacts):
    """The computer plays X and wins: its boards, O's boards and the winning line are three colours, far apart."""
    page, kernel = widgets
    widget = page.locator(".jp-OutputArea-output").filter(has=page.locator(".ttt-bigboard")).nth(1)
    widget.scroll_into_view_if_needed()
    kernel.execute_interactive(  # whole games, the person's moves at random, until the computer (X) wins
        "import random as _random\n_pick = _random.Random(5)\nfor _ in range(100):\n    ult.new_game()\n"
        "    while not ult.session.over:\n        ult.click_square(_pick.choice(ult.legal), turn=ult.turn)\n"
        "    if ult.session.winner == ult.computer == 'X':\n        break\n", store_history=False, timeout=300)
    stamp = py(kernel, "ult.stamp")
    page.wait_for_function("([root, stamp]) => Number(root.dataset.stamp) === stamp",
                           arg=[widget.locator(".ttt-widget").first.element_handle(), stamp], timeout=60_000)
    model = check_board(widget, kernel, "ult")
    assert "the computer (random) beat you" in model["status"] and model["side"] == "O"
    colours = widget.evaluate(BOARD_COLOURS)
    theme = colours["theme"]
    assert colours["wonBy"] == "computer" and colours["win"] == [theme["win"]], colours
    assert colours["x"] in ([], [theme["x"]]) and colours["o"] in ([], [theme["o"]]), colours
    for a, b in [("x", "o"), ("win", "x"), ("win", "o"), ("youWin", "x"), ("youWin", "o"), ("win", "last")]:
        assert rgb_distance(theme[a], theme[b]) >= 40, f"{lab[3]} theme: {a} {theme[a]} and {b} {theme[b]} look alike"
    failures = contrast_failures(widget)
    assert failures == [], f"{lab[3]} theme: text under 4.5:1 contrast: {failures}"
    shoot(widget, artifacts / f"{lab[3]}-ultimate-computer-won-as-x.png")


def test_draw_tree_fits_the_notebook_column(widgets, lab, artifacts):
    """A wide tree drawn by draw_tree scales down to the output's width: the root is in view."""
    page, _ = widgets
    output = page.locator(".jp-OutputArea-output").filter(has=page.locator("svg.ttt-tree-picture")).last
    output.scroll_into_view_if_needed()
    picture = output.locator("svg.ttt-tree-picture")
    sizes = picture.evaluate(
        """(p, o) => ({picture: p.getBoundingClientRect().toJSON(), output: o.getBoundingClientRect().toJSON(),
                       natural: p.width.baseVal.value, scroll: o.scrollWidth, client: o.clientWidth})""",
        output.element_handle(),
    )
    inside(picture.locator("#n0"), output)
    assert sizes["picture"]["width"] <= sizes["output"]["width"] + 1 and sizes["scroll"] <= sizes["client"] + 1, sizes
    assert sizes["picture"]["width"] > 0.5 * sizes["output"]["width"], f"the tree is drawn too small: {sizes}"
    # every text as the page draws it, scaled to the column: no smaller than 10 px
    texts = picture.evaluate("""p => [...p.querySelectorAll('text')].map(t => ({
        text: t.textContent, px: parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a}))""")
    assert len(texts) > 50 and {"v = 1", "8"} <= {t["text"] for t in texts}, texts[:5]
    smallest = min(texts, key=lambda t: t["px"])
    print(f"draw_tree at the column's width ({sizes['output']['width']:.0f} px): smallest text {smallest}")
    assert smallest["px"] >= 10, f"text drawn at {smallest['px']:.1f} px: {smallest['text']!r}"
    shoot(output, artifacts / f"{lab[3]}-draw-tree.png")


# ----------------------------------------------------------------------------- the explorer


EXPLORER_SHOWN = """root => ({
    step: Number(root.querySelector('.ttt-slider').value),
    sentence: root.querySelector('.ttt-sentence').textContent,
    counts: root.querySelector('.ttt-counts').textContent,
    current: (root.querySelector('.ttt-node.ttt-current') || {dataset: {}}).dataset.node,
    editor: [...root.querySelectorAll('.ttt-edit-square')].map(s => s.textContent.trim() || '.').join(''),
    position: root.querySelector('.ttt-position').value,
    status: root.querySelector('.ttt-status').textContent,
    rootBoard: [...root.querySelectorAll('.ttt-node[data-node="0"] .ttt-mini-square')].map(s => s.textContent || '.').join(''),
})"""


def inside(inner, outer, *, margin: float = 1) -> None:
    """Assert that element `inner`'s box lies inside element `outer`'s visible (client) area."""
    box = inner.evaluate(
        """(e, outer) => { const r = e.getBoundingClientRect(), o = outer.getBoundingClientRect();
            const left = o.left + outer.clientLeft, top = o.top + outer.clientTop;
            return [r.left, r.top, r.right, r.bottom, left, top, left + outer.clientWidth, top + outer.clientHeight]; }""",
        outer.element_handle(),
    )
    l, t, r, b, L, T, R, B = box
    assert L - margin <= l and r <= R + margin and T - margin <= t and b <= B + margin, f"box {box[:4]} not inside {box[4:]}"


def in_viewport(page, element) -> None:
    """Assert that `element` lies inside the browser window."""
    r = element.bounding_box()
    assert r is not None and r["x"] >= 0 and r["y"] >= 0
    assert r["x"] + r["width"] <= VIEWPORT["width"] and r["y"] + r["height"] <= VIEWPORT["height"], r


def explorer_check(page, widget, kernel, k: int) -> dict:
    """Assert the explorer on screen is at step `k` and says what the Python explorer says there."""
    screen = widget.evaluate(EXPLORER_SHOWN)
    assert screen["step"] == k
    deadline = time.monotonic() + 60
    while True:  # the browser tells the kernel where it is (and never waits for an answer)
        model = py(kernel, '{"step": explorer.step, "sentence": explorer.sentence(), "counts": explorer.tally(), '
                           '"node": explorer.tree["steps"][explorer.step - 1]["node"] if explorer.step else None}')
        if model["step"] == k:
            break
        assert time.monotonic() < deadline, f"the kernel never heard of step {k}"
        time.sleep(0.05)
    assert screen["sentence"] == model["sentence"]
    assert screen["counts"] == model["counts"]
    assert (screen["current"] and int(screen["current"])) == model["node"]
    return screen


def test_the_explorer_keeps_the_current_node_and_the_controls_in_view(widgets, lab, artifacts):
    """50 steps and slider jumps through 270 nodes: the current node inside the tree's box, controls on screen."""
    page, kernel = widgets
    theme = lab[3]
    widget = page.locator(".ttt-explorer").first
    widget.evaluate("e => e.scrollIntoView({block: 'start'})")
    assert py(kernel, "explorer.trace.node_count") == 270
    tree = widget.locator(".ttt-tree")
    controls = [widget.locator(c) for c in (".ttt-step", ".ttt-back", ".ttt-play", ".ttt-slider", ".ttt-sentence")]
    explorer_check(page, widget, kernel, 0)
    shoot(widget, artifacts / f"{theme}-explorer-start.png")
    step = widget.locator(".ttt-step")
    for k in range(1, 51):
        step.click()
        explorer_check(page, widget, kernel, k)
        inside(widget.locator(".ttt-node.ttt-current .ttt-node-box"), tree)
        for c in controls:
            in_viewport(page, c)
        if k in (3, 12, 50):
            shoot(widget, artifacts / f"{theme}-explorer-step-{k}.png")
    widget.locator(".ttt-back").click()
    explorer_check(page, widget, kernel, 49)
    total = py(kernel, "len(explorer.trace)")
    for k in (132, total, 40, 1, 300, total // 2):  # slider jumps
        widget.locator(".ttt-slider").evaluate("(s, k) => { s.value = k; s.dispatchEvent(new Event('input')); }", k)
        explorer_check(page, widget, kernel, k)
        inside(widget.locator(".ttt-node.ttt-current .ttt-node-box"), tree)
        for c in controls:
            in_viewport(page, c)
    shoot(widget, artifacts / f"{theme}-explorer-jumped.png")
    widget.locator(".ttt-slider").evaluate(f"s => {{ s.value = {total}; s.dispatchEvent(new Event('input')); }}")
    explorer_check(page, widget, kernel, total)
    shoot(widget, artifacts / f"{theme}-explorer-end.png")
    failures = contrast_failures(widget)
    assert failures == [], f"{theme} theme: text under 4.5:1 contrast: {failures}"
    # A folded subtree opens with a click and shows its rows.
    fold = widget.locator(".ttt-node.ttt-folded .ttt-fold").first
    node = fold.evaluate("b => b.closest('.ttt-node').dataset.node")
    hidden = widget.locator(".ttt-node:not([hidden])").count()
    fold.click()
    assert widget.locator(".ttt-node:not([hidden])").count() > hidden
    assert widget.locator(f'.ttt-node[data-node="{node}"]').evaluate("e => !e.classList.contains('ttt-folded')")


def test_explorer_steps_in_the_browser_and_play_pauses(widgets, lab):
    """Step works while the kernel is busy (no round trip); ■ pauses where it is, Play goes on from there.

    The kernel is kept busy until the test has stepped (it waits for a file the test writes), so
    the steps are shown by the browser alone, however slow the machine.
    """
    page, kernel = widgets
    busy, go = lab[2] / "kernel-busy", lab[2] / "kernel-go"
    busy.unlink(missing_ok=True)
    go.unlink(missing_ok=True)
    widget = page.locator(".ttt-explorer").first
    widget.evaluate("e => e.scrollIntoView({block: 'start'})")
    widget.locator(".ttt-slider").evaluate("s => { s.value = 0; s.dispatchEvent(new Event('input')); }")
    kernel.execute(  # busy until the test says so (two minutes at most)
        "import pathlib as _p, time as _t\n_p.Path('kernel-busy').touch()\n_end = _t.monotonic() + 120\n"
        "while not _p.Path('kernel-go').exists() and _t.monotonic() < _end:\n    _t.sleep(0.02)\n"
        "_p.Path('kernel-go').unlink(missing_ok=True)\n_p.Path('kernel-busy').unlink()", store_history=False)
    deadline = time.monotonic() + 60
    while not busy.exists():
        assert time.monotonic() < deadline, "the kernel never started its busy cell"
        time.sleep(0.02)
    try:
        for k in range(1, 6):
            widget.locator(".ttt-step").click()
            expect(widget.locator(".ttt-sentence")).to_contain_text(f"Step {k} of", timeout=30_000)
        assert busy.exists(), "the kernel was not busy while the browser stepped"
    finally:
        go.touch()
    play = widget.locator(".ttt-play")
    play.click()
    page.wait_for_function("e => Number(e.value) >= 8", arg=widget.locator(".ttt-slider").element_handle(), timeout=60_000)
    expect(play).to_have_text("■ Pause")
    play.click()
    paused = int(widget.locator(".ttt-slider").input_value())
    time.sleep(1.0)
    assert int(widget.locator(".ttt-slider").input_value()) == paused >= 8, "■ did not pause where it was"
    expect(play).to_have_text("▶ Play")
    play.click()
    page.wait_for_function("([e, k]) => Number(e.value) > k", arg=[widget.locator(".ttt-slider").element_handle(), paused], timeout=60_000)
    play.click()
    assert int(widget.locator(".ttt-slider").input_value()) > paused


def test_the_position_editor_shows_the_position_python_searches(widgets, lab, artifacts):
    """Click the editor's squares and type a position: the editor and the tree's root are the Python position."""
    page, kernel = widgets
    widget = page.locator(".ttt-explorer").first
    widget.evaluate("e => e.scrollIntoView({block: 'start'})")

    def check(typed: str | None = None) -> dict:
        deadline = time.monotonic() + 60
        while True:
            model = py(kernel, '{"position": explorer.position, "root": explorer.trace.events[0].state, "status": explorer.status}')
            screen = widget.evaluate(EXPLORER_SHOWN)
            board = "".join(c for c in model["position"].upper().replace("-", ".").replace("_", ".") if c in "XO.")
            board = (board + "." * 9)[:9]
            if typed in (None, model["position"]) and screen["editor"] == board and screen["rootBoard"] == model["root"] and screen["status"] == model["status"]:
                return model
            assert time.monotonic() < deadline, f"on screen {screen}, in Python {model}"
            time.sleep(0.1)

    model = check()
    cycle = {".": "X", "X": "O", "O": "."}
    for square in (8, 8, 8, 2, 2):  # '.' -> X (too many X: refused) -> O -> '.', then O on square 2
        board = model["position"].replace("/", "")
        board = board[:square] + cycle[board[square]] + board[square + 1:]
        widget.locator(f'.ttt-edit-square[data-square="{square}"]').click()
        model = check("/".join(board[r:r + 3] for r in (0, 3, 6)))
    assert model["position"] == "XOO/.X./..." and model["root"] == "XOO.X...."
    position = widget.locator(".ttt-position")
    position.fill("XOX/OXO/...")
    position.press("Enter")
    model = check("XOX/OXO/...")
    assert model["root"] == "XOXOXO..."
    position.fill("XXX/XXX/...")  # not a position any game reaches: refused, the tree stays
    position.press("Enter")
    model = check("XXX/XXX/...")
    assert "ttt" not in model["status"] and model["root"] == "XOXOXO..." and model["status"]
    expect(widget.locator('.ttt-status[data-kind="error"]')).to_be_visible()
    failures = contrast_failures(widget)
    assert failures == [], f"{lab[3]} theme: text under 4.5:1 contrast: {failures}"
    shoot(widget, artifacts / f"{lab[3]}-explorer-editor.png")
    position.fill("XO./.X./...")
    position.press("Enter")
    model = check("XO./.X./...")
    assert model["root"] == "XO..X...."


# ----------------------------------------------------------------------------- a lesson


def test_minimax_lesson_runs_without_errors_and_its_pictures_fit(lesson, artifacts):
    """Run All Cells on the minimax lesson: every cell runs, none shows an error, the tree fits the column."""
    assert errors_shown(lesson) == []
    code = [c for c in nbformat.read(LESSON, as_version=4).cells if c.cell_type == "code"]
    shown_prompts = prompts(lesson)
    assert len(shown_prompts) == len(code)
    not_run = [i for i, (cell, p) in enumerate(zip(code, shown_prompts)) if cell.source.strip() and not re.fullmatch(r"\[\d+\]:", p)]
    assert not_run == [], f"code cells {not_run} did not run (prompts {shown_prompts})"
    picture = lesson.locator("svg.ttt-tree-picture").first
    picture.scroll_into_view_if_needed()
    output = picture.locator("xpath=ancestor::div[contains(@class, 'jp-OutputArea-output')]").first
    inside(picture.locator("#n0"), output)
    shoot(output, artifacts / "lesson-04-draw-tree.png")
    board = lesson.locator(".jp-OutputArea-output").filter(has=lesson.locator(".ttt-playable")).first
    board.scroll_into_view_if_needed()
    labels = board.locator(".ttt-opponent option").all_text_contents()
    assert labels.count("your minimax") == 1 and labels.count("minimax") == 1, labels
    # Play the lesson's board against the lesson's own minimax: X in the centre, then corners.
    for _ in range(5):
        root = board.locator(".ttt-widget")
        if re.search(r"wins|draw", root.locator(".ttt-status").inner_text()):
            break
        legal = [int(s) for s in board.locator(".ttt-square.ttt-legal").evaluate_all("e => e.map(s => s.dataset.square)")]
        act(lesson, board, lambda: board.locator(f'.ttt-square[data-square="{choose("." * 9, legal)}"]').click())
    text = board.locator(".ttt-status").inner_text()
    assert re.search(r"It's a draw|O wins: the computer", text), text
    shoot(board, artifacts / "lesson-04-board-game-over.png")
    assert errors_shown(lesson) == []
