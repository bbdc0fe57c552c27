"""A tic-tac-toe board to play on in JupyterLab, against any player or a student's own function.

The widget holds no game logic: moves go through ``ttt.games.classic``, the computer is any
player ``ttt.agents.as_player`` accepts, and "show the computer's thinking" draws a recorded
search with ``ttt.draw``. The CS50 project asks that "you should never be able to beat the AI": against
the default opponent, minimax, you cannot.
"""

from __future__ import annotations

import functools
import html
import traceback
from typing import Any, Callable, Optional

import graphviz
import ipywidgets as widgets

from ttt import agents
from ttt.draw import DOT_MISSING, draw_tree, render_svg
from ttt.errors import InvalidActionError
from ttt.games.classic import EMPTY_BOARD, LINES, TicTacToe, format_board
from ttt.trace import Trace, record, record_calls

Opponent = Any  # a registered player's name, a player `board -> square`, or a CS50 function `board -> (i, j)`


# --- shared by the widgets ---------------------------------------------------------------------


def message_html(text: str, *, kind: str = "info") -> str:
    """Return `text` as the HTML of a status line; `kind` 'error' shows it in red."""
    colour = "#b00020" if kind == "error" else "inherit"
    return f'<span class="ttt-{kind}" style="color:{colour}">{html.escape(text)}</span>'


def error_html(error: BaseException) -> str:
    """Return an error as a red line, with its traceback folded away below when it is a bug."""
    line = message_html(f"{type(error).__name__}: {error}", kind="error")
    if isinstance(error, ValueError):
        return line
    trace = html.escape("".join(traceback.format_exception(type(error), error, error.__traceback__)))
    return f"{line}<details><summary>traceback</summary><pre>{trace}</pre></details>"


