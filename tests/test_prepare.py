"""A player's prepare step (the compiled search compiles, once per machine): the boards run it in a
thread, say why they wait, and play on; numba's cache on disk spares every later process the compiling.

The widget tests give the real `default` player a prepare step that waits for the test's go
(`Gate`), so what the board shows while it prepares is checked however fast or busy the machine.
The cache tests run fresh Python processes with a cache folder of their own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ttt import agents, play
from ttt.engine import compiled
from ttt.widgets import BigBoard

needs_numba = pytest.mark.skipif(not compiled.AVAILABLE, reason=compiled.INSTALL_HINT)


class Gate:
    """A prepare step that runs the real one once the test says go (or fails, if told to)."""

    def __init__(self, *, fails: bool = False) -> None:
        self.go, self.fails, self.calls = threading.Event(), fails, 0

    def __call__(self) -> None:
        self.calls += 1
        assert self.go.wait(60), "the test never let the preparation end"
        if self.fails:
            raise RuntimeError("the compiler is missing")
        compiled.warm_up()


class GatedBoard(BigBoard):
    """The ultimate board against `default`, whose prepare step is `gate`."""

    def __init__(self, gate: Gate, **options) -> None:
        self.gate = gate
        super().__init__("ultimate", seed=5, seconds=0.05, **options)

    def make_player(self):
        player = super().make_player()
        if self.opponent == "default":
            player.prepare = self.gate
        return player


def browser_click(widget: BigBoard, square: int) -> None:
    """Send the widget a click as the browser sends it (a message: it must never wait)."""
    widget._message(widget, {"click": square, "turn": widget.turn}, [])


@needs_numba
def test_the_board_prepares_in_a_thread_says_why_takes_the_persons_move_and_replies_when_ready():
    gate = Gate()
    widget = GatedBoard(gate)
    waiting = play.preparing(widget._player)  # the sentence's one home, which `ttt play` prints too
    assert waiting and waiting.startswith("Preparing default's compiled search")
    assert waiting in widget.status and "Your move (X): any open board" in widget.status
    assert not widget.busy and len(widget.legal) == 81, "the person may move while the computer prepares"
    browser_click(widget, 40)  # returns while the preparation still waits: the kernel is not held up
    assert widget.state.squares[40] == "X" and widget.state.squares.count("O") == 0
    assert widget.busy and widget.legal == [] and widget.status_kind == "busy"
    assert widget.status == f"{waiting} The computer (default) moves as soon as it is ready."
    before = widget.state
    browser_click(widget, 41)  # a second click meanwhile: refused, saying why
    assert widget.state == before and widget.status_kind == "error"
    assert "The computer has not moved yet: board 4, cell 5 was not played." in widget.status
    gate.go.set()
    assert widget.wait(60)
    assert widget.state.squares.count("O") == 1 and widget.state.squares.index("O") // 9 == 4
    assert not widget.busy and "The computer (default) took board 4" in widget.status
    assert "Preparing" not in widget.status and gate.calls == 1


@needs_numba
def test_once_prepared_without_a_click_the_board_shows_the_normal_state():
    gate = Gate()
    widget = GatedBoard(gate)
    stamp = widget.stamp
    gate.go.set()
    assert widget.wait(60)
    assert widget.stamp > stamp and widget.status == "Your move (X): any open board (framed)."
    assert widget.status_kind == "info" and not widget.busy and len(widget.legal) == 81


@needs_numba
def test_when_the_computer_opens_its_first_move_comes_once_it_has_prepared():
    gate = Gate()
    widget = GatedBoard(gate, side="O")
    assert widget.state.squares == "." * 81 and widget.busy and widget.legal == []
    assert widget.status.startswith("New game. Preparing default's compiled search")
    assert widget.status.endswith("The computer (default) moves as soon as it is ready.")
    gate.go.set()
    assert widget.wait(60)
    assert widget.state.squares.count("X") == 1 and "Your move (O)" in widget.status and not widget.busy


@needs_numba
def test_a_click_from_python_waits_for_the_preparation_and_the_reply():
    gate = Gate()
    widget = GatedBoard(gate)
    threading.Timer(0.2, gate.go.set).start()
    widget.click(4, 4)  # as a cell does: it returns with the computer's reply made
    assert gate.go.is_set() and widget.state.squares.count("O") == 1 and not widget.busy
    assert "The computer (default) took board 4" in widget.status


@needs_numba
def test_a_new_game_while_preparing_is_not_touched_when_the_old_preparation_ends():
    gate = Gate()
    widget = GatedBoard(gate)
    old = widget._preparation
    widget.opponent = "random"  # the menu: a new game against a player with nothing to prepare
    assert widget._preparation is None and "Preparing" not in widget.status
    widget.click(4, 4)
    squares, stamp = widget.state.squares, widget.stamp
    gate.go.set()
    old.join(60)
    assert not old.is_alive()
    assert widget.state.squares == squares and widget.stamp == stamp, "the old game's preparation changed the new game"


@needs_numba
def test_a_preparation_that_fails_is_shown_in_words():
    gate = Gate(fails=True)
    widget = GatedBoard(gate)
    browser_click(widget, 0)
    gate.go.set()
    assert widget.wait(60)
    assert widget.status_kind == "error"
    assert widget.status.startswith("The computer (default) could not prepare its search: ")
    assert "the compiler is missing" in widget.status
    assert not widget.busy and "Traceback" not in widget.status


def test_a_prepare_step_runs_once_a_process_however_many_ask_at_once():
    calls = []
    gate = threading.Event()

    def player(state):
        return None

    def step():
        calls.append(1)
        gate.wait(10)

    player.prepare = step
    said: list[str] = []
    threads = [threading.Thread(target=play.prepare, args=(player, said.append)) for _ in range(3)]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(10)
    assert calls == [1]
    assert said and set(said) == {"Preparing player's compiled search (once per machine: up to a minute, then cached)…"}
    assert play.preparing(player) is None
    play.prepare(player, said.append)  # done: nothing said, nothing run
    assert calls == [1] and len(said) <= 3
    assert play.preparing(agents.make("random", game="ultimate")) is None  # nothing to prepare


# --- numba's cache on disk -------------------------------------------------------------------

PREPARE = """
import json, time
import numba
from ttt import agents, play
from ttt.engine import compiled
from ttt.games import get_game
player = agents.make("default", 1, game="ultimate", seconds=0.05)
start = time.process_time()
play.prepare(player)
cpu = time.process_time() - start
game = get_game("ultimate")
player(game.play(game.initial(), (4, 4)))  # a first move after it compiles nothing more
stats = [getattr(compiled, name).stats for name in compiled._KERNELS]
print(json.dumps({
    "cpu": cpu,
    "hits": sum(sum(s.cache_hits.values()) for s in stats),
    "misses": sum(sum(s.cache_misses.values()) for s in stats),
    "cache": numba.config.CACHE_DIR,
}))
"""


def fresh_python(code: str, **environment: str) -> dict:
    """Run `code` in a new Python process with `environment` (NUMBA_CACHE_DIR unset unless given); return its JSON."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(environment)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


