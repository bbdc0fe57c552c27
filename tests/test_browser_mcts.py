"""Monte Carlo tree search in the explorer, tested in a real browser, in both JupyterLab themes.

As in ``tests/test_browser.py`` (whose helpers this uses), JupyterLab runs on a free loopback
port with a notebook of its own, and Debian's Chromium is driven through Playwright. The
notebook holds two explorers: an MCTS from a 3x3 position (``SearchExplorer(..., algorithm=
"mcts")``) and a recorded MCTS from ultimate's opening, kept to its first nodes
(``record(..., max_nodes=...)``). The test steps through them with the Step button and the
slider, and after EVERY step reads what is on screen (each row's visits and mean result and
its UCB score, which rows are on the iteration's path, the current row, the sentence and the
counts) and compares it with the model: the data the kernel sent (``tree_data``) and the trace
itself at that step (``trace.upto(k)``: visits and totals), and now and then with what the
kernel's explorer says (its step, sentence and counts). Screenshots go to a temporary folder
(its path is printed); text contrast is checked from computed styles.
"""

from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path

import pytest

from test_browser import (  # noqa: F401  (browser is a fixture)
    browser,
    contrast_failures,
    errors_shown,
    in_viewport,
    inside,
    kernel_client,
    new_page,
    open_notebook,
    py,
    run_all_cells,
    running_lab,
    shoot,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "mcts.ipynb"
CELLS = [
    "from ttt.games import get_game\nfrom ttt.trace import record\nfrom ttt.widgets import SearchExplorer",
    'explorer = SearchExplorer("XO./.X./...", algorithm="mcts", iterations=24, seed=3)\nexplorer',
    'ultimate = get_game("ultimate")\n'
    'big = SearchExplorer(trace=record(ultimate, ultimate.initial(), algorithm="mcts", iterations=60, seed=1, max_nodes=25))\n'
    "big",
]
SHOTS = Path(tempfile.gettempdir()) / "ttt-mcts-browser"


@pytest.fixture(scope="module")
def shots() -> Path:
    """Return the folder for the screenshots, after printing its path."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    print(f"\nMCTS browser screenshots: {SHOTS}")
    return SHOTS


@pytest.fixture(scope="module", params=["light", "dark"])
def lab(request, tmp_path_factory: pytest.TempPathFactory):
    """Start JupyterLab in one theme on the MCTS notebook; return (base URL, token, root dir, theme, home)."""
    theme = request.param
    home = tmp_path_factory.mktemp(f"mcts-lab-{theme}")
    with running_lab(home, theme=theme, notebooks={NOTEBOOK: CELLS}) as (url, token, root):
        yield url, token, root, theme, home


@pytest.fixture(scope="module")
def notebook(browser, lab, shots):  # noqa: F811
    """Return (page, kernel client) with the MCTS notebook open and run, in this module's theme."""
    with new_page(browser) as page:
        open_notebook(page, lab, NOTEBOOK)
        run_all_cells(page)
        assert errors_shown(page) == []
        assert page.evaluate("document.body.dataset.jpThemeLight") == ("true" if lab[3] == "light" else "false")
        with kernel_client(lab, NOTEBOOK) as kernel:
            yield page, kernel


# What the explorer shows: the step, sentence, counts, legend, and each drawn row of the tree.
SHOWN = """root => ({
    step: Number(root.querySelector('.ttt-slider').value),
    sentence: root.querySelector('.ttt-sentence').textContent,
    counts: root.querySelector('.ttt-counts').textContent,
    legend: root.querySelector('.ttt-legend').hidden ? '' : root.querySelector('.ttt-legend').textContent,
    order: [...root.querySelectorAll('.ttt-tree > .ttt-node')].map(r => Number(r.dataset.node)),
    rows: [...root.querySelectorAll('.ttt-tree > .ttt-node')].filter(r => !r.hidden).map(r => ({
        id: Number(r.dataset.node),
        value: r.querySelector('.ttt-value').textContent,
        window: r.querySelector('.ttt-window').textContent,
        path: r.classList.contains('ttt-on-path'),
        current: r.classList.contains('ttt-current'),
        pv: r.classList.contains('ttt-pv'),
    })),
    more: [...root.querySelectorAll('.ttt-tree > .ttt-stub.more')].filter(r => !r.hidden).map(r => r.textContent),
})"""

# The model of explorer `name`, read once: what the kernel sent, and the trace's counts at every step.
MODEL = (
    '{{"tree": {w}.tree, "trace": [{{str(i): [n.visits, n.total] for i, n in {w}.trace.upto(k).nodes.items()}} '
    "for k in range(len({w}.trace) + 1)], \"length\": len({w}.trace), \"iterations\": {w}.trace.iterations}}"
)


def expected(model: dict, k: int) -> dict:
    """Return what the explorer must show at step `k`, from the kernel's `tree` (MCTS rows never fold)."""
    tree = model["tree"]
    steps = tree["steps"]
    step = steps[k - 1] if k else None
    rows = []
    for n in tree["nodes"]:
        if n["parent"] is not None and n["enter"] > k:
            continue
        texts = [t for t in n["texts"] if t[0] <= k] or n["texts"][:1]  # the root shows from step 0
        rows.append({
            "id": n["id"], "value": texts[-1][1], "window": texts[-1][2],
            "path": bool(step) and n["id"] in step.get("path", []),
            "current": bool(step) and n["id"] == step["node"],
            "pv": k == len(steps) and n["id"] in tree["pv"],
        })
    nodes, done = step["counts"] if step else (0, 0)
    return {
        "step": k,
        "sentence": f"Step {k} of {len(steps)}: {step['sentence'] if step else tree['start']}",
        "counts": f"Iterations done: {done} of {tree['iterations']}. Nodes in the tree: {nodes} of {tree['total']}.",
        "legend": tree["legend"],
        "rows": rows,
    }


def check(widget, kernel, name: str, model: dict, k: int, *, ask_kernel: bool) -> dict:
    """Assert the explorer on screen at step `k` is the model there: the kernel's data and the trace's counts."""
    screen = widget.evaluate(SHOWN)
    want = expected(model, k)
    assert screen["order"] == [n["id"] for n in model["tree"]["nodes"]]
    for key in ("step", "sentence", "counts", "legend"):
        assert screen[key] == want[key], f"step {k}: {key} on screen {screen[key]!r}, in the model {want[key]!r}"
    assert screen["rows"] == want["rows"], f"step {k}: rows on screen {screen['rows']}, in the model {want['rows']}"
    counts = model["trace"][k]  # the trace itself at step k: each drawn node's visits and mean
    for row in screen["rows"]:
        visits, total = counts[str(row["id"])] if k else (0, 0.0)  # before step 1 the root is shown, not yet reached
        found = re.fullmatch(r"N=(\d+)  (?:Q=([\d.]+)|new)", row["value"])
        assert found, row
        assert int(found[1]) == visits, f"step {k}: node {row['id']} shows {row['value']!r}, the trace has N={visits}"
        assert (found[2] is None) == (visits == 0)
        if visits:
            assert found[2] == f"{total / visits:.2f}", f"step {k}: node {row['id']} shows {row['value']!r}"
        if row["window"]:  # a UCB score: mean + exploration, the mean the row's own
            ucb, mean, bonus = (float(x) for x in re.fullmatch(r"UCB ([\d.]+) = ([\d.]+) \+ ([\d.]+)", row["window"]).groups())
            assert f"{mean:.2f}" == found[2] and abs(ucb - mean - bonus) <= 0.011
    shown_ids = {r["id"] for r in screen["rows"]}
    assert shown_ids == {int(i) for i in counts} & {n["id"] for n in model["tree"]["nodes"]} | {0}
    if ask_kernel:  # the browser tells the kernel its step (and never waits for an answer)
        deadline = time.monotonic() + 60
        while True:
            said = py(kernel, f'{{"step": {name}.step, "sentence": {name}.sentence(), "counts": {name}.tally()}}')
            if said["step"] == k:
                break
            assert time.monotonic() < deadline, f"the kernel never heard of step {k}"
            time.sleep(0.05)
        assert said["sentence"] == screen["sentence"] and said["counts"] == screen["counts"]
    return screen


def go_to(widget, k: int) -> None:
    widget.locator(".ttt-slider").evaluate("(s, k) => { s.value = k; s.dispatchEvent(new Event('input')); }", k)


def test_stepping_through_mcts_on_the_3x3_board_shows_the_trace_at_every_step(notebook, lab, shots):
    """Every step of 24 iterations: rows' N and Q, UCB scores, path, sentence and counts are the model's."""
    page, kernel = notebook
    theme = lab[3]
    widget = page.locator(".ttt-explorer").first
    widget.evaluate("e => e.scrollIntoView({block: 'start'})")
    model = py(kernel, MODEL.format(w="explorer"))
    assert model["iterations"] == 24 and model["tree"]["visits"] is True
    n = model["length"]
    check(widget, kernel, "explorer", model, 0, ask_kernel=True)
    assert widget.locator(".ttt-iterations").is_visible() and widget.locator(".ttt-ordered").is_hidden()
    step = widget.locator(".ttt-step")
    tree = widget.locator(".ttt-tree")
    kinds = [s["sentence"].split(": ")[1].split()[0] if s["sentence"].startswith("Iteration") else "" for s in model["tree"]["steps"]]
    shot = {"select": None, "expand": None, "rollout": None, "back": None}
    for k in range(1, n + 1):
        step.click()
        check(widget, kernel, "explorer", model, k, ask_kernel=k % 10 == 0 or k == n)
        inside(widget.locator(".ttt-node.ttt-current .ttt-node-box"), tree)
        in_viewport(page, widget.locator(".ttt-sentence"))
        kind = kinds[k - 1]
        if kind in shot and shot[kind] is None and k > 30:  # one of each phase, once the tree has grown
            shot[kind] = k
            shoot(widget, shots / f"{theme}-mcts-3x3-step-{k}-{kind}.png")
    assert all(shot.values()), f"not every phase was seen: {shot}"
    assert widget.locator(".ttt-step").is_disabled()
    shoot(widget, shots / f"{theme}-mcts-3x3-end.png")
    failures = contrast_failures(widget)
    assert failures == [], f"{theme} theme: text under 4.5:1 contrast: {failures}"
    for k in (n // 2, 3, n - 1):  # Back and slider jumps show the same as stepping did
        go_to(widget, k)
        check(widget, kernel, "explorer", model, k, ask_kernel=True)
    widget.locator(".ttt-back").click()
    check(widget, kernel, "explorer", model, n - 2, ask_kernel=True)
    # a UCB step shows its scores in a contrast that reads
    select = next(k for k in range(n // 2, n) if kinds[k - 1] == "select")
    go_to(widget, select)
    screen = check(widget, kernel, "explorer", model, select, ask_kernel=False)
    assert sum(bool(r["window"]) for r in screen["rows"]) >= 2
    failures = contrast_failures(widget)
    assert failures == [], f"{theme} theme: text under 4.5:1 contrast at a selection: {failures}"
    assert errors_shown(page) == []


def test_changing_the_iterations_records_mcts_again(notebook, lab, shots):
    """Type another number of iterations: the kernel records again and the page shows that trace."""
    page, kernel = notebook
    widget = page.locator(".ttt-explorer").first
    widget.evaluate("e => e.scrollIntoView({block: 'start'})")
    box = widget.locator(".ttt-iterations")
    box.fill("9")
    box.dispatch_event("change")
    deadline = time.monotonic() + 60
    while py(kernel, "explorer.trace.iterations") != 9:
        assert time.monotonic() < deadline, "the kernel did not record 9 iterations"
        time.sleep(0.1)
    model = py(kernel, MODEL.format(w="explorer"))
    page.wait_for_function("e => e.querySelector('.ttt-counts').textContent.includes('of 9.')", arg=widget.element_handle())
    check(widget, kernel, "explorer", model, 0, ask_kernel=True)
    go_to(widget, model["length"])
    check(widget, kernel, "explorer", model, model["length"], ask_kernel=True)
    shoot(widget, shots / f"{lab[3]}-mcts-3x3-nine-iterations.png")


def test_stepping_through_an_ultimate_recording_kept_to_its_first_nodes(notebook, lab, shots):
    """Ultimate's opening, 60 iterations kept to 25 nodes: every step's rows are the trace's, the rest counted."""
    page, kernel = notebook
    theme = lab[3]
    widget = page.locator(".ttt-explorer").nth(1)
    widget.evaluate("e => e.scrollIntoView({block: 'start'})")
    model = py(kernel, MODEL.format(w="big"))
    n = model["length"]
    assert len(model["tree"]["nodes"]) == 25 and model["tree"]["total"] == 61
    assert widget.locator(".ttt-choose").is_hidden()
    check(widget, kernel, "big", model, 0, ask_kernel=True)
    step = widget.locator(".ttt-step")
    for k in range(1, 41):
        step.click()
        check(widget, kernel, "big", model, k, ask_kernel=k % 10 == 0)
        inside(widget.locator(".ttt-node.ttt-current .ttt-node-box"), widget.locator(".ttt-tree"))
        if k == 40:
            shoot(widget, shots / f"{theme}-mcts-ultimate-step-{k}.png")
    for k in (n, n // 2, n - 3):
        go_to(widget, k)
        check(widget, kernel, "big", model, k, ask_kernel=True)
    go_to(widget, n)
    screen = check(widget, kernel, "big", model, n, ask_kernel=True)
    assert screen["more"] and sum(int(t.split()[1]) for t in screen["more"]) == 61 - 25
    assert "Iterations done: 60 of 60" in screen["counts"]
    shoot(widget, shots / f"{theme}-mcts-ultimate-end.png")
    failures = contrast_failures(widget)
    assert failures == [], f"{theme} theme: text under 4.5:1 contrast: {failures}"
    assert errors_shown(page) == []
