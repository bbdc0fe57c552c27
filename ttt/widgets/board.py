"""Boards to play on in JupyterLab, against any player or a student's own function.

The widgets hold no game logic: a game in progress is a ``ttt.play.Session`` (the one game
loop), the computer is any player ``ttt.agents.as_player`` accepts, and "show the computer's
thinking" shows a recorded search (``ttt.trace``) in the explorer's tree view. The browser draws
the board from the synced state (squares, side to move, legal squares, last move, winning line,
busy); a click is sent to the kernel with the turn it was made on, so a click made before the
computer's move is never played after it. A computer with a prepare step (the big boards'
compiled search compiles, once per machine) prepares in a thread when the game starts, so the
kernel keeps answering; the status line says why it waits (``ttt.play.preparing``), the person
may make their move meanwhile, and the computer's reply comes once it is ready. The CS50
project asks that "you should never be able to beat the AI": against the default opponent,
minimax, you cannot.
"""

from __future__ import annotations

import inspect
import threading
from typing import Any, Optional

import traitlets

from ttt import agents
from ttt.errors import InvalidActionError, StillThinking
from ttt.limits import OutOfCpuTime, cpu_limit
from ttt.games.classic import TicTacToe, format_board
from ttt.play import Session, prepare, preparing
from ttt.call_recorder import record_calls
from ttt.trace import Trace, record
from ttt.widgets.base import Widget, error_text, shows_errors

Opponent = Any  # a registered player's name, a player `state -> move`, or a CS50 function `board -> (i, j)`
OWN = "your:"  # the menu key of a person's own function


def defined_now(function: Any) -> Any:
    """Return the function its module (a notebook) now holds under `function`'s name, else `function`.

    A student who fixes their function and runs its cell again makes a new function object; the
    board given the old one plays the fix from the next New game, as its messages promise.
    """
    name, names = getattr(function, "__name__", None), getattr(function, "__globals__", None)
    now = names.get(name) if isinstance(names, dict) and isinstance(name, str) else None
    return now if inspect.isfunction(now) and now.__name__ == name else function


