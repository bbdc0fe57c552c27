"""The 9x9 board widget, clicked as a person would, without a browser: the state sent to it checked."""

from __future__ import annotations

import pytest

from ttt import agents
from ttt.games import game_names
from ttt.games.bigboard import BigBoardGame, BigState
from ttt.widgets.bigboard import BigBoard


def framed(widget: BigBoard) -> list[int]:
    """Return the boards the browser frames as open to the person."""
    return widget.playable_boards


def marks(widget: BigBoard) -> str:
    """Return the 81 squares the browser is sent."""
    return widget.squares


@pytest.mark.parametrize("game", ["nine-board", "ultimate"])
def test_a_new_game_shows_81_empty_squares_all_boards_open(game):
    widget = BigBoard(game, opponent="random", seed=1)
    assert marks(widget) == "." * 81 and widget.size == 9
    assert framed(widget) == list(range(9))
    assert "Your move (X): any open board" in widget.status


@pytest.mark.parametrize("game", ["nine-board", "ultimate"])
def test_a_click_plays_the_computer_replies_and_the_next_board_is_framed(game):
    widget = BigBoard(game, opponent="random", seed=2)
    widget.click(4, 7)
    squares = widget.state.squares
    assert squares[9 * 4 + 7] == "X"
    assert squares.count("O") == 1 and squares.index("O") // 9 == 7  # O was sent to board 7
    assert marks(widget) == squares
    sent_to = widget.state.sent_to
    assert framed(widget) == [sent_to]
    assert widget.legal == sorted(9 * b + c for b, c in widget.game.moves(widget.state))
    assert f"play on board {sent_to}" in widget.status
    assert "The computer (random) took board 7" in widget.status


@pytest.mark.parametrize("game", ["nine-board", "ultimate"])
def test_the_default_opponent_replies_on_the_board_it_was_sent_to(game):
    """The menu's first choice, `default` (the compiled search with the fast extra), answers a
    click within its time, on the board the click sent it to."""
    widget = BigBoard(game, seed=8, seconds=0.05)
    assert widget.opponent == "default"
    widget.click(4, 7)
    squares = widget.state.squares
    assert squares.count("O") == 1 and squares.index("O") // 9 == 7
    assert "The computer (default) took board 7" in widget.status


def test_illegal_clicks_are_refused_with_the_reason_and_change_nothing():
    widget = BigBoard("nine-board", opponent="random", seed=3)
    widget.click(4, 4)
    before = widget.state
    wrong = (before.sent_to + 1) % 9
    widget.click(wrong, 0)
    assert widget.state == before
    assert "wrong board: you must play on board" in widget.status and widget.status_kind == "error"
    taken = next(c for c in range(9) if before.squares[9 * before.sent_to + c] != ".") if before.sent_to == 4 else None
    if taken is not None:
        widget.click(4, taken)
        assert "is taken" in widget.status and widget.state == before


def test_playing_o_the_computer_opens_and_new_game_starts_again():
    widget = BigBoard("ultimate", opponent="line-count", side="O", seed=4)
    assert widget.state.squares.count("X") == 1 and widget.game.to_move(widget.state) == "O"
    assert "Your move (O)" in widget.status
    widget.side = "X"  # switching sides starts a new game with the person to move
    assert widget.state == BigState("." * 81, None)
    widget.click(0, 0)
    widget.new_game()
    assert widget.state == BigState("." * 81, None) and "New game." in widget.status


@pytest.mark.parametrize("game", ["nine-board", "ultimate"])
def test_a_whole_game_ends_with_a_result_and_later_clicks_are_refused(game):
    widget = BigBoard(game, opponent="random", seed=5)
    while not widget.game.is_terminal(widget.state):
        board, cell = widget.game.moves(widget.state)[0]
        widget.click(board, cell)
    assert any(word in widget.status for word in ("you beat the computer", "beat you", "tie"))
    assert framed(widget) == []
    winner = widget.game.winner(widget.state)
    if winner:  # the winning line is sent to be highlighted
        if game == "nine-board":
            assert len(widget.line) == 3 and all(widget.squares[s] == winner for s in widget.line)
        else:
            assert len(widget.line) == 27 and all(widget.owners[s // 9] == winner for s in widget.line)
        assert widget.won_by in ("you", "computer")
    before = widget.state
    widget.click(0, 0)
    assert "The game is over" in widget.status and widget.state == before


def test_in_ultimate_a_won_board_cannot_be_played_when_sent_anywhere():
    widget = BigBoard("ultimate", opponent="random", seed=6)
    game = widget.game
    picture = """
    . . . | . . . | . . .
    O . . | . X . | . . .
    . . . | . . . | . . .
    ------+-------+------
    X X X | . . . | . . .
    . . . | . . . | . . O
    . . . | . . . | O . .
    ------+-------+------
    . . . | O . . | . . .
    . . . | . . . | . . .
    . . . | . . . | . . .
    """
    widget.session.state = game.parse(picture, board=None)  # X to move anywhere; X has won board 3
    widget._refresh()
    assert 3 not in framed(widget) and len(framed(widget)) == 8
    assert widget.owners[3] == "X" and widget.owners.count("") == 8
    widget.click(3, 4)
    assert "board 3 is closed: X has won it" in widget.status


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        BigBoard("chess")
    players = ", ".join(agents.names("nine-board"))
    with pytest.raises(ValueError, match=f"^unknown player 'nobody'; choose one of: {players}$"):
        BigBoard("nine-board", opponent="nobody")
    with pytest.raises(ValueError, match=f"^player 'minimax' searches to the end of the game, .*; choose one of: {players}$"):
        BigBoard("nine-board", opponent="minimax")
    with pytest.raises(ValueError, match=f"^unknown game 'tictactoe'; choose one of: {', '.join(game_names(BigBoardGame))}$"):
        BigBoard("tictactoe")
    with pytest.raises(ValueError, match="side must be 'X' or 'O'"):
        BigBoard("ultimate", side="Z")


def test_the_depth_4_line_count_player_is_listed_by_what_it_does():
    widget = BigBoard("nine-board", opponent="line-count", side="O", seed=7)
    labels = [label for label, _ in widget.opponents]
    assert "line-count" in labels and not any("seed" in label for label in labels)
    assert widget.opponent_label == "line-count" and "line-count" in widget.status
    assert widget.state.squares.count("X") == 1
