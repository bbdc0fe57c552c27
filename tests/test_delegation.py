"""A student's function may not hand its work to the package: every public callable of ``ttt`` and
``grader``, adapted to each check's signature, is refused by every check, and the delegations
students found (through ``small_winner``, ``small_status``, ``winning_cells``, the grader's own
``rk_board``) fail the visible tests with the same message as the hidden check."""

from __future__ import annotations

import importlib
import pkgutil
import random
import textwrap

import pytest

import grader
import oracle
import ttt
import ttt.tictactoe as ref
from grader import checks
from grader.checks import CheckFailed
from grader.checks.failures import cpu_limit, OutOfCpuTime
from grader.checks.student import _focused, _positions
from ttt.games import nineboard
from ttt.games.classic import TicTacToe

for _package in (ttt, grader):  # every module, so that every public callable is handed in
    for _module in pkgutil.walk_packages(_package.__path__, _package.__name__ + "."):
        if not _module.name.endswith("__main__"):
            importlib.import_module(_module.name)

CHECKS = {
    "player": checks.check_player, "actions": checks.check_actions, "result": checks.check_result,
    "winner": checks.check_winner, "terminal": checks.check_terminal, "utility": checks.check_utility,
    "minimax": lambda f: checks.check_minimax(f), "alphabeta": lambda f: checks.check_alphabeta(f),
    "rk_board": checks.check_rk_board, "poss_win": checks.check_poss_win, "win_block": checks.check_win_block,
    "line_score": checks.check_line_score, "evaluate": checks.check_evaluate, "depth_limited": checks.check_depth_limited,
}
assert set(CHECKS) == set(checks.REFERENCE)
BOARD = {"player", "actions", "winner", "terminal", "utility", "minimax", "alphabeta", "rk_board", "win_block"}
MOVES = {"minimax", "alphabeta", "win_block"}


def _answer(kind: str, value):
    """What a callable returned, turned into what the check asks for where the shapes differ."""
    value = getattr(value, "move", value) if hasattr(value, "move") and not isinstance(value, (str, tuple)) else value
    if kind in MOVES and isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 8:
        return divmod(value, 3)
    if kind == "actions" and isinstance(value, (list, tuple)) and all(isinstance(x, int) for x in value):
        return {divmod(x, 3) for x in value}
    if kind == "result" and isinstance(value, str) and len(value) == 9:
        return ref.from_text(value)
    if kind == "poss_win" and isinstance(value, (list, tuple)):
        return value[0] + 1 if value else 0
    return value


def _text_of_program2(b):
    return "".join({2: ".", 3: "X", 5: "O"}.get(x, "?") for x in b[1:])


def adapters(kind: str, f):
    """Yield (how, function with the check's signature) for a callable: called as it is, on
    text boards, and as a game's function (a game object first)."""
    if kind in BOARD:
        yield "as is", lambda board: _answer(kind, f(board))
        yield "on text", lambda board: _answer(kind, f(ref.to_text(board)))
        yield "with a game", lambda board: _answer(kind, f(TicTacToe(), ref.to_text(board)))
    elif kind == "result":
        yield "as is", lambda board, action: _answer(kind, f(board, action))
        yield "on text", lambda board, action: _answer(kind, f(ref.to_text(board), 3 * action[0] + action[1]))
        yield "with a game", lambda board, action: _answer(kind, f(TicTacToe(), ref.to_text(board), 3 * action[0] + action[1]))
    elif kind == "poss_win":
        yield "as is", lambda b, p: _answer(kind, f(b, p))
        yield "on text", lambda b, p: _answer(kind, f(_text_of_program2(b), p))
    elif kind == "line_score":
        yield "as is", lambda small, p: _answer(kind, f(small, p))
    elif kind == "evaluate":
        yield "as is", lambda state: _answer(kind, f(state))
        yield "with a game", lambda state: _answer(kind, f(nineboard.NineBoard(), state))
    elif kind == "depth_limited":
        yield "as is", lambda state, depth: _answer(kind, f(state, depth))
        yield "with a game", lambda state, depth: _answer(kind, f(nineboard.NineBoard(), state, depth))
        game = nineboard.NineBoard()
        yield "with a game and keywords", lambda state, depth: _answer(
            kind, f(game, state, depth=depth, evaluate=game.line_count_evaluate))


CALLABLES = checks.public_callables()
SECONDS = 10  # what a check may take on one callable: past it, the callable scores zero as a timed-out cell does
_EVERY = _positions()
# A check narrowed to some positions fails only if the whole check fails: a callable is first
# checked on these, and on everything only if it passes here (so the answer is the whole check's).
SAMPLE = tuple(_EVERY[:40]) + tuple(p for p in _EVERY if ref.terminal(ref.from_text(p)))[:40]


def refused(check, student) -> bool:
    """True if `check` refuses `student`: on the sample of positions, else on all of them."""
    for only in (SAMPLE, None):
        try:
            with _focused(only), cpu_limit(SECONDS):  # a search of a whole nine-board game would not end
                check(student)
        except (CheckFailed, NotImplementedError, OutOfCpuTime):
            return True
    return False


