"""Widgets for JupyterLab 4, Notebook 7, VS Code and Colab (anywidget): boards to play on and a search explorer.

    >>> from ttt.widgets import PlayableBoard, SearchExplorer, BigBoard
    >>> from ttt.tictactoe import minimax    # in a lesson: your own minimax(board)
    >>> board = PlayableBoard()              # play X against perfect play
    >>> board = PlayableBoard(minimax, side="O")   # play O against minimax(board)
    >>> explorer = SearchExplorer("XO./.X./...")   # step through alpha-beta from a position
    >>> big = BigBoard("ultimate", side="O")       # nine boards in one

A widget shows itself when it is the last thing in a cell (``board`` on its own line).

The browser draws each widget from its synced state (``ttt/widgets/widget.js`` and
``widget.css``, shipped in the package); every handler shows its errors in the widget's status
line. The class names and data attributes the page carries are listed in the docs' "Pictures and
widgets" page ("Hooks for scripts and tests").
"""

from ttt.widgets.bigboard import BigBoard
from ttt.widgets.board import PlayableBoard
from ttt.widgets.explorer import SearchExplorer

__all__ = ["BigBoard", "PlayableBoard", "SearchExplorer"]
