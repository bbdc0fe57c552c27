"""benchmarks/peers.py runs end to end: --quick prints its tables and finds no rule mismatches.

It needs OpenSpiel's pyspiel, the benchmark extra (``pip install -e '.[peers]'``, which
``make bench`` installs and ``make test`` does not): without it this test is skipped.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ttt.engine import compiled

pytest.importorskip("pyspiel")

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_quick_run_prints_the_tables_and_no_mismatch(tmp_path):
    log = tmp_path / "games.jsonl"
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "peers.py"), "--quick", "--jobs", "1", "--log", str(log)],
        capture_output=True, text=True, timeout=900, cwd=ROOT,
    )
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
    assert bool(re.search(r"ttt engine, compiled(\s+[\d,]+){4}\n", out)) == compiled.AVAILABLE, out
    assert bool(re.search(r"ttt compiled, estimates(\s+[\d,]+){4}\n", out)) == compiled.AVAILABLE, out
    assert out.count("1-minute load average") == 2
    assert len(log.read_text().splitlines()) == 8  # every game kept as it ended
    report = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "peers.py"), "--report", str(log)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert report.returncode == 0, report.stdout + report.stderr
    matches = out[out.index("Matches:"):out.index("Simulations per CPU second")]
    rows = lambda text: [line for line in text.splitlines() if line.startswith(("pairing", "ttt "))]
    assert rows(report.stdout) == rows(matches) and len(rows(matches)) == 3  # the same table, from the kept games
    for name in ("default", "mcts"):  # and each pairing's row was printed as soon as it finished
        assert re.search(rf"finished: ttt {name} \({engine}\) vs MCTSBot\s+0\.1\s+4\s", out), out
