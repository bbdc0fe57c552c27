"""A 9x9 board to play the nine-board game (the CSC 242 write-up's) or ultimate tic-tac-toe in JupyterLab.

The widget holds no game logic: moves go through the game (``ttt.games.get_game``) in a
``ttt.play.Session``, the computer is a registered player (``ttt.agents.names(game)``). The
boards the person may play on are framed; in ultimate, won boards are tinted with the winner's
colour. Square ``9 * board + cell`` is cell `cell` of small board `board`.
"""

from __future__ import annotations

from typing import Any, Optional

from ttt import agents
from ttt.games import get_game
from ttt.games.bigboard import BigBoardGame
from ttt.widgets.board import GameBoard



class BigBoard(GameBoard):
    """Nine small boards to play against the computer: the CSC 242 write-up's nine-board game, or ultimate.

    `opponent` is a player registered for the game (``ttt.agents.names(game)``); `seconds` is
    the thinking time of players that take one (``default``, ``mcts``). Click a square to move:
    your mark shows at once and the computer replies. The boards you may play on are framed
    (all open boards when you may play anywhere); an illegal click is refused with the reason
    and changes nothing. The compiled search of ``default`` and ``mcts`` (the ``fast`` extra)
    is prepared in a thread when the board is made or its computer chosen, compiled once per
    machine and then loaded from numba's cache: the status line says so, you may move
    meanwhile, and the computer replies when it is ready (see ``GameBoard.new_game``).
    """

    def __init__(
        self,
        game: str = "nine-board",
        *,
        opponent: str = "default",
        side: str = "X",
        seed: Optional[int] = None,
        seconds: float = 1.0,
    ) -> None:
        self.game = get_game(game, BigBoardGame)  # raises, naming the big boards, for another game
        agents.lookup(opponent, game=game)  # raises, naming the players, for one that is not
        self.seconds = seconds
        super().__init__(opponent=opponent, side=side, choices={n: n for n in agents.names(game)}, seed=seed, size=9)

    def make_player(self) -> Any:
        options = {"seconds": self.seconds} if "seconds" in agents.options(self.opponent, game=self.game.name) else {}
        return agents.make(self.opponent, self.seed, game=self.game.name, **options)

    def move_of(self, square: int) -> tuple[int, int]:
        return divmod(square, 9)

    def square_of(self, move: tuple[int, int]) -> int:
        return 9 * move[0] + move[1]

    def where(self, square: int) -> str:
        return "board {}, cell {}".format(*divmod(square, 9))

    def squares_text(self) -> str:
        return self.session.state.squares

    def click(self, board: int, cell: int) -> None:
        """Click cell `cell` of board `board` (both 0-8, row by row), as a person would."""
        self.click_square(9 * board + cell)

    def playable(self) -> list[int]:
        """Return the boards the player to move may play on (none when the game is over)."""
        return self.game.playable_boards(self.state)

    def your_move(self) -> str:
        if self.state.sent_to is None:
            return f"Your move ({self.side}): any open board (framed)."
        return f"Your move ({self.side}): play on board {self.state.sent_to} (framed)."

    def _refresh_more(self, mine: bool) -> None:
        self.playable_boards = self.playable() if mine else []
        self.owners = list(self.game.owners(self.state))


__all__ = ["BigBoard"]