def test_every_module_s_public_callables_are_handed_in():
    names = {f"{c.__module__}.{c.__qualname__}" for c in CALLABLES}
    assert len(CALLABLES) > 250
    for expected in ("ttt.games.bigboard.line_score", "ttt.games.ultimate.small_status", "grader.checks.rules.rk_board",
                     "grader.cli.main", "ttt.search.mcts", "ttt.agents.make", "ttt.games.classic.TicTacToe"):
        assert expected in names, expected


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")  # callables handed the wrong arguments warn about them
@pytest.mark.parametrize("kind", sorted(CHECKS))
def test_every_public_callable_is_refused_by_every_check(kind, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a callable that writes files writes them here
    random.seed(0)
    accepted = [f"{f.__module__}.{f.__qualname__} ({how})"
                for f in CALLABLES for how, student in adapters(kind, f) if not refused(CHECKS[kind], student)]
    assert accepted == []


def _terminal(board):
    """The independent oracle's answer: the game is over."""
    return oracle.over(tuple(cell for row in board for cell in row))


def test_the_sample_is_a_shortcut_not_a_weaker_check():
    """A function wrong on a sampled position is refused there; one right on the sample but wrong
    elsewhere passes the sample and is refused by the whole check; a right one passes both."""
    last = _EVERY[-1]
    assert last not in SAMPLE

    def wrong_off_the_sample(board):
        cells = tuple(cell for row in board for cell in row)
        return not _terminal(board) if oracle.to_text(cells) == last else _terminal(board)

    with _focused(SAMPLE):
        CHECKS["terminal"](wrong_off_the_sample)
    assert refused(CHECKS["terminal"], wrong_off_the_sample)
    assert refused(CHECKS["terminal"], lambda board: False)
    assert not refused(CHECKS["terminal"], _terminal)


# -- the delegations students found, in the hidden checks and the visible tests --------------

DELEGATIONS = {
    "winner": ("def winner(board):\n    return ttt.games.bigboard.small_winner(to_text(board))",
               "expect(winner(board), None, call='winner(board)', kind='winner', board=board)",
               "ttt.games.classic.winner"),
    "terminal": ("def terminal(board):\n    return ttt.games.ultimate.small_status(to_text(board)) != '.'",
                 "expect(terminal(board), False, call='terminal(board)', kind='bool', board=board)",
                 "ttt.games.ultimate.small_status"),
    "win_block": ("def win_block(board):\n"
                  "    text = to_text(board)\n"
                  "    me = 'X' if text.count('X') == text.count('O') else 'O'\n"
                  "    for p in (me, 'O' if me == 'X' else 'X'):\n"
                  "        cells = ttt.games.bigboard.winning_cells(text, p)\n"
                  "        if cells:\n"
                  "            return divmod(cells[0], 3)\n"
                  "    return next(divmod(s, 3) for s in (4, 0, 2, 6, 8, 1, 3, 5, 7) if text[s] == '.')",
                  "expect(returned(win_block, board), (1, 1), call='win_block(board)', kind='action', board=board)",
                  "ttt.games.classic.winning_squares"),
    "rk_board": ("def rk_board(board):\n    return grader.checks.rk_board(board)",
                 "expect(rk_board(board), [0] + [2] * 9, call='rk_board(board)', kind='ten ints', board=board)",
                 "grader.checks.rk_board"),
}


def _notebook(code: str) -> dict:
    namespace = {"__name__": "__main__"}
    exec("import ttt.games.bigboard, ttt.games.ultimate, grader.checks\n"
         "from ttt.tictactoe import to_text, initial_state\n"
         "from grader.checks import expect, returned\n" + code, namespace)
    return namespace


@pytest.mark.parametrize("kind", sorted(DELEGATIONS))
def test_a_delegation_fails_the_visible_test_with_the_hidden_check_s_message(kind):
    code, visible, used = DELEGATIONS[kind]
    namespace = _notebook(code)
    with pytest.raises(CheckFailed) as hidden:
        CHECKS[kind](namespace[kind])
    with pytest.raises(CheckFailed) as shown:
        exec("board = initial_state()\n" + visible, namespace)
    assert str(shown.value) == str(hidden.value)
    assert f"{kind} uses {used}, which is part of" in str(hidden.value)
    assert "scores zero" in str(hidden.value)


def test_the_delegations_work_when_the_reference_is_allowed(capsys):
    """The four delegations compute the right answers: only the refusal stops them."""
    with checks.reference_allowed():
        for kind, (code, _, _) in DELEGATIONS.items():
            assert "correct on" in CHECKS[kind](_notebook(code)[kind])


def test_a_dynamic_delegation_is_caught_when_it_runs():
    namespace = _notebook(textwrap.dedent("""
        def terminal(board):
            module = __import__("ttt.games.ultimate", fromlist=["x"])
            return getattr(module, "small_" + "status")(to_text(board)) != "."
    """))
    message = str(pytest.raises(CheckFailed, CHECKS["terminal"], namespace["terminal"]).value)
    assert "terminal uses ttt.games.ultimate.small_status" in message
