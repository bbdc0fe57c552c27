"""The board's CPU limit where a student meets it: in a real kernel, a click reaches the board as
a comm message, and the computer's endless search is stopped there with the plain sentence."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.slow


def test_a_click_in_a_real_kernel_stops_an_endless_search_at_the_cpu_limit():
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    said: list[str] = []

    def run(code: str) -> None:
        kc.execute_interactive(code, timeout=60, output_hook=lambda m: said.append(m["content"].get("text", ""))
                               if m["msg_type"] == "stream" else None)

    try:
        run("from ttt.widgets import PlayableBoard\n"
            "def endless(board):\n    while True:\n        pass\n"
            "b = PlayableBoard(endless, side='X')\nb.CPU_SECONDS = 0.5\nprint(b.model_id)")
        model = said.pop().strip()
        click = {"comm_id": model, "data": {"method": "custom", "content": {"click": 4, "turn": None}}}
        kc.shell_channel.send(kc.session.msg("comm_msg", click))  # as the browser sends a click
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            said.clear()
            run("print(b.status_kind, b.busy)")
            if said and said[-1].split() == ["error", "False"]:
                break
            time.sleep(0.5)
        said.clear()
        run("print(b.status)")
        assert said[-1].startswith("The computer (your endless) was stopped: it was still thinking after 0.5 s of CPU time")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
