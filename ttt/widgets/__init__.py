"""Widgets for JupyterLab 4 / Notebook 7 (ipywidgets 8): a board to play on and a search explorer.

    >>> from ttt.widgets import PlayableBoard, SearchExplorer
    >>> PlayableBoard()                      # play X against perfect play
    >>> PlayableBoard(minimax, side="O")     # play O against your own minimax(board)
    >>> SearchExplorer("XO./.X./...")        # step through alpha-beta from a position

Plain ipywidgets only: no custom front-end code, so they work wherever ipywidgets 8 does. Every
handler shows its errors in the widget's status line. Stable CSS classes for pages and tests:
``ttt-board``, ``ttt-square``, ``ttt-status``, ``ttt-explorer``, ``ttt-step``, ``ttt-back``,
``ttt-tree`` (the drawn tree; cut-off edges carry the class ``pruned``).
"""

from ttt.widgets.bigboard import BigBoard
from ttt.widgets.board import PlayableBoard
from ttt.widgets.explorer import SearchExplorer

__all__ = ["BigBoard", "PlayableBoard", "SearchExplorer"]
