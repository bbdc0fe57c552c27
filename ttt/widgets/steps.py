"""The words of the explorer's step-by-step view: each step of a recorded search, the sentence
that says what it did, and what the nodes it changed now show.

`steps` reads a ``ttt.trace.Trace`` one event at a time, once, and keeps the result while the
trace lives: each step's sentence (`step_sentence`, `event_sentence`: for minimax and
alpha-beta, a node entered, valued, cut off or done; for Monte Carlo tree search, the four
phases of an iteration), the nodes it changed and their value and window lines as the
pictures write them (``ttt.draw.value_text`` and its neighbours). The explorer
(``ttt.widgets.explorer``) and the board widget's thinking panel read these steps.
"""

from __future__ import annotations

import weakref
from typing import Any, Mapping, NamedTuple

from ttt.draw import moves_text, number, plural, side_name, ucb_text, value_text, visits_text, window_text
from ttt.search import Backup, Cutoff, Enter, Event, Exit, Leaf, Rollout, Select
from ttt.trace import Trace, TraceNode

AS_GOOD = "already has a move at least as good"  # why a cutoff is safe when the value equals the bound

class Step(NamedTuple):
    """One event of a recorded search as the step-by-step view shows it (`steps`).

    `number` counts from 1 (step 0 is the moment before the search starts). `node` is the node
    the step is about: its event's; for a selection, the child selected; for a rollout or
    back-up from a node the recording did not keep, the deepest kept node of the iteration's
    `path` (Monte Carlo tree search: the nodes of the iteration under way, root first; empty
    for other searches). `texts` holds (node, value line, window line) for each node whose
    value, window or visits the event changed, as the pictures write them then; `scores`, for
    a selection, (child, its UCB score as `ucb_text` writes it).
    """

    number: int
    event: Event
    node: int
    sentence: str
    texts: tuple[tuple[int, str, str], ...] = ()
    scores: tuple[tuple[int, str], ...] = ()
    path: tuple[int, ...] = ()


_STEPS: "weakref.WeakKeyDictionary[Trace, tuple[Step, ...]]" = weakref.WeakKeyDictionary()


def steps(trace: Trace) -> tuple[Step, ...]:
    """Return the steps of `trace`, one for each event, in order (see `Step`).

    The one place where a search is read step by step: the sentences (`step_sentence`,
    `step_sentences`) and the explorer (``ttt.widgets``) both read these. They are worked out in
    one pass over the events (``Trace.replay``, which also builds the trace's tree) the first
    time they are asked for, and kept while the trace lives: a trace never changes.
    """
    found = _STEPS.get(trace)
    if found is not None:
        return found
    game, windows, visits, known = trace.game, trace.has_windows, trace.has_visits, trace.reports_values
    iteration = 1  # MCTS: the iteration under way
    walk: list[int] = []  # MCTS: its path so far, root first
    made = []
    written: dict[tuple, tuple[str, str]] = {}  # a node's two lines, by what they are made of: written once

    def lines(i: int, node: TraceNode) -> tuple[int, str, str]:
        key = (node.visits, node.total) if visits else (node.done, node.value, node.maximizing, node.alpha, node.beta)
        found = written.get(key)
        if found is None:
            found = written[key] = (visits_text(node) if visits else value_text(node, known=known),
                                    window_text(node) if windows else "")
        return (i, *found)

    for k, (event, changed, nodes) in enumerate(trace.replay(), start=1):
        sentence = event_sentence(game, event, nodes, windows=windows, visits=visits, iteration=iteration)
        texts = tuple([lines(i, nodes[i]) for i in changed])
        about, scores, path = event.node, (), ()
        if visits:
            if isinstance(event, Select):
                scores = tuple((score.node, ucb_text(score)) for score in event.children)
                walk = (walk or [event.node]) + [event.chosen]
                about = event.chosen
            elif isinstance(event, Enter):
                walk = (walk or [event.parent]) + [event.node] if event.parent is not None else [event.node]
            elif isinstance(event, Rollout):
                walk = walk or [event.node]
            elif isinstance(event, Backup):
                walk = [t.node for t in event.path]
                iteration += 1
            if event.node not in nodes and walk:  # below the nodes kept: the deepest kept one on the path
                about = walk[-1]
            path = tuple(walk)
            if isinstance(event, (Backup, Exit)):
                walk = []
        made.append(Step(k, event, about, sentence, texts, scores, path))
    found = tuple(made)
    _STEPS[trace] = found
    return found


