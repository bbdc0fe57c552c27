"""The "Check my work" button of a lesson's last cell (``check_my_work()``): it runs ``ttt-grader check``
on the notebook as last saved in a process of its own, shows each step and the time it has taken,
with a Stop button, then the verdict: each function's PASS or FAIL with the check's message and board.
Running the cell (Run All, grading, Validate) only shows the button; where no widget can show (a
terminal, ``nbconvert --execute``) the cell's output is one line saying how to check."""

from __future__ import annotations
import json
import os
import time
from pathlib import Path
from grader.selfcheck import HOW_TO_CHECK, STEPS, Result, _check_command, _why_not, read_result, summary

def _progress_line(event: dict, functions: dict[str, str]) -> str:
    """What the check is doing, in words, from the last step it said (PROGRESS)."""
    step, cell = event.get("step"), event.get("cell")
    if step == "run" and cell in functions:
        names = list(functions)
        then = f", then {STEPS['recheck']}" if names.index(cell) == len(names) - 1 else ""
        return (f"{STEPS['run']}: the tests of {functions[cell]} ({names.index(cell) + 1} of {len(names)})"
                f"{then}")
    return STEPS.get(step, step or "starting the check")


class CheckButton:
    """The "Check my work" widget: a button, a Stop button, a progress line, the verdict."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else None
        self.process = None
        self._widget = None

    def __repr__(self) -> str:  # where no widget shows: one line saying how
        path = self.path or _this_notebook()
        name = path.name if path else "LESSON.ipynb"
        return "To check your work with the hidden tests, " + HOW_TO_CHECK.format(name=name) + "."

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        if bundle:
            bundle["text/plain"] = repr(self)
        return bundle

    @property
    def widget(self):
        if self._widget is None:
            import ipywidgets as w

            self.button = w.Button(description="Check my work", button_style="primary", icon="check",
                                   tooltip="run the hidden tests on this notebook as last saved")
            self.stop_button = w.Button(description="Stop", icon="stop", layout=w.Layout(display="none"))
            self.status = w.HTML("Press <b>Check my work</b> to run the hidden tests on this notebook as your "
                                 "grading will (running this cell does not). Save first (Ctrl+S): the check "
                                 "reads the notebook as last saved.")
            self.verdict = w.HTML()
            self.button.on_click(lambda _: self.start())
            self.stop_button.on_click(lambda _: self.stop())
            self._widget = w.VBox([w.HBox([self.button, self.stop_button]), self.status, self.verdict],
                                  layout=w.Layout(width="100%"))
            self._widget.add_class("ttt-check-my-work")
        return self._widget

    def _show(self, status: str | None = None, verdict: str | None = None) -> None:
        if status is not None:
            self.status.value = status
        if verdict is not None:
            self.verdict.value = verdict

    def start(self) -> None:
        """Starts the check in a process of its own and follows it in a thread."""
        import subprocess
        import threading

        if self.process is not None and self.process.poll() is None:
            return
        path = self.path or _this_notebook()
        if path is None:
            self._show("Cannot tell which notebook this is: run <code>check_my_work('04-minimax.ipynb')</code> "
                       "with its file name (lesson 4's, for example).", "")
            return
        path = Path(path).resolve()
        command, env = _check_command(path)
        self.process = subprocess.Popen(command, env=env, cwd=path.parent, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        start_new_session=True)
        self.button.disabled, self.stop_button.layout.display = True, None
        self._show(f"Checking {html_escape(path.name)} as last saved ...", "")
        threading.Thread(target=self._follow, args=(self.process, path.name), daemon=True).start()

    def _follow(self, process, name: str) -> None:
        """Shows the check's steps with the time taken, every second, then its verdict. Both of the
        check's pipes are read as it writes them (a verdict longer than a pipe holds never blocks it)."""
        import threading

        started, said, err, out, functions = time.monotonic(), ["starting"], [], [], {}

        def read_steps() -> None:
            for line in process.stderr:
                err.append(line)
                if line.startswith('{"step"'):
                    try:
                        event = json.loads(line)
                    except ValueError:
                        continue
                    functions.update(event.get("functions", {}))
                    said[0] = _progress_line(event, functions)

        readers = [threading.Thread(target=read_steps, daemon=True),
                   threading.Thread(target=lambda: out.append(process.stdout.read()), daemon=True)]
        for reader in readers:
            reader.start()
        while process.poll() is None:
            minutes, seconds = divmod(int(time.monotonic() - started), 60)
            if getattr(process, "stopped", False):
                self._show(f"Stopping the check ({minutes}:{seconds:02d}) ...")
            else:
                self._show(f"Checking {html_escape(name)} with the hidden tests: <b>{html_escape(said[0])}</b> "
                           f"({minutes}:{seconds:02d} so far)")
            time.sleep(1)
        for reader in readers:
            reader.join(timeout=5)
        out = "".join(out)
        self.button.disabled, self.stop_button.layout.display = False, "none"
        elapsed = round(time.monotonic() - started)
        if getattr(process, "stopped", False):
            self._show(f"Stopped after {elapsed} s: the hidden tests did not finish.", "")
            return
        try:
            result = read_result(out) if process.returncode in (0, 1) else None
        except ValueError:
            result = None
        if result is None:
            self._show(f"The hidden tests did not run: {html_escape(_why_not(''.join(err) or out))}.", "")
            return
        self._show(f"Checked {html_escape(name)} as last saved, with the hidden tests, in {elapsed} s.",
                   verdict_html(result))

    def stop(self) -> None:
        """Stops the check and returns at once: Ctrl-C to it (it stops the processes it started, its
        sandboxes with them); if it has not ended STOP_GRACE seconds later, it and every process it
        started are killed. The kernel is never held up meanwhile."""
        import signal
        import threading

        process = self.process
        if process is None or process.poll() is not None:
            return
        process.stopped = True
        try:
            os.killpg(process.pid, signal.SIGINT)
        except ProcessLookupError:
            return
        threading.Thread(target=_end_in_time, args=(process, STOP_GRACE), daemon=True).start()


