"""Every benchmark script runs to the end on a tiny setting, as a user runs it, and prints its table.

Each test runs ``benchmarks/NAME.py`` in a subprocess with small arguments and checks what it
prints: the table's header, its rows, and the baseline beside ttt's numbers with the ratio. A
script that crashes fails its test (``make bench`` runs them all, and stops at the first that
fails). They assert nothing about speed. ``peers.py`` is tested in ``test_peers_benchmark.py``, ``lite.py`` in ``test_lite.py``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NUMBER = r"[\d,]+(?:\.\d+)?"

pytestmark = pytest.mark.slow


def run(script: str, *args: str, timeout: float = 900) -> str:
    """Runs ``benchmarks/SCRIPT`` with `args`; returns what it printed, failing with its output if it failed."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, f"{script} {' '.join(args)} exited with {done.returncode}:\n{done.stdout}\n{done.stderr[-5000:]}"
    return done.stdout


def run_in_chromium(script: str, *args: str) -> str:
    """`run`, for a script that measures in Chromium: it must have measured (Chromium is there)."""
    out = run(script, *args)
    assert "Chromium is not installed" not in out, f"{script} needs Chromium (make chromium): {out}"
    return out


def test_first_move_prints_ttt_beside_the_naive_solution():
    out = run("first_move.py", "--repeat", "1")
    assert "naive CS50" in out and "ratio" in out, out
    assert re.search(rf"search, first call\s+{NUMBER} ms\s+{NUMBER} ms\s+{NUMBER}x\n", out), out
    assert re.search(rf"minimax\s+549,946\s+0\s+1x\n", out), out  # every node of the full game tree
    assert re.search(rf"alpha-beta, ordered .*\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}x\n", out), out


def test_tree_prints_a_row_for_each_position_and_order_with_the_baseline():
    out = run("tree.py")
    assert re.search(r"empty\s+order\s+nodes\s+cuts\s+events\s+record\s+DOT\s+SVG\s+explorer\s+KB sent\s+dot/step", out), out
    rows = re.findall(rf"^\s+([567])\s+(row|best)(?:\s+{NUMBER}){{9}}$", out, re.M)
    assert sorted(rows) == sorted((e, o) for e in "567" for o in ("row", "best")), out


def test_bigboards_prints_speeds_ratios_and_a_match():
    out = run("bigboards.py", "--game", "nine-board", "--games", "2", "--seconds", "0.05")
    assert re.search(rf"naive \(the CSC 242 write-up.*\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\n", out), out
    assert re.search(r"speed-up of the CSC 242 write-up's heuristic over the naive search: \d+x \(same value: True\)", out), out
    assert re.search(rf"\nopening(\s+{NUMBER}){{2}}\s+{NUMBER}x\s+\d+\s+\d+\n", out), out  # teaching beside the engine
    assert re.search(rf"\nopening\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}x\s+(?:{NUMBER}\s+{NUMBER}x|-)", out), out  # MCTS
    assert re.search(r"nine-board: 2 games, default at 0.05 s per move", out), out
    assert re.search(r"default\s+\d+\s+\d+\s+\d+\nline-count\s+\d+\s+\d+\s+\d+\n", out), out


def test_grading_prints_ours_beside_stock_nbgrader_for_one_lesson_and_one_student():
    out = run("grading.py", "-n", "1", "--lesson", "01-boards-and-moves", "--idle", "100", "--repeat", "1", timeout=1800)
    head = r"ours CPU s\s+baseline CPU s\s+ratio\s+ours wall s\s+baseline wall s"
    values = rf"(?:\s+{NUMBER}){{2}}\s+{NUMBER}x(?:\s+{NUMBER}){{2}}(?:\n|$)"
    assert re.search(r"load average at the start: [\d.]+ [\d.]+ [\d.]+", out), out
    assert re.search(r"load average at the end: [\d.]+ [\d.]+ [\d.]+", out), out
    tables = out.split("\n\n")  # each table ends with a blank line
    check, autograde, idle = (next(t for t in tables if t.lstrip().startswith(f"{k}.")) for k in (1, 2, 3))
    assert "ttt-grader check" in check and "plain kernel" in check
    assert re.search(rf"lesson\s+{head}\n01-boards-and-moves{values}  its first check on a machine{values}", check), check
    assert "ttt-grader autograde" in autograde and "stock `nbgrader autograde`" in autograde
    assert re.search(rf"lesson\s+{head}\n01-boards-and-moves{values}same scores in both gradebooks", autograde), autograde
    assert re.search(rf"{head}\n100 idle processes{values}", idle), idle


@pytest.mark.browser
def test_browser_prints_the_widgets_beside_the_ipywidgets_ones():
    out = run_in_chromium("browser.py", "--steps", "3", "--clicks", "2")
    assert re.search(r"measure\s+this package\s+ipywidgets \w+\s+ratio \(median\)", out), out
    for name in ("explorer Step click -> painted", "explorer step asked from the kernel -> painted",
                 "board click -> own mark painted"):
        assert re.search(rf"{re.escape(name)}\s+{NUMBER} /\s+{NUMBER}\s+{NUMBER} /\s+{NUMBER}\s+{NUMBER}x\n", out), out


@pytest.mark.browser
def test_thinking_prints_ticked_beside_unticked():
    out = run_in_chromium("thinking.py", "--boards", "pkg", "--repeat", "1")
    assert re.search(r"opponent\s+from\s+unticked\s+ticked\s+ratio\s+sent\s+drawn/searched", out), out
    for where in ("empty", "mid"):
        assert re.search(rf"the package's minimax\s+{where}\s+{NUMBER} /\s+{NUMBER}\s+{NUMBER} /\s+{NUMBER}\s+"
                         rf"{NUMBER}x\s+{NUMBER}KB\s+\d+ / \d+\n", out), out
    assert "your minimax" not in out  # only the boards asked for