def step_sentence(trace: Trace, k: int) -> str:
    """Return one sentence saying what the `k`-th event (1-based) of the search did (`steps`).

    For example "MIN node 12: value 0 <= alpha 0, so its last 2 moves are pruned (7, 8): MAX
    above already has a move at least as good.", or for Monte Carlo tree search "Iteration 7:
    rollout from node 12: 11 random moves, X won." Step 0 is the moment before the search starts.
    """
    if k <= 0 or not trace.events:
        return "Before the search: press Step to start at the root." if trace.events else "No search was recorded."
    return steps(trace)[min(k, len(trace.events)) - 1].sentence


def step_sentences(trace: Trace) -> list[str]:
    """Return `step_sentence(trace, k)` for k = 1 .. len(trace): the sentences of its `steps`."""
    return [step.sentence for step in steps(trace)]


def event_sentence(game: Any, event: Event, nodes: Mapping[int, TraceNode], *, windows: bool, visits: bool = False,
                   iteration: int = 1) -> str:
    """Return the sentence for `event`, given the tree `nodes` as it stands once it has happened.

    With `visits` (Monte Carlo tree search) the sentences name the phase of the `iteration`
    under way: select, expand, rollout, back up.
    """
    if visits:
        return _mcts_sentence(game, event, nodes, iteration)
    node = nodes[event.node]
    name = f"{side_name(node.maximizing)} node {node.id}"
    if isinstance(event, Enter):
        mover = game.to_move(node.state)
        window = f", window α={number(event.alpha)}, β={number(event.beta)}" if windows else ""
        if node.parent is None:
            return f"Start at the root, {name} ({mover} to move{window})."
        return f"Move {game.move_name(node.move)} from node {node.parent} leads to {name} ({mover} to move{window})."
    if isinstance(event, Leaf):
        if event.terminal:
            won = game.winner(node.state)
            outcome = f"{won} has won" if won else "it is a tie"
            return f"{name}: the game is over, {outcome}, so its value is {number(event.value)}."
        return f"{name} is at the depth limit: the heuristic estimates its value as {number(event.value)}."
    if isinstance(event, Cutoff) and not windows:  # a recorded search: only what it did not try is known
        return f"{name}: your search never tried {plural(len(event.skipped), 'move')} here ({moves_text(game, event.skipped)}): a cut-off."
    if isinstance(event, Cutoff):
        n = len(event.skipped)
        which = f"its last move is pruned ({moves_text(game, event.skipped)})" if n == 1 else (
            f"its last {n} moves are pruned ({moves_text(game, event.skipped)})"
        )
        if node.maximizing:
            why = AS_GOOD if event.value == event.beta else "will never allow it: it already has better"
            return f"{name}: value {number(event.value)} >= beta {number(event.beta)}, so {which}: MIN above {why}."
        why = AS_GOOD if event.value == event.alpha else "already has better"
        return f"{name}: value {number(event.value)} <= alpha {number(event.alpha)}, so {which}: MAX above {why}."
    best = f", best move {game.move_name(event.move)}" if event.move is not None else ""
    if node.parent is None:
        return f"The root, {name}, is done: its value is {number(event.value)}{best}. The search is over."
    parent = nodes[node.parent]
    update = ""
    if windows:
        update = f"; node {parent.id} now has α={number(parent.alpha)}, β={number(parent.beta)}"
    return f"{name} is done: value {number(event.value)}{best}. Back to {side_name(parent.maximizing)} node {parent.id}{update}."


