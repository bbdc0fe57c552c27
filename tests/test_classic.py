"""ttt.games.classic: boards as text, the rules on string boards, and the perfect-play solver."""

from __future__ import annotations

import itertools

import pytest

import oracle
from ttt import InvalidActionError, InvalidBoardError
from ttt.games import classic, get_game, game_names

REACHABLE = {oracle.to_text(c) for c in oracle.all_positions()}


def test_parse_board_accepts_exactly_the_reachable_positions_of_all_3_to_the_9():
    accepted = set()
    for squares in itertools.product("XO.", repeat=9):
        text = "".join(squares)
        try:
            accepted.add(classic.parse_board(text))
        except InvalidBoardError:
            pass
    assert accepted == REACHABLE


@pytest.mark.parametrize(
    "text, board",
    [
        ("XO./.X./..O", "XO..X...O"),
        ("XO. .X. ..O", "XO..X...O"),
        ("XO-\n-X-\n__O", "XO..X...O"),
        ("xo./.x./..o", "XO..X...O"),
        ("|X|O|.|\n|.|X|.|\n|.|.|O|", "XO..X...O"),
        ("........./", "........."),
    ],
)
def test_parse_board_spellings(text, board):
    assert classic.parse_board(text) == board


@pytest.mark.parametrize(
    "text, reason",
    [
        ("XO./.X.", "has 6 squares; a board has 9"),
        ("XO./.X./..O./...", "has 13 squares"),
        ("XO./.Y./..O", "'Y' is not a square"),
        ("XO./.0./...", "'0' is a zero; write the letter O"),
        ("XX./.X./...", "has 3 X and 0 O"),
        ("OO./.../...", "has 0 X and 2 O"),
        ("XXX/OOO/...", "cannot both have three in a row"),
        ("XXX/OO./..O", "O played on after X had already won"),
        ("OOO/XX./X.X", "X played on after O had already won"),
        (None, "not None$"),
        ([["X", None, None]] * 3, r"not \[\['X', None, None\]"),
    ],
)
def test_parse_board_says_why_a_board_is_refused(text, reason):
    with pytest.raises(InvalidBoardError, match=reason):
        classic.parse_board(text)


def test_solve_matches_the_oracle_and_plays_an_optimal_move_everywhere():
    for text in REACHABLE:
        cells = oracle.from_text(text)
        value, move = classic.solve(text)
        assert value == oracle.game_value(cells), text
        if oracle.over(cells):
            assert move is None
        else:
            assert oracle.game_value(oracle.after(cells, divmod(move, 3))) == value, text
            assert move in classic.optimal_moves(text)


def test_solve_takes_a_win_now_over_a_win_later():
    for text in REACHABLE:
        if classic.is_terminal(text):
            continue
        wins = classic.winning_squares(text, classic.to_move(text))
        if wins:
            assert classic.solve(text)[1] in wins, text


def test_play_refuses_illegal_moves_with_the_reason():
    with pytest.raises(InvalidActionError, match="square 9 is not on the board"):
        classic.play(classic.EMPTY_BOARD, 9)
    with pytest.raises(InvalidActionError, match="square 4 is taken by X"):
        classic.play("....X....", 4)
    with pytest.raises(InvalidActionError, match="the game is over: X has won"):
        classic.play("XXXOO....", 8)


def test_parse_move_for_people():
    game = get_game("tictactoe")
    assert game.parse_move(game.initial(), " 4 ") == 4
    for text, reason in [("four", "is not a number"), ("-1", "is not on the board"), ("", "is not a number")]:
        with pytest.raises(InvalidActionError, match=reason):
            game.parse_move(game.initial(), text)


def test_format_board_numbered_and_inline():
    assert classic.format_board("XO..X...O", numbered=True) == "X O 2\n3 X 5\n6 7 O"
    assert classic.format_board("XO..X...O", inline=True) == "XO./.X./..O"


def test_unknown_game_lists_the_games():
    with pytest.raises(ValueError, match="unknown game 'chess'; choose one of: " + ", ".join(game_names())):
        get_game("chess")
