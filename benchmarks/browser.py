"""How quickly the widgets answer a click in Chromium, against the ipywidgets versions they replace.

Starts JupyterLab (as ``tests/test_browser.py`` does) with two notebooks: one shows this
package's widgets, the other the widgets of the last commit before they were drawn by the front
end (``git archive`` of that commit's ``ttt/``, put first on the kernel's path). In each, it
times in the page, with ``performance.now()``:

- explorer Step click -> the next painted frame after the sentence says the new step
  (the lesson 5 default: alpha-beta from XO./.X./..., 270 nodes);
- the same step asked from the kernel (``explorer.forward()``): a kernel round trip, for scale;
- board click -> the next painted frame after the clicked square shows the person's mark.

"Next painted frame" is a ``requestAnimationFrame`` callback followed by a ``setTimeout(0)``:
the frame that shows the change has been painted by then. Prints a table (median and max, ms)
and the ratios; asserts nothing. Usage: ``python benchmarks/browser.py [--steps 40] [--clicks 12]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from test_browser import (  # noqa: E402 - the test's own way to run JupyterLab and Chromium
    CHROMIUM,
    CHROMIUM_ARGS,
    kernel_client,
    new_page,
    open_notebook,
    py,
    run_all_cells,
    running_lab,
)

POSITION = "XO./.X./..."
BASELINE = "d252e67"  # the last commit with the ipywidgets boards and explorer
CELLS = [
    'board = PlayableBoard("minimax", side="X")\nboard',
    f'explorer = SearchExplorer("{POSITION}", algorithm="alphabeta")\nexplorer',
]
NEW = ["from ttt.widgets import PlayableBoard, SearchExplorer"] + CELLS


def old_cells(copy: Path) -> list[str]:
    return [f"import sys\nsys.path.insert(0, {str(copy)!r})\nfrom ttt.widgets import PlayableBoard, SearchExplorer\n"
            "import ttt\nassert ttt.__file__.startswith(sys.path[0]), ttt.__file__"] + CELLS


GIVE_UP_MS = 300_000  # a click the page never answers is an error, not a benchmark that never ends
# Click `selector`, wait until `done` holds, then for the next painted frame; return the ms taken.
TIMED_CLICK = """async ([selector, done, arg, giveUp]) => {
    const el = document.querySelector(selector);
    const check = new Function('arg', done);
    const t0 = performance.now();
    el.click();
    await new Promise((resolve, reject) => { const tick = () => check(arg) ? resolve()
        : performance.now() - t0 > giveUp ? reject(new Error(`no answer to a click on ${selector}: ${done}`))
        : requestAnimationFrame(tick); tick(); });
    await new Promise(resolve => requestAnimationFrame(() => setTimeout(resolve, 0)));
    return performance.now() - t0;
}"""
# Wait until `done` holds, then for the next painted frame; return the ms since `t0` (page time).
TIMED_WAIT = """async ([done, arg, t0, giveUp]) => {
    const check = new Function('arg', done);
    await new Promise((resolve, reject) => { const tick = () => check(arg) ? resolve()
        : performance.now() - t0 > giveUp ? reject(new Error(`the page never showed it: ${done}`))
        : requestAnimationFrame(tick); tick(); });
    await new Promise(resolve => requestAnimationFrame(() => setTimeout(resolve, 0)));
    return performance.now() - t0;
}"""
SENTENCE_AT = "const s = document.querySelector('.ttt-explorer .ttt-sentence'); return s && s.textContent.startsWith(`Step ${arg} of`);"
MARK_AT = "const s = document.querySelectorAll('.ttt-playable .ttt-square')[arg]; return s.textContent.trim() === 'X';"


def explorer_steps(page, steps: int) -> list[float]:
    """Return the ms of `steps` Step clicks, each to its painted frame."""
    page.locator(".ttt-explorer").first.scroll_into_view_if_needed()
    page.locator(".ttt-explorer .ttt-sentence").first.wait_for()
    return [page.evaluate(TIMED_CLICK, [".ttt-explorer .ttt-step", SENTENCE_AT, k, GIVE_UP_MS]) for k in range(1, steps + 1)]


def kernel_steps(page, kernel, steps: int, start: int) -> list[float]:
    """Return the ms from asking the kernel for the next step to its painted frame, `steps` times,
    once the page's `start` Step clicks have reached the kernel (they come as messages)."""
    deadline = time.monotonic() + GIVE_UP_MS / 1000
    while py(kernel, "explorer.k") != start:  # both versions name the step shown `k`
        if time.monotonic() > deadline:
            raise SystemExit(f"the kernel's explorer is at step {py(kernel, 'explorer.k')}, the page's at {start}")
        time.sleep(0.05)
    found = []
    for k in range(start + 1, start + steps + 1):
        t0 = page.evaluate("performance.now()")
        kernel.execute("explorer.forward() if hasattr(explorer, 'forward') else explorer.step()", store_history=False)
        found.append(page.evaluate(TIMED_WAIT, [SENTENCE_AT, k, t0, GIVE_UP_MS]))
    return found


