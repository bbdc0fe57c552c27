"""The checks the lessons' hidden tests call: a student's function against the reference.

Each ``check_*`` function runs the student's function on every relevant position (the 3x3
space is small: all 5,478 reachable positions, ``ttt.games.classic.reachable_positions()``),
compares each answer with the reference (``ttt.tictactoe``, ``ttt.games.classic``,
``ttt.agents``, ``ttt.games.nineboard``), and prints a one-line summary, which it also returns
(hidden tests assign it, ``_ = check_player(player)``: nbgrader reads a value a grade cell leaves
as its output as the cell's score). On wrong answers it raises `CheckFailed` (an
AssertionError) whose message lists each kind of mistake once, with its board drawn, the input,
what was expected and what came back, and no grader code.

While the student's function runs, the reference functions that compute the same thing are
switched off (calling them raises inside the student's code), and the student's code is
searched for them beforehand, so a function that hands the work to the reference fails with a
message saying so. A function that is still the lesson's stub raises NotImplementedError as is.
Each function is graded on its own: where it uses another of the student's functions (``result``
calls ``player``, ``terminal`` calls ``winner``), the check puts the reference one in its place
while it runs; the visible tests (`returned`, `expect_raises`) do the same for every graded function
of the lesson it calls (`student.stand_ins`), so one slip fails only its own function's tests. In a kernel, a failing check shows its message alone, without a traceback, so no
line of the hidden test is shown.

Time budgets. The checks bound their work, not their time: each checks a fixed set of cases
(all 39,366 line_score cases, 3,539 nine-board positions for evaluate, 119 depth-limited moves,
the 12 positions of the pruning count), so the same submission is checked on the same cases
on any machine; `returned`'s deadline for a visible test counts CPU time, not wall time. The
course's cell limit (``grader.course.CELL_TIMEOUT``, 120 s of wall time) sits far above what
the slowest honest solution needs (see benchmarks/README.md for the measured CPU
times). `check_minimax` and `check_alphabeta` check every reachable position (`search_plan`,
5,478): an optimal move where the game goes on, None where it is over; no clock decides which.

Pruning is counted on the search really done: `check_alphabeta_calls` counts the nodes a search
visits through the functions the lesson hands it (`counting_positions`: a position counts each
time the search moves to it, read at the call, so a board changed in place and changed back is
counted too) and the distinct positions it examines (so a minimax that remembers positions, and
never cuts off, does not pass for one that prunes), refuses a count smaller than any search that finds the best move could make
(`least_positions`), and refuses positions that hold no proof of the move the search chose
(`proves_move`: a search with copies of the rules that shows the lesson's functions other positions),
telling the instructor too. Lesson 5's visible test (`expect_pruning`) applies the same rule, computed
by the same function (`minimax.count_pruning`), to the same positions.

The package, one module a concern (lessons and hidden tests import from ``grader.checks``
itself, whose names stay as they were):

- `failures`: `CheckFailed` and how a failure is told (boards drawn, the student's line);
- `reference`: what each check grades (`REFERENCE`) and the denylist derived from it;
- `student`: calling a student's function under a check, each function graded on its own;
- `display`: the IPython hook that shows a failing check without a traceback;
- `visible`: the visible tests' API (`expect`, `returned`, ...);
- `rules`, `players`, `minimax`, `nineboard`: the checks of lessons 1-2, 3, 4-5 and 6.

A name with a leading underscore belongs to the package: its modules share it, and it may change
with them. Lessons and hidden tests use the names exported here; the grader's own tools reach a
few hooks in the module that holds them (``student.FRESH_COPY`` and ``student.WATCH_CALLS``, context
variables, for ``ttt-grader check`` and the re-check; ``failures.OutOfCpuTime`` for the re-check).
"""

from __future__ import annotations

from grader.checks.failures import CheckFailed, cs50_specification, draw, Passed, ReferenceCalled
from grader.checks.reference import forbidden, public_callables, REFERENCE, reference_allowed
from grader.checks.student import counting_calls, counting_positions, CS50_FUNCTIONS, Examined, SEARCH_FUNCTIONS, substituted
from grader.checks.visible import (
    best_moves, expect, expect_endings, expect_pruning, expect_raises, legal_only, optimal_actions, prunes, returned, shown,
)
from grader.checks.rules import (
    check_actions, check_initial_state, check_player, check_poss_win, check_result, check_rk_board, check_terminal,
    check_utility, check_winner, rk_board,
)
from grader.checks.players import check_win_block
from grader.checks.minimax import (
    ALPHABETA_CALLS_FRACTION, ALPHABETA_POSITIONS_FRACTION, check_alphabeta, check_alphabeta_calls, check_minimax,
    least_positions, minimax_calls, minimax_positions, proves_move, pruning_positions, reachable_positions, search_plan,
)
from grader.checks.nineboard import (
    check_depth_limited, check_evaluate, check_line_score, depth_limited_cases, line_score, nine_board_positions,
    NODE_BUDGET, play_depths,
)

__all__ = [
    "ALPHABETA_CALLS_FRACTION",
    "ALPHABETA_POSITIONS_FRACTION",
    "best_moves",
    "check_actions",
    "check_alphabeta",
    "check_alphabeta_calls",
    "check_depth_limited",
    "check_evaluate",
    "check_initial_state",
    "check_line_score",
    "check_minimax",
    "check_player",
    "check_poss_win",
    "check_result",
    "check_rk_board",
    "check_terminal",
    "check_utility",
    "check_win_block",
    "check_winner",
    "CheckFailed",
    "counting_calls",
    "counting_positions",
    "CS50_FUNCTIONS",
    "cs50_specification",
    "depth_limited_cases",
    "draw",
    "Examined",
    "expect",
    "expect_endings",
    "expect_pruning",
    "expect_raises",
    "forbidden",
    "least_positions",
    "legal_only",
    "line_score",
    "minimax_calls",
    "minimax_positions",
    "proves_move",
    "pruning_positions",
    "reachable_positions",
    "nine_board_positions",
    "NODE_BUDGET",
    "optimal_actions",
    "Passed",
    "play_depths",
    "prunes",
    "public_callables",
    "REFERENCE",
    "reference_allowed",
    "ReferenceCalled",
    "returned",
    "rk_board",
    "search_plan",
    "SEARCH_FUNCTIONS",
    "shown",
    "substituted",
]
