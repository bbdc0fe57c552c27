"""ttt: tic-tac-toe for teaching game-playing AI.

The package is layered one way: rules (``ttt.tictactoe``, ``ttt.games``) -> search
(``ttt.search``) -> trace (``ttt.trace``) -> pictures (``ttt.draw``) -> widgets
(``ttt.widgets``). Importing ``ttt`` stays light: nothing from Jupyter or graphviz.
"""

from ttt.errors import InvalidActionError, InvalidBoardError

__all__ = ["InvalidActionError", "InvalidBoardError"]
__version__ = "0.1.0"
