"""The IPython hook: in a kernel, a failing check shows its message alone, without a traceback
(so no line of the hidden test that called it), and the wrapper every check wears (`_guarded`).

In ``ttt-grader``'s grading kernels (``grader.kernel.APART_ENV`` set) a check does not run:
it says so and passes, and the grade comes from the re-check (``grader.recheck``), which runs
the test cell again apart from the notebook, where the check does run, and writes what it
printed into the cell. So the checks, the bulk of a lesson's grading time, run once, not
twice; stock nbgrader and a student's own kernel run them as always.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, Callable, Optional

from grader.checks.failures import CheckFailed, OutOfCpuTime
from grader.kernel import APART_ENV

APART = "run by the grader apart from the notebook"  # what such a check prints in the kernel
_APART = os.environ.get(APART_ENV) == "1"  # read once, when the checks are imported


def _show_plainly(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Optional[int] = None) -> list[str]:
    """IPython's display of an error: a check's failure as its message alone, anything else as usual.

    A failing check shows no traceback, so no line of the hidden test that called it.
    """
    if getattr(value, "_from_check", False):
        stb = [f"\x1b[0;31m{etype.__name__}\x1b[0m: {value}"]
    else:
        stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
    shell._showtraceback(etype, value, stb)  # IPython leaves showing a custom exception to its handler
    return stb


def _install_display() -> None:
    """Register `_show_plainly` with the running IPython kernel, if there is one."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    if shell is not None and not getattr(shell, "_ttt_checks_display", False):
        shell.set_custom_exc((CheckFailed, NotImplementedError), _show_plainly)
        shell._ttt_checks_display = True


def _guarded(check: Callable) -> Callable[..., str]:
    """Return `check` so that a failure shows only its message, without the grader's frames.

    Checks print their one-line summary and also return it. A hidden test assigns it
    (``_ = check_player(player)``): nbgrader would read a value left as a grade cell's output
    as the cell's score.
    """

    @functools.wraps(check)
    def run(*args: Any, **kwargs: Any) -> str:
        __tracebackhide__ = True  # noqa: F841  (IPython and pytest hide this frame)
        if _APART:
            line = f"hidden tests: {check.__name__.removeprefix('check_')}: {APART}"
            print(line)
            return line
        _install_display()
        try:
            return check(*args, **kwargs)
        except (CheckFailed, NotImplementedError) as error:
            error.__traceback__ = None
            error.__context__ = None
            error._from_check = True  # type: ignore[attr-defined]
            error._hidden_check = True  # type: ignore[attr-defined]  (not a visible test's failure)
            raise error from None
        except OutOfCpuTime as error:  # the time limit was up while this check ran: its failure, too
            error._hidden_check = True  # type: ignore[attr-defined]
            raise

    return run
