"""ttt.agents: every player is legal everywhere, the searchers never lose, each seed's rules hold."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

import oracle
from ttt import InvalidActionError, InvalidBoardError, agents
from ttt.games import get_game
from ttt.games.bigboard import BigState
from ttt.tictactoe import from_text

LIVE = [oracle.to_text(c) for c in oracle.all_positions() if not oracle.over(c)]
LINES = oracle.ALL_LINES
SEEDS = range(8)


def mover(board: str) -> str:
    return oracle.next_player(oracle.from_text(board))


def completing(board: str, player: str) -> list[int]:
    """Squares where `player` completes a line (the oracle's own reading of the rules)."""
    return sorted({k for line in LINES for k in line if board[k] == "." and sum(board[i] == player for i in line) == 2})


def other(player: str) -> str:
    return "O" if player == "X" else "X"


PLAYERS_PAGE = Path(__file__).resolve().parent.parent / "docs" / "players.md"


def documented_players(header: str) -> set[str]:
    """The names in the first column of the table of docs/players.md whose header row is `header`."""
    lines = PLAYERS_PAGE.read_text().splitlines()
    rows = itertools.takewhile(lambda line: line.startswith("|"), lines[lines.index(header) + 2:])
    return {name for row in rows for name in re.findall(r"`([^`]+)`", row.split("|")[1])}


@pytest.mark.parametrize("header, games", [("| name | what it does | source |", ["tictactoe"]),
                                           ("| player | what it does |", ["nine-board", "ultimate"])])
def test_the_players_page_has_a_row_for_each_player_of_its_games(header, games):
    for game in games:
        assert documented_players(header) == set(agents.names(game)), f"docs/players.md's table of {game}'s players"


@pytest.mark.parametrize("game", ["nine-board", "ultimate"])
def test_the_big_boards_are_played_by_their_searchers_and_random_play_not_by_the_3x3_players(game):
    names = agents.names(game)
    assert names == sorted(names) and {"default", "line-count", "mcts", "random"} <= set(names)
    assert not {"minimax", "alphabeta", "win-block", "ai1", "ai2", "rich-knight"} & set(names)


@pytest.mark.parametrize("game, mover, seed", [("nine-board", "X", 4), ("ultimate", "O", 7)])
@pytest.mark.parametrize("name, options", [("random", {}), ("line-count", {}), ("default", {"seconds": 0.02}),
                                           ("mcts", {"iterations": 20})])
def test_every_big_board_player_plays_legal_moves_to_the_end(game, mover, seed, name, options):
    rules = get_game(game)
    player = agents.make(name, seed, game=game, **options)
    opponent = agents.make("random", seed + 1, game=game)
    state = rules.initial()
    while not rules.is_terminal(state):
        state = rules.play(state, (player if rules.to_move(state) == mover else opponent)(state))
    with pytest.raises(ValueError, match="the game is over"):
        player(state)


def test_names_and_unknown_names():
    names = agents.names()
    assert names == sorted(names) and {"ai1", "ai2", "alphabeta", "minimax", "random", "rich-knight", "win-block"} <= set(names)
    with pytest.raises(ValueError, match=f"^unknown player 'perfect'; choose one of: {', '.join(names)}$"):
        agents.make("perfect")


@pytest.mark.parametrize("name, game, message", [
    ("win-block", "ultimate", "player 'win-block' plays tictactoe only, not ultimate; choose one of: "),
    ("minimax", "nine-board", "player 'minimax' searches to the end of the game, which nine-board is too big for; "
                              "choose one of: "),
    ("mcts", "tictactoe", "player 'mcts' plays nine-board and ultimate only, not tictactoe; choose one of: "),
])
def test_a_player_asked_for_a_game_it_does_not_play_says_which_it_plays(name, game, message):
    for ask in (lambda: agents.make(name, game=game), lambda: agents.options(name, game=game),
                lambda: agents.lookup(name, game=game)):
        with pytest.raises(ValueError) as refused:
            ask()
        assert str(refused.value) == message + ", ".join(agents.names(game))


@pytest.mark.parametrize("name", agents.names())
def test_every_player_returns_a_legal_move_on_every_live_position(name):
    for seed in (0, 1) if name in ("random", "ai1", "ai2") else (None,):
        play = agents.make(name, seed=seed)
        for board in LIVE:
            square = play(board)
            assert isinstance(square, int) and board[square] == ".", (name, board, square)


@pytest.mark.parametrize("name", agents.names())
def test_a_finished_game_is_refused(name):
    with pytest.raises(ValueError, match="the game is over"):
        agents.make(name, seed=0)("XXX/OO./...")


def test_players_take_boards_typed_as_text_and_refuse_bad_ones():
    assert agents.make("win-block")("XX./OO./...") == 2
    with pytest.raises(InvalidBoardError, match="has 3 X and 0 O"):
        agents.make("win-block")("XXX/.../...")


def test_seeded_players_repeat_themselves():
    for name in ("random", "ai1", "ai2"):
        first = [agents.make(name, seed=7)(b) for b in LIVE[:400]]
        again = [agents.make(name, seed=7)(b) for b in LIVE[:400]]
        assert first == again


def never_loses(play, side: str) -> int:
    """Return how many final positions were reached; fail if any is a loss for `side`."""
    finals = 0
    stack = ["." * 9]
    while stack:
        board = stack.pop()
        cells = oracle.from_text(board)
        if oracle.over(cells):
            assert oracle.line_owner(cells) in (side, None), f"{side} lost: {board}"
            finals += 1
            continue
        if mover(board) == side:
            stack.append(oracle.to_text(oracle.after(cells, divmod(play(board), 3))))
        else:
            stack.extend(oracle.to_text(oracle.after(cells, a)) for a in oracle.free_actions(cells))
    return finals


@pytest.mark.parametrize("name", ["minimax", "alphabeta"])
@pytest.mark.parametrize("side", ["X", "O"])
def test_the_unbeatable_players_never_lose_against_every_line_of_play(name, side):
    assert never_loses(agents.make(name), side) > 50


def test_a_rule_based_player_does_lose_somewhere():
    with pytest.raises(AssertionError, match="lost"):
        never_loses(agents.make("win-block"), "O")


def test_win_block_follows_its_design_everywhere():
    play = agents.make("win-block")
    for board in LIVE:
        me = mover(board)
        expected = (completing(board, me) or completing(board, other(me)) or [next(s for s in (4, 0, 2, 6, 8, 1, 3, 5, 7) if board[s] == ".")])[0]
        assert play(board) == expected, board


def test_ai1_follows_its_design_where_its_rules_decide():
    players = [agents.make("ai1", seed=s) for s in SEEDS]
    decided = 0
    for board in LIVE:
        me, free = mover(board), board.count(".")
        moves = {p(board) for p in players}
        wins = completing(board, me)
        if free <= 5 and wins:
            assert moves <= set(wins), board
            decided += 1
        elif me not in board and board[4] == ".":
            assert moves == {4}, board
            decided += 1
    assert decided > 1000


def test_ai2_follows_its_design_where_its_rules_decide():
    players = [agents.make("ai2", seed=s) for s in SEEDS]
    decided = 0
    for board in LIVE:
        me, free = mover(board), board.count(".")
        moves = {p(board) for p in players}
        open_lines = [line for line in LINES if me in [board[i] for i in line] and other(me) not in [board[i] for i in line]]
        attacks = {k for line in open_lines for k in line if board[k] == "."}
        if free < 7 and attacks:
            assert moves <= attacks, board
            decided += 1
        elif me not in board:
            corners = {k for k in (0, 2, 6, 8) if board[k] == "."}
            assert moves <= corners, board
            decided += 1
    assert decided > 1000


def poss_win_1_to_9(board: str, player: str) -> int:
    """Program 2's PossWin, read from Rich & Knight's Program 2: products of 2/3/5 codes, 18 for X and 50 for O."""
    code = {".": 2, "X": 3, "O": 5}
    for line in LINES:
        product = code[board[line[0]]] * code[board[line[1]]] * code[board[line[2]]]
        if product == (18 if player == "X" else 50):
            return next(k for k in line if board[k] == ".") + 1
    return 0


def test_rich_knight_follows_program_2_where_its_schedule_decides():
    play = agents.make("rich-knight")
    decided = 0
    for board in LIVE:
        turn = 10 - board.count(".")
        blank = lambda n: board[n - 1] == "."  # noqa: E731 (squares 1-9 as in the seed)
        px, po = poss_win_1_to_9(board, "X"), poss_win_1_to_9(board, "O")
        if turn == 1:
            want = 5
        elif turn == 2:
            want = 5 if blank(5) else 1
        elif turn == 3:
            want = 9 if blank(9) else 3
        elif turn in (4,):
            want = px or None
        elif turn in (5, 7, 9):
            want = px or po or ((7 if blank(7) else 3) if turn == 5 else None)
        else:
            want = po or px or None
        if want and blank(want):
            assert play(board) + 1 == want, (board, turn)
            decided += 1
    assert decided > 2000


def test_cs50_adapters_round_trip_and_catch_illegal_moves():
    move = agents.cs50("minimax")
    assert move(from_text("XX./OO./...")) == (0, 2)
    player = agents.from_cs50(move)
    assert player("XX./OO./...") == 2
    cheat = agents.from_cs50(lambda board: (0, 0))
    with pytest.raises(InvalidActionError, match="square 0 is taken"):
        cheat("X../.O./...")
    assert agents.as_player("random", seed=1)("........." ) in range(9)


def test_options_name_what_a_player_accepts():
    assert agents.options("minimax") == []
    assert agents.options("default", game="nine-board") == ["seconds"]
    with pytest.raises(ValueError, match="unknown player 'nope'"):
        agents.options("nope")


def test_an_option_a_player_does_not_take_is_refused_naming_the_ones_it_does():
    with pytest.raises(ValueError, match="player 'random' has no option 'engine'; it takes none"):
        agents.make("random", game="ultimate", engine="plain")
    with pytest.raises(ValueError, match="player 'default' has no option 'iterations'; it takes engine, seconds"):
        agents.make("default", game="ultimate", iterations=10)
    with pytest.raises(ValueError, match="player 'minimax' has no option 'seconds'; it takes none"):
        agents.make("minimax", seconds=1)


@pytest.mark.parametrize("name, budget, message", [
    ("mcts", {"iterations": 0}, "iterations must be a whole number of simulations a move, 1 or more, not 0"),
    ("mcts", {"iterations": 2.5}, "not 2.5"),
    ("mcts", {"seconds": 0}, "seconds must be a positive, finite number of seconds a move, not 0"),
    ("default", {"seconds": -1}, "not -1"),
    ("default", {"seconds": "1"}, "not '1'"),
    ("default", {"seconds": float("inf")}, "not inf"),
    ("mcts", {"iterations": 100, "seconds": -1}, "seconds must be a positive, finite number of seconds a move, not -1"),
])
@pytest.mark.parametrize("engine", ["fast", "plain", "teaching"])
def test_a_budget_no_search_can_run_on_is_refused_when_the_player_is_made(name, budget, message, engine):
    with pytest.raises(ValueError, match=message):
        agents.make(name, game="ultimate", engine=engine, **budget)


@pytest.mark.parametrize("game", ["nine-board", "ultimate"])
def test_a_big_board_player_given_text_says_how_to_make_a_position(game):
    rules = get_game(game)
    play = agents.make("random", 0, game=game)
    with pytest.raises(InvalidBoardError, match=rf"takes a position, not str \(text does not say which board .*get_game\('{game}'\)\.parse\(text, board=B\)"):
        play(rules.initial().squares)
    with pytest.raises(InvalidBoardError, match=rf"^the {game} player takes a position, not NoneType; get_game"):
        play(None)
    assert play(rules.initial()) in rules.moves(rules.initial())


@pytest.mark.parametrize("game", ["nine-board", "ultimate"])
@pytest.mark.parametrize("state, message", [
    (BigState("." * 81, 12), "board 12 is out of range: boards are numbered 0 to 8"),
    (BigState("." * 81, "5"), r"the board the mover is sent to is a number 0 to 8 \(or None\), not '5'"),
    (BigState("O" + "." * 80, None), "0 X and 1 O: X moves first"),
    (BigState("Z" * 81, None), "81 characters of X, O and '.'"),
    (BigState("." * 80, None), "81 characters of X, O and '.'"),
])
def test_a_big_board_player_refuses_a_position_no_game_reaches(game, state, message):
    """Built by hand, not by ``parse``: the player says what is wrong, as ``parse`` would,
    instead of "the game is over" or a move from an impossible position."""
    with pytest.raises(InvalidBoardError, match=message):
        agents.make("random", 0, game=game)(state)
    with pytest.raises(InvalidBoardError, match=message):
        get_game(game).check_state(state)
