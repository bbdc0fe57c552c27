"""The 9x9 board widget, driven with Button.click() as a person would, without a browser."""

from __future__ import annotations

import pytest

from ttt.games.bigboard import BigState
from ttt.widgets.bigboard import OTHER_BORDER, PLAYABLE_BORDER, TINT, BigBoard


def framed(widget: BigBoard) -> list[int]:
    return [b for b, box in enumerate(widget.boards) if box.layout.border == PLAYABLE_BORDER]


def marks(widget: BigBoard) -> str:
    return "".join(button.description or "." for board in widget.squares for button in board)


@pytest.mark.parametrize("game", ["nine-board", "ultimate"])
def test_a_new_game_shows_81_empty_squares_all_boards_open(game):
    widget = BigBoard(game, opponent="random", seed=1)
    assert len(widget.squares) == 9 and all(len(board) == 9 for board in widget.squares)
    assert marks(widget) == "." * 81
    assert framed(widget) == list(range(9))
    assert "Your move (X): any open board" in widget.status.value


@pytest.mark.parametrize("game", ["nine-board", "ultimate"])
def test_a_click_plays_the_computer_replies_and_the_next_board_is_framed(game):
    widget = BigBoard(game, opponent="random", seed=2)
    widget.click(4, 7)
    squares = widget.state.squares
    assert squares[9 * 4 + 7] == "X"
    assert squares.count("O") == 1 and squares.index("O") // 9 == 7  # O was sent to board 7
    assert marks(widget) == squares
    sent_to = widget.state.board
    assert framed(widget) == [sent_to]
    assert all(widget.boards[b].layout.border == OTHER_BORDER for b in range(9) if b != sent_to)
    assert f"play on board {sent_to}" in widget.status.value
    assert "The computer (random) played board 7" in widget.status.value


def test_illegal_clicks_are_refused_with_the_reason_and_change_nothing():
    widget = BigBoard("nine-board", opponent="random", seed=3)
    widget.click(4, 4)
    before = widget.state
    wrong = (before.board + 1) % 9
    widget.click(wrong, 0)
    assert widget.state == before
    assert "wrong board: you must play on board" in widget.status.value and "ttt-error" in widget.status.value
    taken = next(c for c in range(9) if before.squares[9 * before.board + c] != ".") if before.board == 4 else None
    if taken is not None:
        widget.click(4, taken)
        assert "is taken" in widget.status.value and widget.state == before


def test_playing_o_the_computer_opens_and_new_game_starts_again():
    widget = BigBoard("ultimate", opponent="line-count", side="O", seed=4)
    assert widget.state.squares.count("X") == 1 and widget.game.to_move(widget.state) == "O"
    assert "Your move (O)" in widget.status.value
    widget.side_picker.value = "X"  # switching sides starts a new game with the person to move
    assert widget.state == BigState("." * 81, None)
    widget.click(0, 0)
    widget.new_button.click()
    assert widget.state == BigState("." * 81, None) and "New game." in widget.status.value


@pytest.mark.parametrize("game", ["nine-board", "ultimate"])
def test_a_whole_game_ends_with_a_result_and_later_clicks_are_refused(game):
    widget = BigBoard(game, opponent="random", seed=5)
    while not widget.game.is_terminal(widget.state):
        board, cell = widget.game.moves(widget.state)[0]
        widget.click(board, cell)
    assert any(word in widget.status.value for word in ("you beat the computer", "beat you", "draw"))
    assert framed(widget) == []
    winner = widget.game.winner(widget.state)
    if game == "nine-board" and winner:  # the won small board is tinted in the winner's colour
        won = next(b for b in range(9) if widget._owner(b) == winner)
        assert any(button.style.button_color == TINT[winner] for button in widget.squares[won])
    before = widget.state
    widget.click(0, 0)
    assert "The game is over" in widget.status.value and widget.state == before


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
    widget.state = game.parse(picture, board=None)  # X to move anywhere; X has won board 3
    widget._refresh()
    assert 3 not in framed(widget) and len(framed(widget)) == 8
    assert all(button.style.button_color == TINT["X"] for c, button in enumerate(widget.squares[3]) if c < 3)
    widget.click(3, 4)
    assert "board 3 is closed: X has won it" in widget.status.value


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        BigBoard("chess")
    with pytest.raises(ValueError, match="unknown player 'minimax'; choose one of: default, line-count, mcts, random"):
        BigBoard("nine-board", opponent="minimax")
    with pytest.raises(ValueError, match="side must be 'X' or 'O'"):
        BigBoard("ultimate", side="Z")
