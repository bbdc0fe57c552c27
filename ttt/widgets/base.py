"""What every ttt widget shares: the front end (one ES module and its CSS, shipped in this
package) and a status line that shows errors instead of losing them."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable

import anywidget
import traitlets

from ttt.errors import in_words

HERE = Path(__file__).parent


class Widget(anywidget.AnyWidget):
    """A widget drawn by ``widget.js`` with ``widget.css``; `kind` says which view it is."""

    _esm = HERE / "widget.js"
    _css = HERE / "widget.css"
    kind = traitlets.Unicode("board").tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    status_kind = traitlets.Unicode("info").tag(sync=True)  # 'info', 'error' or 'busy'

    def say(self, text: str, *, kind: str = "info") -> None:
        """Show `text` in the status line; `kind` 'error' shows it as an error."""
        with self.hold_sync():
            self.status, self.status_kind = text, kind


def error_text(error: BaseException) -> str:
    """Return an error as the status line says it: in the student's words, as the lessons' tests say it."""
    return in_words(error)


def shows_errors(method: Callable) -> Callable:
    """Return `method` wrapped so that an exception is shown in the widget's status line.

    Exceptions in widget handlers otherwise vanish into the browser console or the log.
    """

    @functools.wraps(method)
    def run(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except Exception as error:  # noqa: BLE001 - every error is shown, none is lost
            self.say(error_text(error), kind="error")
            return None

    return run
