"""`ttt-grader check` on a corpus of CS50-style solutions written for this project (tests/data/cs50/), in the
styles real students use; each file states its expected verdict per function in its docstring:

    expect: initial_state=pass player=pass ... minimax=fail
    broken-by: winner=utility minimax=utility,winner     (passes, but fails as written because of those)
    message: result=KeyboardInterrupt is not an Exception|...  (text each message must hold)
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader.cli import main
from grader.cs50file import FUNCTIONS

CORPUS = sorted((Path(__file__).parent / "data" / "cs50").glob("*.py"))


def expectations(path: Path) -> tuple[dict, dict, dict]:
    """Return (verdict per function, broken_by per function, texts each message must hold) from the file's docstring."""
    fields = {}
    for line in path.read_text().splitlines():
        key, _, rest = line.partition(": ")
        if key in ("expect", "broken-by", "message"):
            fields[key] = dict(item.split("=", 1) for item in rest.split(" ")) if key != "message" else \
                dict([rest.split("=", 1)])
    verdicts = fields["expect"]
    broken = {f: set(names.split(",")) for f, names in fields.get("broken-by", {}).items()}
    messages = {f: text.split("|") for f, text in fields.get("message", {}).items()}
    return verdicts, broken, messages


def test_every_corpus_file_states_a_verdict_for_every_function():
    assert len(CORPUS) >= 12
    for path in CORPUS:
        verdicts, broken, _ = expectations(path)
        assert list(verdicts) == list(FUNCTIONS), path.name
        assert set(verdicts.values()) <= {"pass", "fail"}, path.name
        assert all(verdicts[f] == "pass" for f in broken), path.name


def _graded(path: Path) -> list[dict]:
    from grader.cs50file import check_file

    return [r.as_dict() for r in check_file(path, jobs=1)]


@pytest.fixture(scope="module")
def graded() -> dict:
    with ThreadPoolExecutor(max_workers=2) as pool:  # two files at a time, each check in its own subprocess
        return dict(zip(CORPUS, pool.map(_graded, CORPUS)))


TEXT_BOARD = re.compile(r"\b[XO.]{3}/[XO.]{3}/[XO.]{3}\b")


@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_check_gives_every_corpus_file_its_expected_verdicts(graded, path):
    verdicts, broken, messages = expectations(path)
    results = {r["function"]: r for r in graded[path]}
    assert list(results) == list(FUNCTIONS)
    got = {f: "pass" if r["passed"] else "fail" for f, r in results.items()}
    assert got == verdicts, {f: results[f]["message"] for f in FUNCTIONS if got[f] != verdicts[f]}
    for name, r in results.items():
        assert set(r["broken_by"]) == broken.get(name, set()), (name, r["message"])
        for text in messages.get(name, []):
            assert text in r["message"], (name, r["message"])
        message = r["message"]
        # the CS50 vocabulary: no package classes or text boards, no source ids, no traceback
        for word in ("seed", "InvalidActionError", "InvalidBoardError", "ttt.", "Traceback", "grader"):
            assert word not in message, (name, word, message)
        assert not TEXT_BOARD.search(message), (name, message)
        if not r["passed"]:  # every failure names the call and, where the call takes one, the board
            assert re.match(rf"{name}(\(|: \d kinds of failure)", message), message
            if name != "initial_state":
                assert "as a list: [[" in message and " | " in message, message
        else:
            assert message.startswith(f"{name}: correct on "), message
        assert isinstance(r["cpu_seconds"], float) and r["cpu_seconds"] > 0
        assert isinstance(r["checker_cpu_seconds"], float) and r["checker_cpu_seconds"] > 0


@pytest.mark.slow
def test_check_json_names_the_function_that_broke_another_as_written(capsys):
    path = next(p for p in CORPUS if p.stem == "winner_calls_utility")
    assert main(["check", str(path), "--json"]) == 1
    results = {r["function"]: r for r in json.loads(capsys.readouterr().out)}
    assert set(results["winner"]) == {"function", "passed", "message", "broken_by", "seconds", "cpu_seconds",
                                       "checker_cpu_seconds"}
    assert results["winner"]["passed"] and results["winner"]["broken_by"] == ["utility"]
    assert "As written it fails, because it calls your own utility (your utility returned 1 where the CS50 " \
           "answer is -1 on the board [[" in results["winner"]["message"]
    assert not results["utility"]["passed"] and results["utility"]["broken_by"] == []
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "PASS  winner" in out and "(as written it fails because of your utility)" in out and "7 of 8 functions pass" in out