def board_clicks(page, kernel, clicks: int) -> list[float]:
    """Return the ms from a click on a free square to the person's X painted on it, `clicks` times."""
    found = []
    while len(found) < clicks:
        state = py(kernel, "board.state")
        if "." not in state or py(kernel, "board.game.is_terminal(board.state)"):
            kernel.execute_interactive("board.new_game()", store_history=False)
            time.sleep(0.3)
            continue
        square = next(s for s in (4, 0, 2, 6, 8, 1, 3, 5, 7) if state[s] == ".")
        found.append(page.evaluate(TIMED_CLICK, [f'.ttt-playable .ttt-square:nth-of-type({square + 1})', MARK_AT, square, GIVE_UP_MS]))
        deadline = time.monotonic() + GIVE_UP_MS / 1000  # the computer's reply, before the next click
        while (py(kernel, "board.state").count("O") == state.count("O")
               and not py(kernel, "board.game.is_terminal(board.state)")):
            if time.monotonic() > deadline:
                raise SystemExit(f"the computer did not answer the click on square {square} in {GIVE_UP_MS // 1000} s")
            time.sleep(0.05)
        time.sleep(0.3)
    return found


def row(name: str, times: list[float]) -> tuple[str, float, float]:
    return name, statistics.median(times), max(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40, help="explorer steps to time (default 40)")
    parser.add_argument("--clicks", type=int, default=12, help="board clicks to time (default 12)")
    parser.add_argument("--baseline", default=BASELINE, help="the commit whose ttt/widgets to compare with")
    args = parser.parse_args()
    if CHROMIUM is None:
        print("Chromium is not installed: nothing measured (Debian: apt-get install chromium)")
        return 0
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        copy = home / "baseline"
        copy.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.baseline, "ttt"], capture_output=True, check=True)
        (home / "baseline.tar").write_bytes(archive.stdout)
        with tarfile.open(home / "baseline.tar") as tar:
            tar.extractall(copy)
        notebooks = {"new.ipynb": NEW, "old.ipynb": old_cells(copy)}
        lab_home = home / "lab"
        lab_home.mkdir()
        results = {}
        with running_lab(lab_home, notebooks=notebooks) as (url, token, root), sync_playwright() as playwright:
            lab = (url, token, root, "light", lab_home)
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for which in ("new", "old"):
                with new_page(browser) as page:
                    print(f"measuring {which} widgets ...", file=sys.stderr, flush=True)
                    open_notebook(page, lab, f"{which}.ipynb")
                    run_all_cells(page)
                    page.locator(".ttt-explorer .ttt-sentence").first.wait_for()
                    with kernel_client(lab, f"{which}.ipynb") as kernel:
                        assert py(kernel, "explorer.trace.node_count") == 270
                        results[which] = {
                            "step": explorer_steps(page, args.steps),
                            "kernel step": kernel_steps(page, kernel, 10, args.steps),
                            "board": board_clicks(page, kernel, args.clicks),
                        }
            browser.close()
    print(f"Chromium, JupyterLab, explorer from {POSITION} (alpha-beta, 270 nodes); ms, median / max")
    print(f"{'measure':<44}{'this package':>18}{'ipywidgets ' + args.baseline:>22}{'ratio (median)':>16}")
    labels = {
        "step": "explorer Step click -> painted",
        "kernel step": "explorer step asked from the kernel -> painted",
        "board": "board click -> own mark painted",
    }
    for key, name in labels.items():
        new, old = results["new"][key], results["old"][key]
        n_med, o_med = statistics.median(new), statistics.median(old)
        print(f"{name:<44}{n_med:>9.1f} / {max(new):>6.1f}{o_med:>13.1f} / {max(old):>6.1f}{o_med / n_med:>15.1f}x")
    print(f"({len(results['new']['step'])} steps, 10 kernel steps, {len(results['new']['board'])} board clicks each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
