"""``SafeExecute``, nbgrader's Execute hardened, on a fixture notebook in a real kernel (the stock
``python3`` kernel, no sandbox: what it adds to nbgrader's Execute is what is tested here; the
sandboxed grading kernel is tested end to end by the grading tests). One notebook, run once:
a loop stopped at its CPU limit, a kernel that exits and is replaced, output capped as it
streams in, the hidden tests left out of the kernel when the re-check runs them, and the cells
after the last test cell not run."""

from __future__ import annotations

import pytest
from traitlets.config import Config

from grader.execute import SafeExecute

from . import read_notebook

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def executed():
    """The fixture notebook run by SafeExecute: {cell index: cell}."""
    config = Config()
    config.SafeExecute.kernel_name = "python3"
    config.SafeExecute.timeout = 2  # CPU seconds a cell may use
    config.SafeExecute.max_output_bytes = 10_000
    config.SafeExecute.spare_kernel = False
    config.SafeExecute.checks_apart = True
    nb = read_notebook("to-execute")
    nb, _ = SafeExecute(config=config).preprocess(nb, {"metadata": {"path": "."}})
    return dict(enumerate(nb.cells))


def errors(cell) -> list[str]:
    return [o.ename for o in cell.get("outputs", []) if o.output_type == "error"]


def printed(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")


def test_a_cell_past_its_cpu_limit_is_stopped_and_says_so(executed):
    loop = executed[4]
    assert errors(loop) == ["CellTimeoutError"]
    assert "more than 2 seconds of CPU time" in loop.outputs[-1].evalue


def test_the_cells_after_a_stopped_one_still_run(executed):
    assert printed(executed[5]) == "after the loop 6\n"


def test_a_kernel_that_exits_is_replaced_and_the_cells_above_run_again(executed):
    assert errors(executed[6]) == ["KernelDied"]
    assert printed(executed[7]) == "10 []\n"  # the fresh kernel ran the definitions again


def test_the_hidden_tests_are_left_to_the_re_check(executed):
    assert "BEGIN HIDDEN TESTS" in executed[2].source  # the cell keeps its source
    assert errors(executed[2]) == [] and printed(executed[3]) == "seen []\n"  # the kernel never ran them


def test_output_is_capped_while_it_streams_in(executed):
    text = printed(executed[8])
    assert "output truncated by the grader" in text and len(text) < 11_000


def test_the_cells_after_the_last_test_cell_are_not_run(executed):
    assert errors(executed[9]) == []
    assert executed[10].outputs == []