STOP_GRACE = 15  # seconds a stopped check has to end its processes itself


def _end_in_time(process, grace: float) -> None:
    """Waits `grace` seconds for the check `process` to end, then kills it and everything it started."""
    import subprocess

    import psutil

    try:
        process.wait(timeout=grace)
        return
    except subprocess.TimeoutExpired:
        pass
    try:
        left = psutil.Process(process.pid).children(recursive=True)
    except psutil.Error:
        left = []
    process.kill()  # nothing once it has ended and been reaped
    for each in left:
        try:
            each.kill()
        except psutil.Error:
            pass


def html_escape(text: str) -> str:
    import html

    return html.escape(str(text))


def verdict_html(result: Result) -> str:
    """The check's verdict as the widget shows it: the sentence first, then a line per function,
    then each failure's message with its board."""
    mark = {True: "<span style='color:#1a7f37'>✔ PASS</span>", False: "<span style='color:#cf222e'>✘ FAIL</span>"}
    rows = "".join(f"<tr><td>{mark[c.passed]}</td><td><code>{html_escape(c.function)}</code></td>"
                   f"<td>{c.points:g} point{'s' if c.points != 1 else ''}</td></tr>" for c in result.cells)
    failures = "".join(f"<p><b>{html_escape(c.function)}</b> fails:</p><pre style='line-height:1.25'>"
                       f"{html_escape(c.message)}</pre>" for c in result.cells if not c.passed)
    problems = "".join(f"<li>{html_escape(p)}</li>" for p in result.problems)
    return (f"<div class='ttt-check-verdict'><p><b>{html_escape(summary(result))}</b></p><table>{rows}</table>"
            f"{failures}{f'<p>Also:</p><ul>{problems}</ul>' if problems else ''}</div>")


def _this_notebook() -> Path | None:
    """The notebook this kernel runs, as Jupyter told the kernel (``__session__``), if it is there."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        session = shell.user_ns.get("__session__") if shell is not None else None
    except ImportError:
        session = None
    session = session or os.environ.get("JPY_SESSION_NAME")
    if not session:
        return None
    for candidate in (Path(session), Path.cwd() / Path(session).name):
        if candidate.suffix == ".ipynb" and candidate.is_file():
            return candidate
    return None
