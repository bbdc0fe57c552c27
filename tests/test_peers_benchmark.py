"""benchmarks/peers.py runs end to end: --quick prints its tables and finds no rule mismatches.

The comparison needs OpenSpiel's pyspiel, the benchmark extra (``pip install -e '.[peers]'``,
which ``make bench`` installs and ``make test`` does not). ``--no-peers``, ttt's own searches side
by side, needs no OpenSpiel and runs everywhere. Where pyspiel is missing, the full run must
say how to install it (and exit with an error) rather than crash; where it is installed, the
full ``--quick`` run is checked.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ttt.engine import compiled

ROOT = Path(__file__).resolve().parents[1]
SEARCHES = ["ttt teaching search", "ttt engine, plain Python"] + (
    ["ttt engine, compiled", "ttt compiled, estimates"] if compiled.AVAILABLE else [])

pytestmark = pytest.mark.slow


def has_pyspiel() -> bool:
    return importlib.util.find_spec("pyspiel") is not None


def peers(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "peers.py"), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def test_without_openspiel_it_prints_ttts_own_searches_side_by_side():
    run = peers("--no-peers", "--rate-seconds", "0.1")
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert re.search(r"MCTS\s+opening\s+after 12\s+after 24\s+after 36\n", out), out
    for label in SEARCHES:
        assert re.search(rf"{re.escape(label)}(\s+[\d,]+){{4}}\n", out), out
    ratios = out[out.index("Ratio to ttt teaching search"):]
    for label in SEARCHES[1:]:
        assert re.search(rf"{re.escape(label)}(\s+[\d.]+x){{4}}\n", ratios), ratios
    assert "OpenSpiel" not in out and "Matches:" not in out
    assert out.count("1-minute load average") == 2


def test_quick_run_prints_the_tables_and_no_mismatch(tmp_path):
    log = tmp_path / "games.jsonl"
    run = peers("--quick", "--jobs", "1", "--log", str(log))
    if not has_pyspiel():  # make test's environment: the comparison says how to get OpenSpiel
        assert run.returncode != 0 and "pip install -e '.[peers]'" in run.stderr, run.stdout + run.stderr
        assert "Traceback" not in run.stderr, run.stderr
        return
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert re.search(r"games 200 .*\n\s+mismatches 0\n", out), out
    assert "MISMATCH" not in out
    engine = "compiled" if compiled.AVAILABLE else "plain"
    assert f"ttt's engine: {engine}" in out
    for name in ("default", "mcts"):
        assert re.search(rf"ttt {name} \({engine}\) vs MCTSBot\s+0\.1\s+4\s", out), out  # the pairing at 0.1 s, 4 games
    assert "Simulations per CPU second" in out
    assert re.search(r"OpenSpiel MCTSBot \(C\+\+\)(\s+[\d,]+){4}\n", out), out
    assert re.search(r"ttt teaching search(\s+[\d,]+){4}\n", out), out
    assert re.search(r"ttt engine, plain Python(\s+[\d,]+){4}\n", out), out
    assert re.search(r"Ratio to OpenSpiel MCTSBot \(C\+\+\)\nttt teaching search(\s+[\d.]+x){4}\n", out), out
    assert bool(re.search(r"ttt engine, compiled(\s+[\d,]+){4}\n", out)) == compiled.AVAILABLE, out
    assert bool(re.search(r"ttt compiled, estimates(\s+[\d,]+){4}\n", out)) == compiled.AVAILABLE, out
    assert out.count("1-minute load average") == 2
    assert len(log.read_text().splitlines()) == 8  # every game kept as it ended
    report = peers("--report", str(log), timeout=300)
    assert report.returncode == 0, report.stdout + report.stderr
    matches = out[out.index("Matches:"):out.index("Simulations per CPU second")]
    rows = lambda text: [line for line in text.splitlines() if line.startswith(("pairing", "ttt "))]
    assert rows(report.stdout) == rows(matches) and len(rows(matches)) == 3  # the same table, from the kept games
    for name in ("default", "mcts"):  # and each pairing's row was printed as soon as it finished
        assert re.search(rf"finished: ttt {name} \({engine}\) vs MCTSBot\s+0\.1\s+4\s", out), out