def _mcts_sentence(game: Any, event: Event, nodes: Mapping[int, TraceNode], iteration: int) -> str:
    """Return what one event of Monte Carlo tree search did, in the words of its four phases (AIMA Fig. 5.11).

    A recording kept to its first nodes (``ttt.trace.MCTSRecorder``) may roll out from a node it
    did not keep: the sentences say so.
    """
    now = f"Iteration {iteration}"
    if event.node not in nodes:  # a rollout, or a back-up, from a node the recording did not keep
        name = f"node {event.node}, which this recording did not keep"
        if isinstance(event, Rollout):
            outcome = f"{event.winner} won" if event.winner else "a tie"
            return f"{now}: rollout from {name}: {plural(event.moves, 'random move')}, {outcome}."
        if isinstance(event, Backup):
            return _backup_sentence(now, event, f" from {name}")
    node = nodes[event.node]
    name = f"{side_name(node.maximizing)} node {node.id}"
    if isinstance(event, Select):
        ranked = sorted(event.children, key=lambda c: -c.ucb)
        chosen = next(c for c in event.children if c.node == event.chosen)
        mover = game.to_move(node.state)
        others = [c for c in ranked if c is not chosen][:3]
        rest = f" Next best: {', '.join(f'{game.move_name(c.move)} (UCB {c.ucb:.2f})' for c in others)}." if others else ""
        tie = " (a tie: the first one added is taken)" if others and others[0].ucb == chosen.ucb else ""
        return (f"{now}: select {game.move_name(chosen.move)} ({ucb_text(chosen)}) at {name}: every move there has "
                f"been tried, so {mover} takes the highest UCB, mean result + exploration bonus{tie}; move "
                f"{game.move_name(chosen.move)} has N={chosen.visits} of {node.visits}. On to node {chosen.node}.{rest}")
    if isinstance(event, Enter):
        mover = game.to_move(node.state)
        if node.parent is None:
            return f"Start: the tree is the root alone, {name} ({mover} to move), with no playouts yet."
        over = ""
        if game.is_terminal(node.state):
            won = game.winner(node.state)
            over = f", where the game is over ({won} has won)" if won else ", where the game is over (a tie)"
        return (f"{now}: expand: node {node.parent} has a move not yet tried, so move {game.move_name(node.move)} "
                f"adds {name} ({mover} to move){over}.")
    if isinstance(event, Rollout):
        outcome = f"{event.winner} won" if event.winner else "a tie"
        if event.moves == 0:
            return f"{now}: rollout: the game at {name} is already over: {outcome}, no random move needed."
        return f"{now}: rollout from {name}: {plural(event.moves, 'random move')}, {outcome}."
    if isinstance(event, Backup):
        return _backup_sentence(now, event, "")
    if isinstance(event, Exit) and node.parent is None:
        if event.move is None:
            return f"The game is already over at the root: its value is {number(event.value)}."
        chosen = next((nodes[c] for c in node.children if nodes[c].move == event.move), None)
        if chosen is None:
            return f"The search is over: it plays {game.move_name(event.move)}, value {event.value:.2f} for X."
        mover = game.to_move(node.state)
        tied = any(nodes[c].visits == chosen.visits for c in node.children if c != chosen.id)
        tie = ", a tie: the first added is taken" if tied else ""
        return (f"After {plural(node.visits, 'iteration')} the search is over: {mover} plays {game.move_name(event.move)}, "
                f"the most visited move (N={chosen.visits} of {node.visits}{tie}); its Q={chosen.mean:.2f} for {mover} "
                f"is a value of {event.value:.2f} for X.")
    return f"{name}: {event}"


def _backup_sentence(now: str, event: Backup, where: str) -> str:
    """Return the sentence of a back-up: who won, what each move on the path scores, the counts each node now has."""
    if event.winner:
        loser = "O" if event.winner == "X" else "X"
        how = f"{event.winner} won: 1 for each {event.winner} move on the path, 0 for each {loser} move"
    else:
        how = "a tie: ½ for each move on the path"
    counts = "; ".join(f"node {t.node} N={t.visits} Q={t.total / t.visits:.2f}" for t in event.path)
    return f"{now}: back up{where} ({how}): {counts}."
