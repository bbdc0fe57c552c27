"""A 9x9 board to play the nine-board game (the CSC 242 write-up) or ultimate tic-tac-toe in JupyterLab.

The widget holds no game logic: moves go through the game (``ttt.games.get_game``), the
computer is a registered player (``ttt.agents.names(game)``). The boards the person may play on
are framed in green; in ultimate, won boards are tinted with the winner's colour.
"""

from __future__ import annotations

import functools
from typing import Any, Optional

import ipywidgets as widgets

from ttt import agents
from ttt.errors import InvalidActionError
from ttt.games import get_game
from ttt.games.bigboard import small_winner
from ttt.widgets.board import GameControls, message_html, shows_errors

GAMES = ("nine-board", "ultimate")
PLAYABLE_BORDER = "3px solid #2e7d32"  # the boards the person may play on
OTHER_BORDER = "3px solid #e0e0e0"
TINT = {"X": "#cfe3ff", "O": "#ffd6d6"}  # a square of a board won by X / by O; the winning line
LAST_MOVE = "#fff2b3"


class BigBoard(GameControls, widgets.VBox):
    """Nine small boards to play against the computer: the CSC 242 write-up's nine-board game or ultimate.

    `opponent` is a player registered for the game (``ttt.agents.names(game)``); `seconds` is
    the thinking time of players that take one (``default``, ``mcts``). Click a square to move:
    the computer replies at once. The board you must play on is framed in green (all open boards
    when you may play anywhere); an illegal click is refused with the reason and changes nothing.
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
        if game not in GAMES:
            raise ValueError(f"unknown game {game!r}; BigBoard plays: {', '.join(GAMES)}")
        names = agents.names(game)
        if opponent not in names:
            raise ValueError(f"unknown player {opponent!r}; choose one of: {', '.join(names)}")
        self.game = get_game(game)
        self.seed, self.seconds = seed, seconds
        self.state = self.game.initial()
        self.last_move: Optional[tuple[int, int]] = None
        controls = self._make_controls(side=side, options=names, opponent=opponent)
        self.squares = [
            [
                widgets.Button(
                    description="",
                    tooltip=f"board {b}, cell {c}",
                    layout=widgets.Layout(width="34px", height="34px", padding="0"),
                )
                for c in range(9)
            ]
            for b in range(9)
        ]
        self.boards = []
        for b in range(9):
            for c, button in enumerate(self.squares[b]):
                button.add_class("ttt-square")
                button.style.font_weight = "bold"
                button.on_click(functools.partial(self._clicked, b, c))
            box = widgets.GridBox(
                self.squares[b],
                layout=widgets.Layout(grid_template_columns="repeat(3, 34px)", grid_gap="1px", padding="3px"),
            )
            box.add_class("ttt-small-board")
            self.boards.append(box)
        self.grid = widgets.GridBox(self.boards, layout=widgets.Layout(grid_template_columns="repeat(3, auto)", grid_gap="6px"))
        self.grid.add_class("ttt-board")
        self.status = widgets.HTML()
        self.status.add_class("ttt-status")
        super().__init__([controls, self.grid, self.status])
        self.add_class("ttt-bigboard")
        self.new_game()

    # -- what the widget shows

    def playable_boards(self) -> list[int]:
        """Return the boards the player to move may play on (none when the game is over)."""
        return self.game.playable_boards(self.state)

    def _refresh(self, message: str = "") -> None:
        """Redraw the squares, the frames of the playable boards and the status line."""
        playable = set(self.playable_boards()) if self.game.to_move(self.state) == self.side else set()
        squares = self.state.squares
        for b in range(9):
            owner = self._owner(b)
            for c, button in enumerate(self.squares[b]):
                mark = squares[9 * b + c]
                button.description = "" if mark == "." else mark
                colour = TINT.get(owner) if owner else None
                button.style.button_color = LAST_MOVE if (b, c) == self.last_move else colour
            box = self.boards[b]
            box.layout.border = PLAYABLE_BORDER if b in playable else OTHER_BORDER
            if b in playable:
                box.add_class("ttt-playable")
            else:
                box.remove_class("ttt-playable")
        self.status.value = message_html(" ".join(filter(None, [message, self._outcome()])))

    def _owner(self, b: int) -> Optional[str]:
        """Return who has won small board `b` ('X' or 'O'), else None."""
        return small_winner(self.state.small(b))

    def _outcome(self) -> str:
        """Return what the position means for the person: where to move, or how the game ended."""
        won = self.game.winner(self.state)
        if won == self.side:
            return f"{won} wins: you beat the computer ({self.opponent_picker.value})!"
        if won is not None:
            return f"{won} wins: the computer ({self.opponent_picker.value}) beat you. Press New game to play again."
        if self.game.is_terminal(self.state):
            return "It's a draw. Press New game to play again."
        if self.state.board is None:
            return f"Your move ({self.side}): any open board (framed in green)."
        return f"Your move ({self.side}): play on board {self.state.board} (framed in green)."

    # -- play

    @shows_errors
    def new_game(self) -> None:
        """Start again from the empty board; the computer moves first if it plays X."""
        self.state, self.last_move = self.game.initial(), None
        options = {"seconds": self.seconds} if self.opponent_picker.value in ("default", "mcts") else {}
        self._player = agents.make(self.opponent_picker.value, self.seed, game=self.game.name, **options)
        message = "New game."
        if self.computer == "X":
            message = self._computer_moves()
        self._refresh(message)

    @shows_errors
    def _clicked(self, board: int, cell: int, _button: Any = None) -> None:
        if self.game.is_terminal(self.state):
            self._refuse(f"The game is over: board {board}, cell {cell} cannot be played. Press New game to play again.")
            return
        if self.game.to_move(self.state) != self.side:
            self._refuse("It is the computer's turn, but its last move failed: press New game.")
            return
        try:
            self.state = self.game.play(self.state, (board, cell))
        except InvalidActionError as error:
            self._refuse(f"Board {board}, cell {cell} cannot be played: {error}.")
            return
        self.last_move = (board, cell)
        message = ""
        if not self.game.is_terminal(self.state):
            message = self._computer_moves()
        self._refresh(message)

    def click(self, board: int, cell: int) -> None:
        """Click cell `cell` of board `board` (both 0-8, row by row), as a person would."""
        self.squares[board][cell].click()

    def _refuse(self, why: str) -> None:
        self.status.value = message_html(why, kind="error")

    def _computer_moves(self) -> str:
        """Make the computer's move; return the sentence that says where it played."""
        move = self._player(self.state)
        try:
            self.state = self.game.play(self.state, move)
        except InvalidActionError as error:
            raise InvalidActionError(f"the computer did not make a legal move: {error}") from None
        self.last_move = move
        return f"The computer ({self.opponent_picker.value}) played board {move[0]}, cell {move[1]}."


__all__ = ["BigBoard"]
