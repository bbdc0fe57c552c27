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

pytest.importorskip("pyspiel")

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_quick_run_prints_the_tables_and_no_mismatch():
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "peers.py"), "--quick", "--jobs", "1"],
        capture_output=True, text=True, timeout=900, cwd=ROOT,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert re.search(r"games 200 .*\n\s+mismatches 0\n", out), out
    assert "MISMATCH" not in out
    for row in ("ttt default vs MCTSBot", "ttt mcts vs MCTSBot"):
        assert re.search(rf"{row}\s+0\.1\s+4\s", out), out  # the pairing at 0.1 s, 4 games
    assert "Simulations per CPU second" in out
    assert re.search(r"OpenSpiel MCTSBot \(C\+\+\)(\s+[\d,]+){4}\n", out), out
    assert re.search(r"ttt teaching search(\s+[\d,]+){4}\n", out), out
    assert out.count("1-minute load average") == 2
