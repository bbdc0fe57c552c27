"""The self-check in a student's JupyterLab, as ``make lab`` opens it (``grader/student_lab/`` on
JUPYTER_CONFIG_PATH), in a real browser, on lesson 2 with a slip only the hidden tests catch
(``winner`` never looks at the middle column):

- Validate answers in seconds, saying the hidden tests did not run (never "Success"), while a
  second notebook's kernel runs a cell and shows its output: the server is never held up;
- Run All (on the correct notebook: one of the lesson's own cells stops the slip's run) shows the
  last cell's "Check my work" button and starts no hidden check;
- pressing the button shows the check's step and time on screen, then the verdict naming
  ``winner`` as failing with the check's board; Stop ends a check and every process it started.

nbgrader's instructor panels (Create Assignment, Formgrader, Course List, its menu) are not there.
Screenshots go to ``tests/artifacts/``.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import nbformat
import psutil
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_browser import (CHROMIUM, api, browser, new_page, open_notebook, run_all_cells,  # noqa: E402,F401 (browser: a fixture)
                          running_lab, shoot)
from test_self_check import LESSON, SLIP, STUDENT_LAB, filled  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
HIDDEN_PANELS = ["@jupyter/nbgrader:create-assignment", "@jupyter/nbgrader:formgrader",
                 "@jupyter/nbgrader:course-list", "@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:menu"]
OTHER = "other.ipynb"
CORRECT = f"{LESSON}-correct.ipynb"  # a second notebook, whose kernel must answer while Validate runs
SLOW = f"{LESSON}-slow.ipynb"  # the correct one with a cell that waits a minute: a check that Stop always interrupts


@pytest.fixture(scope="module")
def student_lab(tmp_path_factory):
    """JupyterLab with the students' configuration, on the slip, the correct notebook and a second one; yields
    (url, token, root, theme, home)."""
    from grader.course_ops import release

    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium)")
    course = tmp_path_factory.mktemp("course")
    release(course, lessons=[LESSON])
    released = course / "release" / LESSON / f"{LESSON}.ipynb"
    made = tmp_path_factory.mktemp("notebooks")
    slip = filled(released, SLIP)
    assert any("check_my_work()" in cell.source for cell in slip.cells)  # the lesson's own last cells
    nbformat.write(slip, made / f"{LESSON}.ipynb")
    nbformat.write(filled(released), made / CORRECT)  # Run All reaches its last cell (the slip's stops before)
    slow = filled(released)
    slow.cells.insert(1, nbformat.v4.new_code_cell("import time\ntime.sleep(60)  # a slow demonstration"))
    nbformat.write(slow, made / SLOW)
    home = tmp_path_factory.mktemp("lab")
    patch = pytest.MonkeyPatch()
    patch.setenv("JUPYTER_CONFIG_PATH", str(STUDENT_LAB))  # what `make lab` sets
    try:
        with running_lab(home, notebooks={OTHER: ["print('warm')", "print('answered', 6 * 7)"]},
                         copies=[made / f"{LESSON}.ipynb", made / CORRECT, made / SLOW]) as (url, token, root):
            yield url, token, root, "light", home
    finally:
        patch.undo()


def checks_running(lab) -> list[str]:
    """The command lines of the ``ttt-grader check`` processes that this JupyterLab (its server,
    its kernels) has started and that run now."""
    root = f"--ServerApp.root_dir={lab[2]}"
    servers = [p for p in psutil.process_iter(["cmdline"]) if root in (p.info["cmdline"] or [])]
    assert servers, "the JupyterLab server is not running"
    found = []
    for process in servers[0].children(recursive=True):
        try:
            line = process.cmdline()
        except psutil.NoSuchProcess:
            continue
        if "grader" in line and "check" in line:
            found.append(" ".join(line))
    return found


def run_cell(page, index: int) -> None:
    cell = page.locator(".jp-NotebookPanel .jp-CodeCell").nth(index)
    cell.click()
    page.keyboard.press("Shift+Enter")


def press_check_my_work(page, lab, name: str = f"{LESSON}.ipynb"):
    """Opens the lesson (`name`), runs its last cell and presses its button; returns (that cell, the widget)
    once the check says how long it has run."""
    open_notebook(page, lab, name)
    last = page.locator(".jp-NotebookPanel .jp-CodeCell").filter(has_text="check_my_work()").last
    last.scroll_into_view_if_needed()
    last.click()
    page.keyboard.press("Shift+Enter")
    widget = last.locator(".ttt-check-my-work")
    widget.locator("button").filter(has_text="Check my work").click()
    widget.get_by_text("so far").wait_for(timeout=60_000)
    return last, widget


def test_validate_answers_at_once_and_the_server_keeps_answering(browser, student_lab):
    url, token = student_lab[0], student_lab[1]
    with new_page(browser) as other, new_page(browser) as page:
        open_notebook(other, student_lab, OTHER)
        run_cell(other, 0)
        other.locator(".jp-OutputArea-output").filter(has_text="warm").wait_for(timeout=60_000)
        open_notebook(page, student_lab, f"{LESSON}.ipynb")
        disabled = page.evaluate("JSON.parse(document.getElementById('jupyter-config-data').textContent).disabledExtensions")
        assert set(HIDDEN_PANELS) <= set(disabled), disabled
        assert page.locator("#jp-mainmenu-nbgrader").count() == 0
        assert page.get_by_text("Create Assignment").count() == 0

        slowest = [0.0]
        done = threading.Event()

        def poll() -> None:  # the server's REST API, every 0.2 s while Validate runs
            while not done.is_set():
                started = time.monotonic()
                api(url, token, "api/status", timeout=60)
                slowest[0] = max(slowest[0], time.monotonic() - started)
                time.sleep(0.2)

        poller = threading.Thread(target=poll, daemon=True)
        started = time.monotonic()
        page.locator(".validate-button").first.click()
        poller.start()
        run_cell(other, 1)  # in the other notebook, while Validate runs
        other.locator(".jp-OutputArea-output").filter(has_text="answered 42").wait_for(timeout=60_000)
        answered = time.monotonic() - started
        dialog = page.locator(".jp-Dialog")
        try:
            assert dialog.count() == 0, "Validate finished before the other notebook's cell: nothing was shown"
            dialog.wait_for(timeout=180_000)
        finally:
            done.set()
        validated = time.monotonic() - started
        poller.join()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shoot(page, ARTIFACTS / "self-check-validate.png")
        text = dialog.inner_text()
        page.keyboard.press("Escape")
        assert "Success" not in text and "failed" not in text, text  # nbgrader's heading hidden
        assert "passes the visible tests" in text and "did not run" in text, text
        assert "Check my work" in text and f"ttt-grader check {LESSON}.ipynb" in text, text
        assert answered < validated and slowest[0] < 5, (answered, validated, slowest)
        assert checks_running(student_lab) == []  # Validate started no hidden check


def test_run_all_shows_the_button_and_starts_no_check(browser, student_lab):
    with new_page(browser) as page:
        open_notebook(page, student_lab, CORRECT)
        run_all_cells(page, timeout=300_000)
        last = page.locator(".jp-NotebookPanel .jp-CodeCell").filter(has_text="check_my_work()").last
        last.scroll_into_view_if_needed()  # JupyterLab draws only the cells in view
        button = last.locator(".ttt-check-my-work button").filter(has_text="Check my work")
        try:
            button.wait_for(timeout=60_000)
        finally:
            shoot(page, ARTIFACTS / "self-check-run-all.png")
        seen = []
        for _ in range(10):  # a check would have started by now, and would run for tens of seconds
            seen += checks_running(student_lab)
            time.sleep(0.5)
        assert seen == [], seen
        widget = page.locator(".ttt-check-my-work")
        assert "Save first" in widget.inner_text() and "running this cell does not" in widget.inner_text()


def test_the_button_shows_progress_then_the_verdict(browser, student_lab):
    with new_page(browser) as page:
        last, widget = press_check_my_work(page, student_lab)
        assert checks_running(student_lab), "the button started no check"
        widget.get_by_text("running your notebook").wait_for(timeout=600_000)
        shoot(page, ARTIFACTS / "self-check-progress.png")
        progress = widget.inner_text()
        assert "Checking" in progress and "Stop" in progress, progress
        verdict = widget.locator(".ttt-check-verdict")
        try:
            verdict.wait_for(timeout=900_000)
        finally:
            last.scroll_into_view_if_needed()
            shoot(page, ARTIFACTS / "self-check-verdict.png")
        text = verdict.inner_text()
        assert text.startswith("Score if graded now:") and "Failing: winner." in text.splitlines()[0], text
        assert "FAIL\twinner" in text or "FAIL winner" in " ".join(text.split()), text
        assert "PASS terminal" in " ".join(text.split())
        assert "wrong winner" in text and "---+---+---" in text
        assert checks_running(student_lab) == []


def test_stop_ends_the_check(browser, student_lab):
    with new_page(browser) as page:
        _, widget = press_check_my_work(page, student_lab, SLOW)
        widget.get_by_text("running your notebook").wait_for(timeout=600_000)  # grading kernels are up
        deadline = time.monotonic() + 60  # the notebook's first cell waits a minute: still running
        while not left_by_kernels(student_lab) and time.monotonic() < deadline:
            time.sleep(1)
        assert left_by_kernels(student_lab), (f"the check started no process; on screen: {widget.inner_text()}; "
                                              f"the server's processes: {_tree(student_lab)}")
        widget.locator("button").filter(has_text="Stop").click()
        widget.get_by_text("Stopped after").wait_for(timeout=60_000)
        shoot(page, ARTIFACTS / "self-check-stopped.png")
        assert "the hidden tests did not finish" in widget.inner_text()
        deadline = time.monotonic() + 30
        while left_by_kernels(student_lab) and time.monotonic() < deadline:
            time.sleep(1)
        assert left_by_kernels(student_lab) == []


def _tree(lab) -> list[str]:
    root = f"--ServerApp.root_dir={lab[2]}"
    server = next(p for p in psutil.process_iter(["cmdline"]) if root in (p.info["cmdline"] or []))
    found = []
    for process in server.children(recursive=True):
        try:
            found.append(f"{process.pid}<{process.ppid()} {process.status()} {' '.join(process.cmdline())[:120]}")
        except psutil.Error as error:
            found.append(f"{process.pid}: {type(error).__name__}")
    return found


def left_by_kernels(lab) -> list[str]:
    """The processes that the notebooks' kernels started (the check and all it started), running now
    (a zombie among them, ended but not yet reaped, is not running)."""
    root = f"--ServerApp.root_dir={lab[2]}"
    server = next(p for p in psutil.process_iter(["cmdline"]) if root in (p.info["cmdline"] or []))
    found = []
    for kernel in server.children():
        try:
            if "ipykernel_launcher" not in " ".join(kernel.cmdline()):
                continue
            started = kernel.children(recursive=True)
        except psutil.Error:
            continue
        for process in started:
            try:
                if process.status() != psutil.STATUS_ZOMBIE:
                    found.append(" ".join(process.cmdline()))
            except psutil.Error:
                continue
    return found