class GameBoard(Widget):
    """A board to play against the computer: the state the browser draws, and the game loop's moves.

    Subclasses say which game (`game`), how a square number becomes a move (`move_of`) and
    back (`square_of`), and which squares to highlight (`highlights`).
    """

    size = traitlets.Int(3).tag(sync=True)
    squares = traitlets.Unicode("").tag(sync=True)
    side = traitlets.Unicode("X").tag(sync=True)
    legal = traitlets.List(traitlets.Int()).tag(sync=True)
    last = traitlets.Int(-1).tag(sync=True)
    line = traitlets.List(traitlets.Int()).tag(sync=True)
    owners = traitlets.List(traitlets.Unicode()).tag(sync=True)
    playable_boards = traitlets.List(traitlets.Int()).tag(sync=True)
    won_by = traitlets.Unicode("").tag(sync=True)  # 'you', 'computer' or ''
    busy = traitlets.Bool(False).tag(sync=True)
    opponents = traitlets.List().tag(sync=True)  # [label, key] pairs for the menu
    opponent = traitlets.Unicode("").tag(sync=True)
    opponent_label = traitlets.Unicode("").tag(sync=True)
    turn = traitlets.Int(0).tag(sync=True)  # counts positions: a click carries the one it was made on
    stamp = traitlets.Int(0).tag(sync=True)  # counts redraws
    can_think = traitlets.Bool(False).tag(sync=True)

    game: Any
    CPU_SECONDS = 60.0  # the CPU time the computer may think for one move before it is stopped

    def __init__(self, *, opponent: Opponent, side: str, choices: dict[str, Any], seed: Optional[int], **traits: Any) -> None:
        side = str(side).upper()
        if side not in ("X", "O"):
            raise ValueError(f"side must be 'X' or 'O', not {side!r}")
        self.seed = seed
        self._choices = choices  # menu key -> opponent
        self._lock = threading.RLock()  # held to move and redraw: by a click, or by the preparation when it ends
        self._preparation: Optional[threading.Thread] = None  # the computer's prepare step, while it runs
        self._waiting = ""  # what the status line says meanwhile (``ttt.play.preparing``)
        self._games = 0  # counts new games: a preparation that ends after a new game began does nothing
        key = next((k for k, v in choices.items() if v is opponent), opponent)
        super().__init__(side=side, opponent=key, opponents=[[self._label(k), k] for k in choices], **traits)
        self.session = Session(self.game, {"X": None, "O": None})
        self.on_msg(self._message)
        self.observe(lambda _: self.new_game(), names=["side", "opponent"])
        self.new_game()

    # -- the position, as Python sees it

    @property
    def state(self) -> Any:
        """Return the game's state now."""
        return self.session.state

    @property
    def computer(self) -> str:
        """Return the mark the computer plays."""
        return "O" if self.side == "X" else "X"

    @property
    def opponent_name(self) -> str:
        """Return the computer player's name as the menu and the status line say it."""
        return self._label(self.opponent)

    def _label(self, key: str) -> str:
        if key.startswith(OWN):
            return f"your {key[len(OWN):]}"
        return key

    # -- what the subclasses say

    def move_of(self, square: int) -> Any:
        raise NotImplementedError

    def square_of(self, move: Any) -> int:
        raise NotImplementedError

    def where(self, square: int) -> str:
        """Return how a message names a square."""
        raise NotImplementedError

    def highlights(self) -> list[int]:
        """Return the squares of the winning line (none while nobody has won), as the game numbers them."""
        return list(self.game.winning_line(self.state))

    def squares_text(self) -> str:
        raise NotImplementedError

    def make_player(self) -> Any:
        raise NotImplementedError

    # -- play

    @shows_errors
    def new_game(self) -> None:
        """Start again from the empty board; the computer moves first if it plays X.

        A computer with a prepare step not yet done in this process starts it in a thread: the
        status line says why it waits, you may move meanwhile, and its move comes when it is ready.
        """
        with self._lock:
            self._player = self.make_player()
            self.session = Session(self.game, {self.side: None, self.computer: self._player})
            self.turn += 1
            self._games += 1
            self._new_game_hook()
            self._waiting = preparing(self._player) or ""
            self._preparation = None
            if self._waiting:
                self._preparation = threading.Thread(
                    target=self._prepare, args=(self._player, self._games), name="ttt-prepare", daemon=True)
                self._preparation.start()  # (it ends by taking the lock, so after this game is drawn)
            self._after_move("New game.")

    def _prepare(self, player: Any, game: int) -> None:
        """In a thread: run `player`'s prepare step, then make the move the computer owes, if any."""
        failed: Optional[Exception] = None
        try:
            prepare(player)
        except Exception as error:  # noqa: BLE001 - shown, never lost
            failed = error
        with self._lock:
            if game != self._games:
                return  # a new game began meanwhile: it has its own preparation
            self._preparation, self._waiting = None, ""
            if failed is not None:
                self.busy = False
                self._refresh(f"The computer ({self.opponent_name}) could not prepare its search: {error_text(failed)}",
                              kind="error", outcome=False)
                return
            try:
                self._after_move("")
            except Exception as error:  # noqa: BLE001 - shown, never lost
                self._show_error(error)

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Return once the computer has prepared and made the move it owes (at once when it has
        nothing to prepare); False if `timeout` seconds passed first. A click from Python waits so."""
        thread = self._preparation
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def _new_game_hook(self) -> None:
        pass

    def click_square(self, square: int, *, turn: Optional[int] = None) -> None:
        """Click square `square` (numbered as the board's ``data-square``), as a person would.

        `turn` is the position the click was made on (the browser sends it): a click made
        before the position changed is refused, never played on the new position. While the
        computer prepares, this waits (a cell does) until it is ready and has made the move it
        owes, clicks, and waits for its reply; a click in the browser never waits.
        """
        self.wait()
        self._click(square, turn)
        self.wait()

    def _click(self, square: int, turn: Optional[int]) -> None:
        with self._lock:
            try:
                self._clicked(square, turn)
            except Exception as error:  # noqa: BLE001 - shown, never lost
                self._show_error(error)

    def _show_error(self, error: Exception) -> None:
        self.busy = False
        self._refresh(error_text(error), kind="error", outcome=False)

    def _clicked(self, square: int, turn: Optional[int]) -> None:
        session = self.session
        if turn is not None and turn != self.turn:
            self._refuse(f"That click on {self.where(square)} was made before the last move: it was not played.")
            return
        if session.over:
            self._refuse(f"The game is over: {self.where(square)} cannot be played. Press New game to play again.")
            return
        if session.to_move != self.side and self._preparation is not None:
            self._refuse(f"The computer has not moved yet: {self.where(square)} was not played. {self._waiting}")
            return
        if session.to_move != self.side:
            self._refuse("It is the computer's turn, but its last move failed: press New game or choose another opponent.")
            return
        try:
            session.play(self.move_of(square))
        except InvalidActionError as error:
            self._refuse(f"{self.where(square).capitalize()} cannot be played: {error}.")
            return
        self.turn += 1
        self._after_move("")

    def _after_move(self, message: str) -> None:
        """Let the computer move if it is its turn (saying so while it thinks), then redraw;
        while it prepares, say so, and leave its move to the preparation's end."""
        if self._preparation is not None:
            if self.session.computer_to_move:
                self.busy = True
                then = f"The computer ({self.opponent_name}) moves as soon as it is ready."
                self._refresh(" ".join(filter(None, [message, self._waiting, then])), kind="busy", outcome=False)
            else:
                self._refresh(" ".join(filter(None, [message, self._waiting])), kind="busy")
            return
        if self.session.computer_to_move:
            self.busy = True
            self._refresh(f"The computer ({self.opponent_name}) is thinking…", kind="busy", outcome=False)
            try:
                message = " ".join(filter(None, [message, self._computer_moves()]))
            finally:
                self.busy = False
                self.turn += 1
        self._refresh(message)

    def _computer_moves(self) -> str:
        """Make the computer's move; return the sentence that says where it played."""
        try:
            with cpu_limit(self.CPU_SECONDS):
                move = self.session.play_computer()
        except InvalidActionError as error:
            raise InvalidActionError(f"the computer ({self.opponent_name}) did not make a legal move: {error}") from None
        except OutOfCpuTime:
            raise StillThinking(f"The computer ({self.opponent_name}) was stopped: it was still thinking after "
                                f"{self.CPU_SECONDS:g} s of CPU time on this board. Does every loop, and every "
                                "recursion, in it come to an end? Fix it, run its cell, then press New game.") from None
        return f"The computer ({self.opponent_name}) took {self.where(self.square_of(move))}."

    def _refuse(self, why: str) -> None:
        self._refresh(why, kind="error", outcome=False)

    def _message(self, _widget: Any, content: dict, _buffers: Any) -> None:
        if "click" in content:
            self._click(int(content["click"]), content.get("turn"))
        elif content.get("new"):
            self.new_game()

    # -- what the browser draws

    def outcome(self) -> str:
        """Return what the position means for the person: their move, or how the game ended."""
        won = self.session.winner
        if won == self.side:
            return f"{won} wins: you beat the computer ({self.opponent_name})!"
        if won is not None:
            return f"{won} wins: the computer ({self.opponent_name}) beat you. Press New game to play again."
        if self.session.over:
            return "It's a tie. Press New game to play again."
        return self.your_move()

    def your_move(self) -> str:
        return f"Your move: you play {self.side}."

    def _refresh(self, message: str = "", *, kind: str = "info", outcome: bool = True) -> None:
        """Send the browser everything it draws, in one message."""
        session = self.session
        mine = not session.over and session.to_move == self.side and not self.busy
        won = session.winner
        with self.hold_sync():
            self.squares = self.squares_text()
            self.legal = sorted(self.square_of(m) for m in session.legal_moves()) if mine else []
            self.last = -1 if session.last_move is None else self.square_of(session.last_move)
            self.line = self.highlights()
            self.won_by = "" if won is None else "you" if won == self.side else "computer"
            self.opponent_label = self.opponent_name
            self._refresh_more(mine)
            self.say(" ".join(filter(None, [message, self.outcome() if outcome else ""])), kind=kind)
            self.stamp += 1

    def _refresh_more(self, mine: bool) -> None:
        pass


class PlayableBoard(GameBoard):
    """A 3x3 board to play against the computer (the CS50 project's game, in JupyterLab).

    `opponent` is a registered player's name (see ``ttt.agents.names()``), a player, or a
    CS50-style function ``board -> (i, j)`` such as your own ``minimax`` (the menu calls it
    "your minimax"). `side` is the mark you play; X moves first. Click a square to move: your
    mark shows at once, the board says the computer is thinking and refuses clicks until it
    has moved (every control is disabled meanwhile). An illegal click is refused with a
    message and changes nothing. "Show the computer's thinking" shows the search behind the
    computer's last move: the calls your function made to ``result`` (recorded with
    ``ttt.call_recorder.record_calls``), or for a registered player alpha-beta's search from that
    position; "moves deep" sets how deep it opens. The panel records, keeps and sends only what it draws (at most `THINKING_NODES` nodes, no
    more moves deep than asked, a step for each drawn node's event), so ticking it costs little
    more than the search itself, even from the empty board.
    """

    THINKING_NODES = 300  # the most nodes the panel draws

    thinking = traitlets.Bool(False).tag(sync=True)
    thinking_depth = traitlets.Int(2).tag(sync=True)
    thinking_tree = traitlets.Dict().tag(sync=True)
    thinking_caption = traitlets.Unicode("").tag(sync=True)

    def __init__(self, opponent: Opponent = "minimax", *, side: str = "X", seed: Optional[int] = None) -> None:
        self.game = TicTacToe()
        self.thought_from: Optional[str] = None  # the position of the computer's last move
        self._trace: Optional[Trace] = None
        self._trace_depth = 0  # how deep the recorded search's kept nodes go
        self._shown: Optional[tuple] = None  # (trace, depth) of the tree sent
        choices: dict[str, Any] = {}
        if not isinstance(opponent, str):
            choices[OWN + getattr(opponent, "__name__", "function")] = opponent
        else:
            agents.lookup(opponent, game=self.game.name)  # raises, naming the players, for one that is not
        choices.update({name: name for name in agents.names(self.game.name)})
        super().__init__(opponent=opponent, side=side, choices=choices, seed=seed, size=3, can_think=True)
        self.observe(self._on_thinking, names=["thinking", "thinking_depth"])

    def make_player(self) -> Any:
        chosen = self._choices[self.opponent]
        if self.opponent.startswith(OWN):  # a person's own function, as the notebook defines it now
            chosen = self._choices[self.opponent] = defined_now(chosen)
        return agents.as_player(chosen, seed=self.seed)

    def move_of(self, square: int) -> int:
        return square

    def square_of(self, move: int) -> int:
        return move

    def where(self, square: int) -> str:
        """Return a square as both a student and CS50 say it: 'square 4, (1, 1)'."""
        return f"square {square}, {divmod(square, 3)}"

    def squares_text(self) -> str:
        return self.session.state

    def click(self, square: int) -> None:
        """Click the square numbered `square` (0-8, row by row), as a person would."""
        self.click_square(square)

    # -- the computer's thinking

    def _new_game_hook(self) -> None:
        self.thought_from, self._trace = None, None

    def _limits(self) -> dict[str, int]:
        return {"max_depth": self.thinking_depth, "max_nodes": self.THINKING_NODES}

    def _computer_moves(self) -> str:
        before = self.state
        own = self._choices[self.opponent]
        if self.thinking and _is_own_function(own):
            with record_calls(own.__globals__, **self._limits()) as recorder:
                said = super()._computer_moves()
            self._trace, self._trace_depth = recorder.trace(), self.thinking_depth
        else:
            said = super()._computer_moves()
            self._trace = None
        self.thought_from = before
        return said

    def _on_thinking(self, _change: Any = None) -> None:
        with self.hold_sync():
            self._show_thinking()
            self.stamp += 1

    def _refresh_more(self, mine: bool) -> None:
        if not self.busy:
            self._show_thinking()

    @shows_errors
    def _show_thinking(self) -> None:
        from ttt.widgets.explorer import tree_data

        if not self.thinking:
            self.thinking_tree, self.thinking_caption, self._shown = {}, "", None
            return
        if self.thought_from is None:
            self.thinking_tree, self._shown = {}, None
            self.thinking_caption = "The computer has not moved yet: its search appears after its move."
            return
        trace, caption = self.thinking_trace()
        self.thinking_caption = caption if trace.events else "No search was recorded: the computer made no calls to look at."
        if self._shown != (id(trace), self.thinking_depth):  # the tree is built once a search and depth
            self.thinking_tree = tree_data(trace, max_depth=self.thinking_depth, max_nodes=self.THINKING_NODES, every_step=False)
            self._shown = (id(trace), self.thinking_depth)

    def thinking_trace(self) -> tuple[Trace, str]:
        """Return the search behind the computer's last move, and a caption saying whose it is."""
        before = self.thought_from
        if before is None:
            raise ValueError("the computer has not moved yet")
        own = self._choices[self.opponent]
        where = format_board(before, inline=True)
        if self._trace is not None and self._trace_depth != self.thinking_depth:
            self._trace = None  # kept for another depth (its first nodes are not this depth's): recorded again
        if _is_own_function(own):
            if self._trace is None:
                with record_calls(own.__globals__, **self._limits()) as recorder:
                    self._player(before)
                self._trace, self._trace_depth = recorder.trace(), self.thinking_depth
            return self._trace, f"The calls {self.opponent_name} made to result() from {where}."
        if self._trace is None:
            self._trace = record(self.game, before, algorithm="alphabeta", ordered=True, **self._limits())
            self._trace_depth = self.thinking_depth
        searches = isinstance(own, str) and agents.lookup(own, game=self.game.name).searches_to_end
        searcher = "" if searches else f" ({self.opponent_name} does not search; this is what alpha-beta sees)"
        return self._trace, f"Alpha-beta from {where}, best moves first{searcher}."


def _is_own_function(opponent: Opponent) -> bool:
    """Return True for a person's own CS50-style function (not a name or a registered player)."""
    return not isinstance(opponent, str) and getattr(opponent, "game", None) is None and hasattr(opponent, "__globals__")
