"""A search tree drawn in the browser, for where Graphviz's dot program cannot run.

``ttt.draw.TreeDrawing`` shows a tree as the SVG that dot draws. Where dot is not installed, or
no program can start at all (Python running inside the browser, as in the lessons' JupyterLite
site), it shows a `TreePicture` instead: the same DOT text, laid out and drawn by Graphviz built
for WebAssembly (npm's ``@viz-js/viz``, which ``make setup`` copies into ``ttt/widgets/static/``
and the package ships), so the picture has the same nodes, edges and text as dot's.

The module (about 1.2 MB) is sent to the page once, when the first tree asks for it, as a
message with a binary buffer, and every later tree on that page reuses it; it is never part of a
widget's saved state, so a notebook with many trees stays small.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import traitlets

from ttt.widgets.base import Widget

GRAPHVIZ_MODULE = Path(__file__).parent / "static" / "viz.js"


def graphviz_module() -> Optional[bytes]:
    """Return the WebAssembly Graphviz module's text, or None where this copy of ttt has none."""
    try:
        return GRAPHVIZ_MODULE.read_bytes()
    except OSError:
        return None


class TreePicture(Widget):
    """The DOT text `dot`, drawn as SVG by the browser; ``status`` says why when it cannot be."""

    kind = traitlets.Unicode("dot").tag(sync=True)
    dot = traitlets.Unicode("").tag(sync=True)

    def __init__(self, dot: str, **kwargs: Any) -> None:
        super().__init__(dot=dot, **kwargs)
        self.on_msg(self._answer)

    def _answer(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """Send the Graphviz module when the page asks for it (once a page: the page keeps it)."""
        if isinstance(content, dict) and content.get("want") == "graphviz":
            module = graphviz_module()
            if module is None:
                self.send({"graphviz": False})
            else:
                self.send({"graphviz": True}, buffers=[module])
