"""The self-check in a student's JupyterLab, as ``make lab`` opens it (``grader/student_lab/`` on
JUPYTER_CONFIG_PATH), in a real browser: nbgrader's Validate button runs the hidden tests too
(through the server's validate handler), listing the slip's ``winner`` as failed with the check's
board and saying "Success" for the correct notebook; ``check_my_work()`` in a cell prints the same
check; nbgrader's instructor panels (Create Assignment, Formgrader, Course List, its menu) are not
there. Screenshots go to ``tests/artifacts/``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_browser import CHROMIUM, browser, new_page, open_notebook, running_lab, shoot  # noqa: E402,F401 (browser: a fixture)
from test_self_check import LESSON, SLIP, STUDENT_LAB, filled  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
HIDDEN_PANELS = ["@jupyter/nbgrader:create-assignment", "@jupyter/nbgrader:formgrader",
                 "@jupyter/nbgrader:course-list", "@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:menu"]


@pytest.fixture(scope="module")
def student_lab(tmp_path_factory):
    """JupyterLab with the students' configuration, on the slip, the correct notebook and the slip
    with a last cell that calls check_my_work(); yields (url, token, root, theme, home)."""
    from grader.course_ops import release

    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium)")
    course = tmp_path_factory.mktemp("course")
    release(course, lessons=[LESSON])
    released = course / "release" / LESSON / f"{LESSON}.ipynb"
    made = tmp_path_factory.mktemp("notebooks")
    copies = {f"{LESSON}.ipynb": filled(released, SLIP), f"{LESSON}-correct.ipynb": filled(released)}
    asking = filled(released, SLIP)
    assert any("check_my_work()" in cell.source for cell in asking.cells)  # the lesson's own last cells
    copies[f"{LESSON}-asking.ipynb"] = asking
    for name, nb in copies.items():
        nbformat.write(nb, made / name)
    home = tmp_path_factory.mktemp("lab")
    patch = pytest.MonkeyPatch()
    patch.setenv("JUPYTER_CONFIG_PATH", str(STUDENT_LAB))  # what `make lab` sets
    try:
        with running_lab(home, notebooks={}, copies=[made / name for name in copies]) as (url, token, root):
            yield url, token, root, "light", home
    finally:
        patch.undo()


def validate(page, shot: Path) -> str:
    """Clicks Validate, waits for its dialog; returns the dialog's text (after a screenshot of it)."""
    page.locator(".validate-button").first.click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=300_000)
    page.wait_for_timeout(300)
    if dialog.locator("pre").count():
        dialog.locator("pre").last.scroll_into_view_if_needed()  # the error, below the cell's code
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shoot(page, shot)
    text = dialog.inner_text()
    page.keyboard.press("Escape")
    dialog.wait_for(state="detached")
    return text


def test_validate_button_runs_the_hidden_tests(browser, student_lab):
    with new_page(browser) as page:
        open_notebook(page, student_lab, f"{LESSON}.ipynb")
        disabled = page.evaluate("JSON.parse(document.getElementById('jupyter-config-data').textContent).disabledExtensions")
        assert set(HIDDEN_PANELS) <= set(disabled), disabled
        assert page.locator("#jp-mainmenu-nbgrader").count() == 0
        assert page.get_by_text("Create Assignment").count() == 0
        text = validate(page, ARTIFACTS / "self-check-validate-slip.png")
        assert "Success" not in text, text
        assert "The following cell failed" in text and "HiddenTestsFailed" in text, text
        assert "wrong winner" in text and "---+---+---" in text and "winner passes the visible tests" in text
    with new_page(browser) as page:
        open_notebook(page, student_lab, f"{LESSON}-correct.ipynb")
        text = validate(page, ARTIFACTS / "self-check-validate-correct.png")
        assert "Success! Your notebook passes all the tests." in text, text


def test_check_my_work_in_a_cell(browser, student_lab):
    with new_page(browser) as page:
        open_notebook(page, student_lab, f"{LESSON}-asking.ipynb")
        last = page.locator(".jp-NotebookPanel .jp-CodeCell").filter(has_text="check_my_work()").last  # the lesson's own
        last.scroll_into_view_if_needed()
        last.click()
        page.keyboard.press("Shift+Enter")
        output = last.locator(".jp-OutputArea-output")
        try:
            output.filter(has_text="Score if graded now").first.wait_for(timeout=300_000)
        finally:
            last.scroll_into_view_if_needed()
            shoot(page, ARTIFACTS / "self-check-in-a-cell.png")
        text = output.first.inner_text()
        assert "checked as last saved" in text and "FAIL  winner" in text and "PASS  terminal" in text, text
        assert "wrong winner" in text and "Failing: winner." in text
