"""The rule-based 3x3 players: the win-block-best-square game's computer, the AI1/AI2 design's AI1
and AI2, and Rich & Knight's Program 2. They read the 3x3 board, so they play the classic game
only (`games`); random play and the unbeatable searchers play any game (``ttt.agents.generic``).

Each plays ``board -> square`` on nine-character boards (squares 0-8 row by row). The source
designs name one side (AI1 plays X, AI2 plays O, the win-block-best-square game's computer is
"cpu"); here each player plays whichever side is to move, its own mark in place of the source's. Every player returns a legal move on every non-terminal board.
"""

from __future__ import annotations

import random

from ttt.agents import Agent
from ttt.games.classic import (
    CENTRE_CORNERS_EDGES,
    LINES,
    TicTacToe,
    line_threats,
    moves,
    other,
    to_move,
    winning_squares,
)

CLASSIC = (TicTacToe.name,)  # the one game these players play
CORNERS = (0, 2, 6, 8)


def _require_moves(board: str) -> list[int]:
    """Return the legal squares; raise ValueError if the game is already over."""
    free = moves(board)
    if not free:
        raise ValueError(f"the game is over on {board[:3]}/{board[3:6]}/{board[6:]}: there is no move to make")
    return free


# --- the win-block-best-square game: the terminal game's cpuMove ------------------------------------------------------


def win_block_move(board: str) -> int:
    """Return the win-block-best-square game's cpuMove: win, else block, else the first free of 4, 0, 2, 6, 8, 1, 3, 5, 7.

    The win and the block are the lowest-numbered such square (the design scans legalMoves in
    order). The win-block-best-square game tests for the player's win by placing the *computer's* piece, so as
    written it never blocks; the evident intent, followed here, is to test the player's piece.
    """
    free = _require_moves(board)
    me = to_move(board)
    for player in (me, other(me)):  # win, else block
        squares = winning_squares(board, player)
        if squares:
            return squares[0]
    return next(s for s in CENTRE_CORNERS_EDGES if s in free)


class WinBlock(Agent):
    """The win-block-best-square game's computer: win, else block, else the best free square (centre, corners, edges)."""

    name = "win-block"
    games = CLASSIC

    def __call__(self, board: str) -> int:
        return win_block_move(board)


# --- the AI1/AI2 design: AI1 and AI2 -----------------------------------------------------------------------


def ai1_move(board: str, rng: random.Random) -> int:
    """Return the AI1/AI2 design's AI1 move: with 5 or fewer free squares, a random winning square if any;
    else the centre on its first turn, else a random free square.

    The AI1/AI2 design's CheckIfSetIsWinnable calls a line winnable when it holds no opponent mark, and
    never asks whether the square lies on the line, so as written every free square would be
    "winning". The evident intent (the step is CheckWinningMove) is followed: a square that
    completes three of its own in a row. Its first turn when the centre is taken (it moved
    second) falls through to a random free square.
    """
    free = _require_moves(board)
    me = to_move(board)
    if len(free) <= 5:
        wins = winning_squares(board, me)
        if wins:
            return rng.choice(wins)
    first_turn = board.count(me) == 0
    if first_turn and board[4] == ".":
        return 4
    return rng.choice(free)


class AI1(Agent):
    """The AI1/AI2 design's AI1: takes a winning square late in the game, opens in the centre, else random."""

    name = "ai1"
    games = CLASSIC

    def __call__(self, board: str) -> int:
        return ai1_move(board, self.rng)


def attack_squares(board: str, me: str) -> tuple[list[int], list[int]]:
    """Return (attack squares, multi-attack squares) for `me` as the AI1/AI2 design's AI2 finds them.

    An attack square is a free square on a line that holds one of `me`'s marks and none of the
    opponent's; a multi-attack square is on two or more such lines.
    """
    them = other(me)
    counts = {}
    for line in LINES:
        marks = [board[i] for i in line]
        if me in marks and them not in marks:
            for i in line:
                if board[i] == ".":
                    counts[i] = counts.get(i, 0) + 1
    attacks = sorted(counts)
    return attacks, [s for s in attacks if counts[s] >= 2]


