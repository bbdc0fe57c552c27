"""The first move against `default` on the ultimate board, in a real browser: the board says why
the computer waits (its compiled search compiles, once per machine), takes the student's move
meanwhile and replies when ready; after a kernel restart the search loads from numba's cache.

As in ``tests/test_browser.py`` (whose fixtures and helpers this uses), JupyterLab runs on a free
loopback port and Debian's Chromium is driven through Playwright. The kernel's numba cache is a
new temporary folder (``NUMBA_CACHE_DIR``), so the first kernel really compiles; whether the
second compiled again is asked of the kernel (numba's cache hits and misses), never read from a
clock. Screenshots go to ``tests/artifacts/browser/`` (its path is printed).
"""

from __future__ import annotations

import pytest

from test_browser import (  # noqa: F401  (artifacts and browser are fixtures)
    artifacts,
    browser,
    check_board,
    errors_shown,
    kernel_client,
    new_page,
    open_notebook,
    py,
    run_all_cells,
    running_lab,
    settled,
    shoot,
    shown,
    wait_kernel_idle,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "first-move.ipynb"
CELLS = ["from ttt.widgets import BigBoard", 'big = BigBoard("ultimate", seed=1)\nbig']
# What the kernel's compiled search has done: numba's cache hits and misses over its functions,
# and where its cache is.
CACHE = (
    '(lambda c, n: {"hits": sum(sum(getattr(c, f).stats.cache_hits.values()) for f in c._KERNELS), '
    '"misses": sum(sum(getattr(c, f).stats.cache_misses.values()) for f in c._KERNELS), '
    '"folder": n.config.CACHE_DIR})(__import__("ttt.engine.compiled").engine.compiled, __import__("numba"))'
)
COMPILING = 600_000  # ms: compiling takes about 9 CPU seconds, and minutes of a busy machine's time


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory):
    """Start JupyterLab (light theme) on the notebook, its kernels caching numba's code in a new
    folder; return (base URL, token, root dir, theme, home), the folder set as lab.cache."""
    home = tmp_path_factory.mktemp("first-move-lab")
    cache = home / "numba-cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NUMBA_CACHE_DIR", str(cache))  # the server's environment, which its kernels inherit
        with running_lab(home, theme="light", notebooks={NOTEBOOK: CELLS}) as (url, token, root):
            patch.delenv("NUMBA_CACHE_DIR")
            yield url, token, root, "light", home


def board(page):
    widget = page.locator(".jp-OutputArea-output").filter(has=page.locator(".ttt-bigboard")).first
    widget.scroll_into_view_if_needed()
    return widget


def test_the_first_move_says_why_it_waits_and_a_restarted_kernel_does_not_compile_again(browser, lab, artifacts):  # noqa: F811
    cache = lab[4] / "numba-cache"
    assert not cache.exists()
    with new_page(browser) as page:
        open_notebook(page, lab, NOTEBOOK)
        run_all_cells(page)  # the kernel is idle at once: the search compiles in a thread
        assert errors_shown(page) == []
        widget = board(page)
        waiting = "Preparing default's compiled search (once per machine: up to a minute, then cached)…"
        screen = shown(widget)
        assert screen["status"] == f"New game. {waiting} Your move (X): any open board (framed).", screen["status"]
        assert screen["busy"] == "false" and len(screen["legal"]) == 81, "the student may move while it prepares"
        with kernel_client(lab, NOTEBOOK) as kernel:
            # the kernel answers while the search compiles: it is not held up
            assert py(kernel, "big.status") == screen["status"]
            assert waiting in shown(widget)["status"], "the search compiled before the test could look: see its time"
            shoot(widget, artifacts / "first-move-preparing.png")

            # the student's first move: the X shows, the reply waits for the search, saying so
            before = shown(widget)["stamp"]
            widget.locator('.ttt-square[data-square="40"]').click()
            root = widget.locator(".ttt-widget").first.element_handle()
            page.wait_for_function(
                "([root, after]) => Number(root.dataset.stamp) > after && root.dataset.busy === 'true'",
                arg=[root, before], timeout=60_000)
            screen = shown(widget)
            waiting_stamp = screen["stamp"]
            assert screen["squares"][40] == "X" and screen["squares"].count("O") == 0
            assert screen["status"] == f"{waiting} The computer (default) moves as soon as it is ready."
            shoot(widget, artifacts / "first-move-waiting.png")
            widget.locator('.ttt-square[data-square="41"]').click()  # refused on screen, saying why
            refused = shown(widget)
            assert refused["squares"][41] == "." and refused["status"].startswith(waiting), refused["status"]
            assert refused["status"].endswith("Your click was not played: wait for its move.")
            shoot(widget, artifacts / "first-move-click-refused.png")

            settled(page, widget, waiting_stamp, timeout=COMPILING)
            model = check_board(widget, kernel, "big")
            assert model["squares"][40] == "X" and model["squares"].count("O") == 1
            assert "The computer (default) took board 4" in model["status"] and "Preparing" not in model["status"]
            shoot(widget, artifacts / "first-move-replied.png")
            first = py(kernel, CACHE)
        assert first["folder"] == str(cache) and first["misses"] > 0 and first["hits"] == 0, first
        assert list(cache.rglob("compiled._search-*.nbc")), f"nothing cached in {cache}"

        # a fresh kernel, as a student restarts one: the search loads from the cache
        old = widget.locator(".ttt-widget").first.element_handle()
        page.get_by_role("menuitem", name="Kernel", exact=True).click()
        page.get_by_role("menuitem", name="Restart Kernel and Run All Cells…", exact=True).click()
        page.get_by_role("button", name="Confirm Kernel Restart").click()
        page.wait_for_function("old => !old.isConnected", arg=old, timeout=60_000)  # the cells run again
        wait_kernel_idle(page)
        assert errors_shown(page) == []
        widget = board(page)
        page.wait_for_function(
            "root => root.querySelector('.ttt-status').textContent.endsWith('Your move (X): any open board (framed).')"
            " && !root.querySelector('.ttt-status').textContent.includes('Preparing')",
            arg=widget.locator(".ttt-widget").first.element_handle(), timeout=COMPILING)
        before = shown(widget)["stamp"]
        widget.locator('.ttt-square[data-square="40"]').click()
        settled(page, widget, before, timeout=COMPILING)
        with kernel_client(lab, NOTEBOOK) as kernel:
            model = check_board(widget, kernel, "big")
            assert model["squares"].count("X") == 1 and model["squares"].count("O") == 1
            second = py(kernel, CACHE)
        shoot(widget, artifacts / "first-move-after-restart.png")
        assert second["folder"] == str(cache) and second["misses"] == 0 and second["hits"] > 0, \
            f"the restarted kernel compiled the search again: {second}"