def shows_errors(method: Callable) -> Callable:
    """Return `method` wrapped so that an exception is shown in the widget's status line.

    Exceptions in ipywidgets handlers otherwise vanish into the browser console or the log.
    """

    @functools.wraps(method)
    def run(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except Exception as error:  # noqa: BLE001 - every error is shown, none is lost
            self.status.value = error_html(error)
            return None

    return run


def tree_svg(trace: Trace, *, max_depth: Optional[int] = None, max_nodes: int = 300) -> str:
    """Return the HTML of a trace's tree: its SVG, or a message when dot is missing or nothing was recorded."""
    if not trace.events:
        return message_html("No search was recorded: the search made no moves to look at.")
    try:
        svg = render_svg(draw_tree(trace, max_depth=max_depth, max_nodes=max_nodes))
    except graphviz.ExecutableNotFound:
        return message_html(DOT_MISSING, kind="error")
    return f'<div style="overflow:auto; max-height:640px;">{svg}</div>'


class GameControls:
    """The row above a playable board: which side you play, the computer, New game.

    A widget mixes this in, calls `_make_controls` before building its board and gets
    `side_picker`, `opponent_picker`, `new_button` (each starting a new game when changed)
    and the `side` / `computer` properties.
    """

    side_picker: widgets.ToggleButtons
    opponent_picker: widgets.Dropdown

    def _make_controls(self, *, side: str, options: Any, opponent: Any) -> widgets.HBox:
        """Return the controls' row; raise ValueError unless `side` is 'X' or 'O'."""
        side = str(side).upper()
        if side not in ("X", "O"):
            raise ValueError(f"side must be 'X' or 'O', not {side!r}")
        self.side_picker = widgets.ToggleButtons(options=["X", "O"], value=side, description="You play")
        self.side_picker.style.button_width = "3em"
        self.opponent_picker = widgets.Dropdown(options=options, value=opponent, description="Computer")
        self.new_button = widgets.Button(description="New game", icon="refresh")
        self.new_button.on_click(lambda _: self.new_game())
        self.side_picker.observe(lambda _: self.new_game(), names="value")
        self.opponent_picker.observe(lambda _: self.new_game(), names="value")
        return widgets.HBox([self.side_picker, self.opponent_picker, self.new_button])

    @property
    def side(self) -> str:
        """Return the mark the person plays."""
        return self.side_picker.value

    @property
    def computer(self) -> str:
        """Return the mark the computer plays."""
        return "O" if self.side == "X" else "X"


def square_name(square: int) -> str:
    """Return a square as both a student and CS50 say it: 'square 4, (1, 1)'."""
    return f"square {square}, {divmod(square, 3)}"


# --- the board ---------------------------------------------------------------------------------


class PlayableBoard(GameControls, widgets.VBox):
    """A 3x3 board to play against the computer (the CS50 project's game, in JupyterLab).

    `opponent` is a registered player's name (see ``ttt.agents.names()``), a player, or a
    CS50-style function ``board -> (i, j)`` such as your own ``minimax``. `side` is the mark you
    play; X moves first. Click a square to move; the computer replies at once. An illegal click
    is refused with a message and changes nothing. "Show the computer's thinking" draws the
    search tree behind the computer's last move: the calls your function made to ``result``,
    recorded with ``ttt.trace.record_calls``, or for a registered player, alpha-beta's search
    from that position; "moves deep" sets how far down the drawing goes ("… N more" below).
    """

    def __init__(self, opponent: Opponent = "minimax", *, side: str = "X", seed: Optional[int] = None) -> None:
        self.game = TicTacToe()
        self.seed = seed
        self.state: str = EMPTY_BOARD
        self.thought_from: Optional[str] = None  # the position of the computer's last move
        self._trace: Optional[Trace] = None
        options = [(name, name) for name in agents.names()]
        if not isinstance(opponent, str):
            options.insert(0, (getattr(opponent, "__name__", "your function"), opponent))
        elif opponent not in agents.names():
            raise ValueError(f"unknown player {opponent!r}; choose one of: {', '.join(agents.names())}")
        controls = self._make_controls(side=side, options=options, opponent=opponent)
        self.squares = [
            widgets.Button(description="", layout=widgets.Layout(width="56px", height="56px"), tooltip=square_name(s))
            for s in range(9)
        ]
        for s, button in enumerate(self.squares):
            button.add_class("ttt-square")
            button.style.font_weight = "bold"
            button.on_click(functools.partial(self._clicked, s))
        self.board = widgets.GridBox(
            self.squares, layout=widgets.Layout(grid_template_columns="repeat(3, 58px)", grid_gap="2px", width="180px")
        )
        self.board.add_class("ttt-board")
        self.status = widgets.HTML()
        self.status.add_class("ttt-status")
        self.thinking = widgets.Checkbox(value=False, description="show the computer's thinking", indent=False)
        self.thinking_depth = widgets.IntSlider(value=1, min=1, max=9, description="moves deep",
                                                layout=widgets.Layout(display="none"))
        self.tree = widgets.HTML()
        self.tree.add_class("ttt-tree")
        self.thinking.observe(lambda _: self._show_thinking(), names="value")
        self.thinking_depth.observe(lambda _: self._show_thinking(), names="value")
        super().__init__(
            [
                controls,
                self.board,
                self.status,
                widgets.HBox([self.thinking, self.thinking_depth]),
                self.tree,
            ]
        )
        self.add_class("ttt-playable")
        self.new_game()

    # -- what the widget shows

    @property
    def opponent_name(self) -> str:
        """Return the computer player's name as the status line says it."""
        opponent = self.opponent_picker.value
        return opponent if isinstance(opponent, str) else getattr(opponent, "__name__", "your function")

    def winning_line(self) -> tuple[int, ...]:
        """Return the three squares of the winning line, or () if nobody has won."""
        for line in LINES:
            a, b, c = (self.state[s] for s in line)
            if a == b == c != ".":
                return line
        return ()

    def _refresh(self, message: str = "") -> None:
        """Redraw the squares and the status line from the position."""
        line = self.winning_line()
        for s, button in enumerate(self.squares):
            mark = self.state[s]
            button.description = "" if mark == "." else mark
            button.button_style = "success" if s in line else ""
            if s in line:
                button.add_class("ttt-win")
            else:
                button.remove_class("ttt-win")
        self.status.value = message_html(" ".join(filter(None, [message, self._outcome()])))

    def _outcome(self) -> str:
        """Return what the position means for the person: their move, or how the game ended."""
        won = self.game.winner(self.state)
        if won == self.side:
            return f"{won} wins: you beat the computer ({self.opponent_name})!"
        if won is not None:
            return f"{won} wins: the computer ({self.opponent_name}) beat you. Press New game to play again."
        if self.game.is_terminal(self.state):
            return "It's a draw. Press New game to play again."
        return f"Your move: you play {self.side}."

    # -- play

    @shows_errors
    def new_game(self) -> None:
        """Start again from the empty board; the computer moves first if it plays X."""
        self.state = EMPTY_BOARD
        self.thought_from, self._trace = None, None
        self.tree.value = ""
        self._player = agents.as_player(self.opponent_picker.value, seed=self.seed)
        message = "New game."
        if self.computer == "X":
            message = self._computer_moves()
        self._refresh(message)
        self._show_thinking()

    @shows_errors
    def _clicked(self, square: int, _button: Any = None) -> None:
        if self.game.is_terminal(self.state):
            self._refuse(f"The game is over: {square_name(square)} cannot be played. Press New game to play again.")
            return
        if self.game.to_move(self.state) != self.side:
            self._refuse(
                "It is the computer's turn, but its last move failed: press New game or choose another opponent."
            )
            return
        if self.state[square] != ".":
            self._refuse(f"{square_name(square).capitalize()} is taken by {self.state[square]}: choose an empty square.")
            return
        self.state = self.game.play(self.state, square)
        message = ""
        if not self.game.is_terminal(self.state):
            message = self._computer_moves()
        self._refresh(message)
        self._show_thinking()

    def click(self, square: int) -> None:
        """Click the square numbered `square` (0-8, row by row), as a person would."""
        self.squares[square].click()

    def _refuse(self, why: str) -> None:
        self.status.value = message_html(why, kind="error")

    def _computer_moves(self) -> str:
        """Make the computer's move; return the sentence that says which square it took."""
        before = self.state
        opponent = self.opponent_picker.value
        try:
            if self.thinking.value and _is_own_function(opponent):
                with record_calls(opponent.__globals__) as recorder:
                    move = self._player(before)
                self._trace = recorder.trace()
            else:
                move = self._player(before)
                self._trace = None
            self.state = self.game.play(before, move)
        except InvalidActionError as error:
            raise InvalidActionError(f"the computer ({self.opponent_name}) did not make a legal move: {error}") from None
        self.thought_from = before
        return f"The computer ({self.opponent_name}) took {square_name(move)}."

    # -- the computer's thinking

    @shows_errors
    def _show_thinking(self) -> None:
        self.thinking_depth.layout.display = "" if self.thinking.value else "none"
        if not self.thinking.value:
            self.tree.value = ""
            return
        if self.thought_from is None:
            self.tree.value = message_html("The computer has not moved yet: its search tree appears after its move.")
            return
        trace, caption = self.thinking_trace()
        self.tree.value = message_html(caption) + tree_svg(trace, max_depth=self.thinking_depth.value)

    def thinking_trace(self) -> tuple[Trace, str]:
        """Return the search behind the computer's last move, and a caption saying whose it is."""
        before = self.thought_from
        if before is None:
            raise ValueError("the computer has not moved yet")
        opponent = self.opponent_picker.value
        where = format_board(before, inline=True)
        if _is_own_function(opponent):
            if self._trace is None:
                with record_calls(opponent.__globals__) as recorder:
                    self._player(before)
                self._trace = recorder.trace()
            return self._trace, f"The calls {self.opponent_name} made to result() from {where}."
        if self._trace is None:
            self._trace = record(self.game, before, algorithm="alphabeta", ordered=True)
        searcher = "" if self.opponent_name in ("minimax", "alphabeta") else f" ({self.opponent_name} does not search; this is what alpha-beta sees)"
        return self._trace, f"Alpha-beta from {where}, best moves first{searcher}."


def _is_own_function(opponent: Opponent) -> bool:
    """Return True for a person's own CS50-style function (not a name or a registered player)."""
    return not isinstance(opponent, str) and getattr(opponent, "game", None) is None and hasattr(opponent, "__globals__")