def ai2_move(board: str, rng: random.Random) -> int:
    """Return the AI1/AI2 design's AI2 move: with fewer than 7 free squares, attack (a multi-attack
    square half the time when there is one); else a random corner on its first turn, else a
    random free square.

    The AI1/AI2 design writes AI2 for O; here it plays its own mark against the other. The design's
    "random corner" on the first turn is read as a random *free* corner.
    """
    free = _require_moves(board)
    me = to_move(board)
    if len(free) < 7:
        attacks, multi = attack_squares(board, me)
        if multi and rng.random() > 0.5:
            return rng.choice(multi)
        if attacks:
            return rng.choice(attacks)
    if board.count(me) == 0:
        corners = [s for s in CORNERS if board[s] == "."]
        if corners:
            return rng.choice(corners)
    return rng.choice(free)


class AI2(Agent):
    """The AI1/AI2 design's AI2: attacks along open lines late in the game, opens in a corner, else random."""

    name = "ai2"
    games = CLASSIC

    def __call__(self, board: str) -> int:
        return ai2_move(board, self.rng)


# --- Rich & Knight's Program 2: Rich & Knight's Program 2 ---------------------------------------------------------

PROGRAM2_CODES = {".": 2, "X": 3, "O": 5}  # Program 2's board: 2 blank, 3 X, 5 O


def program2_board(board: str) -> list[int]:
    """Return Program 2's board B for a nine-character board: B[0] unused (0), then B[1..9]
    row by row, 2 blank, 3 X, 5 O."""
    return [0] + [PROGRAM2_CODES[c] for c in board]


def poss_win(board: str, player: str) -> int:
    """Return Program 2's PossWin(player): a square 1-9 where `player` wins next move, else 0.

    Program 2 finds it as a line whose product of codes is 3*3*2 = 18 (X) or 5*5*2 = 50 (O):
    two of the player's marks and a blank. The lines are checked rows, columns, diagonals,
    and the first found is returned.
    """
    threats = line_threats(board, player)
    return threats[0] + 1 if threats else 0


def make_2(board: str) -> int:
    """Return Program 2's Make_2: 5 (the centre, 1-9) if blank, else a blank non-corner square.

    "Suitable" is read as: a non-corner square on a line holding one of the mover's marks and
    otherwise blank (it makes a two); else any blank non-corner; else any blank square, so
    the move is always legal.
    """
    if board[4] == ".":
        return 5
    me = to_move(board)
    edges = [s for s in (1, 3, 5, 7) if board[s] == "."]
    for s in edges:
        for line in LINES:
            if s in line and sorted(board[i] for i in line) == sorted([".", ".", me]):
                return s + 1
    if edges:
        return edges[0] + 1
    return moves(board)[0] + 1


def rich_knight_move(board: str) -> int:
    """Return Rich & Knight's Program 2 move (Rich & Knight's Program 2) as a square 0-8.

    The move number (1-9) is one more than the marks on the board, and picks the rule: odd
    moves are X's, even moves O's. Where a rule names a square that is taken (for example
    "Go(3)" on move 5 after 3 was played), the first blank square is played instead, so the
    move is always legal; Go(Anywhere) is also the first blank square.
    """
    free = _require_moves(board)
    turn = 10 - len([c for c in board if c == "."])

    def blank(n: int) -> bool:
        return board[n - 1] == "."

    def win_or_block(first: str, second: str) -> int:
        return poss_win(board, first) or poss_win(board, second)

    if turn == 1:
        choice = 5
    elif turn == 2:
        choice = 5 if blank(5) else 1
    elif turn == 3:
        choice = 9 if blank(9) else 3
    elif turn == 4:
        choice = poss_win(board, "X") or make_2(board)
    elif turn == 5:
        choice = win_or_block("X", "O") or (7 if blank(7) else 3)
    elif turn == 6:
        choice = win_or_block("O", "X") or make_2(board)
    elif turn in (7, 9):
        choice = win_or_block("X", "O")
    else:  # turn 8
        choice = win_or_block("O", "X")
    if not choice or not blank(choice):
        return free[0]
    return choice - 1


class RichKnight(Agent):
    """Rich & Knight's Program 2: a fixed schedule by move number, PossWin and Make_2."""

    name = "rich-knight"
    games = CLASSIC

    def __call__(self, board: str) -> int:
        return rich_knight_move(board)