@needs_numba
def test_the_compiled_search_compiles_once_per_machine_in_the_users_cache_folder(tmp_path):
    caches = tmp_path / "cache"
    first = fresh_python(PREPARE, XDG_CACHE_HOME=str(caches))
    folder = caches / "ttt" / "numba"
    assert first["cache"] == str(folder) and first["misses"] > 0 and first["hits"] == 0, first
    assert list(folder.rglob("compiled._search-*.nbc")), f"nothing cached in {folder}"
    second = fresh_python(PREPARE, XDG_CACHE_HOME=str(caches))
    assert second["misses"] == 0 and second["hits"] > 0, f"the second process compiled again: {second}"
    assert second["cpu"] < first["cpu"] / 2, f"prepare took {second['cpu']:.2f} CPU s cached, {first['cpu']:.2f} s compiling"


@needs_numba
def test_a_users_own_numba_cache_dir_is_kept(tmp_path):
    code = ("import json, numba\nfrom ttt.engine import compiled\ncompiled._load()\n"
            "print(json.dumps({'cache': numba.config.CACHE_DIR, 'search': compiled._search._cache._cache_path}))")
    own = tmp_path / "mine"
    shown = fresh_python(code, NUMBA_CACHE_DIR=str(own), XDG_CACHE_HOME=str(tmp_path / "cache"))
    assert shown["cache"] == str(own) and Path(shown["search"]).is_relative_to(own), shown
