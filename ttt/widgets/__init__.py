"""Widgets for JupyterLab 4, Notebook 7, VS Code and Colab (anywidget): boards to play on and a search explorer.

    >>> from ttt.widgets import PlayableBoard, SearchExplorer, BigBoard
    >>> PlayableBoard()                      # play X against perfect play
    >>> PlayableBoard(minimax, side="O")     # play O against your own minimax(board)
    >>> SearchExplorer("XO./.X./...")        # step through alpha-beta from a position
    >>> BigBoard("ultimate", side="O")       # nine boards in one

The browser draws each widget from its synced state (``ttt/widgets/widget.js`` and
``widget.css``, shipped in the package); every handler shows its errors in the widget's status
line. The class names and data attributes the page carries are listed in the README
("Hooks for scripts and tests").
"""

from ttt.widgets.bigboard import BigBoard
from ttt.widgets.board import PlayableBoard
from ttt.widgets.explorer import SearchExplorer

__all__ = ["BigBoard", "PlayableBoard", "SearchExplorer"]
