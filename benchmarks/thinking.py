"""How long the computer's reply takes in Chromium with "Show the computer's thinking" ticked, and without.

Starts JupyterLab (as ``tests/test_browser.py`` does) on a notebook that defines a student's plain
minimax (the tests' naive CS50 solution: no pruning, no memo, ``result`` deep-copies) in
``__main__``, and two boards: one against that function, one against the package's minimax. For
each, from the empty board (the person switches to O: the computer opens) and mid-game (the
person plays X in a corner: the computer replies from eight empty squares), it times in the
page, with ``performance.now()``, the click to the next painted frame after the board shows the
computer's move, with the box unticked and ticked, side by side, and says how much the panel
sent (the ``thinking_tree`` message, as JSON) and how many nodes it drew of how many searched.
``--baseline COMMIT`` measures the same board of that commit's ``ttt/`` (put first on the
kernel's path) mid-game too, for the before / after table; its empty-board ticked case is not
run (it took minutes and gigabytes). Asserts nothing.

    python benchmarks/thinking.py [--repeat 3] [--baseline e7ff855] [--boards own pkg]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tarfile
import tempfile
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

STUDENT = (REPO / "tests" / "data" / "naive_tictactoe.py").read_text()
CELLS = [
    STUDENT,
    "from ttt.widgets import PlayableBoard\nimport json",
    'own = PlayableBoard(minimax, side="X")\nown',
    'pkg = PlayableBoard("minimax", side="X")\npkg',
]
BOARDS = {"own": "your minimax (plain, in __main__)", "pkg": "the package's minimax"}

# Wait until `check()` holds (10 minutes at most: then say what the board shows), or until a control is enabled.
HELPERS = """
const until = (check, root) => new Promise((resolve, reject) => {
    const end = performance.now() + 600000;
    const tick = () => check() ? resolve() : performance.now() > end
        ? reject(new Error('board stuck: ' + root.dataset.busy + ' ' + root.querySelector('.ttt-status').textContent))
        : requestAnimationFrame(tick);
    tick();
});
const enabled = el => until(() => !el.disabled, el.closest('.ttt-widget'));
"""
# Click `selector` inside board `index`; wait until the board shows the computer's move and is
# idle, then for the next painted frame; return the ms taken.
TIMED_REPLY = """async ([index, selector]) => {""" + HELPERS + """
    const root = document.querySelectorAll('.ttt-playable')[index];
    const stamp = Number(root.dataset.stamp);
    await enabled(root.querySelector(selector));
    const t0 = performance.now();
    root.querySelector(selector).click();
    const done = () => root.dataset.busy === 'false' && Number(root.dataset.stamp) > stamp
        && root.querySelector('.ttt-status').textContent.includes(' took ');
    await until(done, root);
    await new Promise(resolve => requestAnimationFrame(() => setTimeout(resolve, 0)));
    return performance.now() - t0;
}"""
# Click `selector` inside board `index` and wait until the kernel has redrawn it (no reply expected).
CLICK_SETTLED = """async ([index, selector]) => {""" + HELPERS + """
    const root = document.querySelectorAll('.ttt-playable')[index];
    const stamp = Number(root.dataset.stamp);
    await enabled(root.querySelector(selector));
    root.querySelector(selector).click();
    await until(() => root.dataset.busy === 'false' && Number(root.dataset.stamp) > stamp, root);
}"""


def reply_ms(page, index: int, where: str) -> float:
    """Return the ms of one computer reply on board `index`: from the empty board or mid-game."""
    if where == "empty":  # X, then O: a new game each time, and the computer opens
        side = page.evaluate("i => document.querySelectorAll('.ttt-playable')[i].querySelector('[aria-pressed=\"true\"]').dataset.side", index)
        if side == "O":
            page.evaluate(CLICK_SETTLED, [index, '.ttt-side [data-side="X"]'])
        return page.evaluate(TIMED_REPLY, [index, '.ttt-side [data-side="O"]'])
    page.evaluate(CLICK_SETTLED, [index, ".ttt-new"])
    return page.evaluate(TIMED_REPLY, [index, '.ttt-square[data-square="0"]'])


def measure(page, kernel, name: str, index: int, repeat: int, *, skip_empty_ticked: bool = False) -> dict:
    """Return {(where, ticked): (times in ms, bytes sent, nodes drawn, nodes searched)} for board `name`."""
    found = {}
    for where in ("empty", "mid"):
        for ticked in (False, True):
            if ticked and where == "empty" and skip_empty_ticked:
                continue
            print(f"  {name}: {where}, {'ticked' if ticked else 'unticked'} ...", file=sys.stderr, flush=True)
            if where == "mid" and py(kernel, f"{name}.side") == "O":
                page.evaluate(CLICK_SETTLED, [index, '.ttt-side [data-side="X"]'])
            kernel.execute_interactive(f"{name}.thinking = {ticked}", store_history=False)
            # the page has drawn that change before the next click (else a click's "before" is the old redraw)
            page.wait_for_function("([i, stamp]) => Number(document.querySelectorAll('.ttt-playable')[i].dataset.stamp) === stamp",
                                   arg=[index, py(kernel, f"{name}.stamp")])
            times = [reply_ms(page, index, where) for _ in range(repeat)]
            sent = py(kernel, f"len(json.dumps({name}.thinking_tree))")
            drawn = py(kernel, f"len({name}.thinking_tree.get('nodes', []))")
            searched = py(kernel, f"{name}.thinking_tree.get('total', 0)")
            found[where, ticked] = (times, sent, drawn, searched)
    kernel.execute_interactive(f"{name}.thinking = False", store_history=False)
    return found


def run(notebook_cells: list[str], repeat: int, *, boards: list[str], skip_empty_ticked: bool = False) -> dict:
    """Start JupyterLab on the cells, measure the boards; return {board: measure(...)}."""
    from playwright.sync_api import sync_playwright

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        with running_lab(home, notebooks={"thinking.ipynb": notebook_cells}) as (url, token, root), \
                sync_playwright() as playwright:
            lab = (url, token, root, "light", home)
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            with new_page(browser) as page:
                page.set_default_timeout(900_000)
                open_notebook(page, lab, "thinking.ipynb")
                run_all_cells(page)
                page.locator(".ttt-playable").nth(1).wait_for()
                with kernel_client(lab, "thinking.ipynb") as kernel:
                    for index, name in enumerate(("own", "pkg")):
                        if name in boards:
                            results[name] = measure(page, kernel, name, index, repeat, skip_empty_ticked=skip_empty_ticked)
            browser.close()
    return results


def baseline_cells(commit: str, copy: Path) -> list[str]:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit, "ttt"], capture_output=True, check=True)
    (copy.parent / "baseline.tar").write_bytes(archive.stdout)
    with tarfile.open(copy.parent / "baseline.tar") as tar:
        tar.extractall(copy)
    return [f"import sys\nsys.path.insert(0, {str(copy)!r})\nimport ttt\nassert ttt.__file__.startswith(sys.path[0])"] + CELLS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="replies timed in each case (default 3)")
    parser.add_argument("--baseline", default=None, help="a commit whose ttt/ to measure too (mid-game ticked and both unticked)")
    parser.add_argument("--boards", nargs="+", choices=list(BOARDS), default=list(BOARDS),
                        help="the boards to measure: own (a student's plain minimax: its reply from the empty board "
                             "takes seconds), pkg (the package's minimax) (default: both)")
    args = parser.parse_args()
    if CHROMIUM is None:
        print("Chromium is not installed: nothing measured (Debian: apt-get install chromium)")
        return 0
    print("measuring this package ...", file=sys.stderr, flush=True)
    new = run(CELLS, args.repeat, boards=args.boards)
    old = {}
    if args.baseline:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "baseline"
            copy.mkdir()
            print(f"measuring {args.baseline} ...", file=sys.stderr, flush=True)
            old = run(baseline_cells(args.baseline, copy), args.repeat, boards=args.boards, skip_empty_ticked=True)
    print(f"Chromium, JupyterLab: the computer's reply, click -> painted, ms median / max ({args.repeat} each)")
    head = f"{'opponent':<36}{'from':<7}{'unticked':>17}{'ticked':>17}{'ratio':>7}{'sent':>11}{'drawn/searched':>18}"
    for label, results in [("this package", new)] + ([(f"baseline {args.baseline}", old)] if old else []):
        print(f"\n{label}\n{head}")
        for name, found in results.items():
            for where in ("empty", "mid"):
                off = found.get((where, False))
                on = found.get((where, True))
                if off is None:
                    continue
                off_med = statistics.median(off[0])
                line = f"{BOARDS[name]:<36}{where:<7}{off_med:>9.0f} / {max(off[0]):>5.0f}"
                if on is None:
                    line += f"{'not run':>17}"
                else:
                    on_med = statistics.median(on[0])
                    line += (f"{on_med:>9.0f} / {max(on[0]):>5.0f}{on_med / off_med:>6.2f}x"
                             f"{on[1] / 1000:>9.1f}KB{on[2]:>9} / {on[3]}")
                print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
