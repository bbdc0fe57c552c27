"""What a recorded search answers about itself, and that it answers each question once.

A trace never changes, so its tree is built once however many readers ask (the explorer's view,
its sentences and counts, the drawing); the step sentences and the explorer read one sequence
of steps (``ttt.widgets.steps.steps``); what a search shows (values, windows, cut-offs, visits) is set by
the recording as fields, never read off the algorithm's name; and an MCTS trace's visits N and
mean results Q, read through the trace, are those its events backed up.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

import ttt.draw
import ttt.trace
import ttt.widgets.steps
from ttt.draw import draw_tree, visits_text
from ttt.games import get_game
from ttt.games.classic import parse_board
from ttt.search import Backup, Cutoff, Enter
from ttt import tictactoe
from ttt.call_recorder import record_calls
from ttt.tictactoe import from_text
from ttt.trace import ALGORITHMS, Trace, TreeBuilder, build_tree, record
from ttt.widgets import SearchExplorer
from ttt.widgets.explorer import tree_data
from ttt.widgets.steps import step_sentence, step_sentences, steps

GAME = get_game("tictactoe")
POSITION = "XO./.X./..."


@pytest.fixture
def builds(monkeypatch) -> list:
    """Count the trees built from events: each is one TreeBuilder (`build_tree`, `Trace.replay`)."""
    made: list = []

    class Counted(TreeBuilder):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    monkeypatch.setattr(ttt.trace, "TreeBuilder", Counted)
    return made


@pytest.fixture
def said(monkeypatch) -> list:
    """Count the sentences written for events."""
    calls: list = []
    original = ttt.widgets.steps.event_sentence

    def counted(*args, **kwargs):
        calls.append(args[1])
        return original(*args, **kwargs)

    monkeypatch.setattr(ttt.widgets.steps, "event_sentence", counted)
    return calls


# --- the tree, built once ----------------------------------------------------------------------


@pytest.mark.parametrize("algorithm, options", [("alphabeta", {}), ("minimax", {}),
                                                ("mcts", {"iterations": 40, "seed": 2})])
def test_one_explorer_view_builds_the_tree_once(builds, algorithm, options):
    trace = record(GAME, parse_board(POSITION), algorithm=algorithm, **options)
    assert builds == []  # recording builds no tree
    explorer = SearchExplorer(trace=trace)
    assert len(builds) == 1
    for k in (1, len(trace) // 2, len(trace)):  # stepping from Python, as the browser tests do
        explorer.step = k
        assert explorer.sentence() and explorer.tally()
    draw_tree(trace)  # and then the picture of it
    trace.principal_variation(), trace.wrong_values(), trace.sizes, trace.nodes
    assert len(builds) == 1
    assert tree_data(trace, max_nodes=20)["steps"]  # another view of the same trace: nothing rebuilt
    assert len(builds) == 1


def test_the_tree_is_built_in_one_pass_over_the_events(monkeypatch):
    trace = record(GAME, parse_board(POSITION), algorithm="alphabeta")
    applied = []
    original = TreeBuilder.apply
    monkeypatch.setattr(TreeBuilder, "apply", lambda self, e: applied.append(e) or original(self, e))
    SearchExplorer(trace=trace).sentence()
    assert applied == trace.events


def test_a_trace_does_not_change_and_its_answers_are_kept():
    trace = record(GAME, parse_board(POSITION), algorithm="alphabeta")
    assert trace.nodes is trace.nodes
    assert dict(trace.nodes) == build_tree(trace.events)
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.events = []
    with pytest.raises(TypeError):
        trace.nodes[0] = None  # read-only: the kept tree cannot be replaced under its readers
    assert trace.principal_variation() is not trace.principal_variation()  # a list of its own to each caller


def test_upto_is_the_search_as_it_stood_and_costs_nothing_until_asked(builds):
    trace = record(GAME, parse_board(POSITION), algorithm="alphabeta")
    assert trace.upto(len(trace)) is trace and trace.upto(len(trace) + 5) is trace
    parts = [trace.upto(k) for k in range(len(trace))]
    assert builds == []  # taking them builds nothing
    for k in (0, 1, 12, len(trace) // 2, len(trace) - 1):
        part = parts[k]
        assert part.events == trace.events[:k] and part.result is None and part.unkept == {}
        assert part.counts(k) == trace.counts(k)
        assert (part.reports_values, part.has_windows, part.prunes, part.has_visits) == (True, True, True, False)
        assert len(builds) == 0
        assert dict(part.nodes) == build_tree(trace.events[:k])  # its tree, when asked for: built, ...
        assert part.nodes is part.nodes and len(builds) == 2  # ... once
        builds.clear()
    assert len(trace.nodes) == 270 and len(parts[12].nodes) < 270  # each its own tree


def test_counts_and_sizes_are_the_events_counted():
    trace = record(GAME, parse_board(POSITION), algorithm="alphabeta")
    by_step = trace.counts_by_step()
    for k in range(len(trace) + 1):
        events = trace.events[:k]
        expected = {
            "nodes": sum(isinstance(e, Enter) for e in events),
            "cutoffs": sum(isinstance(e, Cutoff) for e in events),
            "pruned": sum(len(e.skipped) for e in events if isinstance(e, Cutoff)),
            "iterations": sum(isinstance(e, Backup) for e in events),
        }
        assert trace.counts(k) == expected == {name: column[k] for name, column in by_step.items()}
    assert trace.counts(-3) == trace.counts(0) and trace.counts(10**6) == trace.counts(len(trace))
    nodes = trace.nodes

    def below(i: int) -> int:
        return 1 + sum(below(c) for c in nodes[i].children)

    assert all(trace.sizes[i] == below(i) for i in nodes) and trace.sizes[0] == trace.node_count


# --- one sequence of steps ---------------------------------------------------------------------


@pytest.mark.parametrize("algorithm, options", [("alphabeta", {}), ("mcts", {"iterations": 30, "seed": 1})])
def test_the_explorer_and_the_sentences_read_the_same_steps(said, algorithm, options):
    trace = record(GAME, parse_board(POSITION), algorithm=algorithm, **options)
    explorer = SearchExplorer(trace=trace)
    assert len(said) == len(trace)  # each event said once ...
    walked = steps(trace)
    assert steps(trace) is walked and [s.number for s in walked] == list(range(1, len(trace) + 1))
    assert [s.event for s in walked] == trace.events
    sentences = [s.sentence for s in walked]
    assert [s["sentence"] for s in explorer.tree["steps"]] == sentences
    assert step_sentences(trace) == sentences
    assert [step_sentence(trace, k) for k in range(1, len(trace) + 1)] == sentences
    explorer.step = len(trace)
    assert explorer.sentence() == f"Step {len(trace)} of {len(trace)}: {sentences[-1]}"
    assert len(said) == len(trace)  # ... and never again


def test_a_thinking_view_of_a_few_drawn_nodes_says_what_the_whole_steps_say():
    trace = record(GAME, parse_board(POSITION), algorithm="alphabeta", ordered=True)
    data = tree_data(trace, max_depth=1, every_step=False)
    drawn = {n["id"] for n in data["nodes"]}
    assert [s["sentence"] for s in data["steps"]] == [s.sentence for s in steps(trace) if s.event.node in drawn]


def test_the_steps_say_what_each_event_changed():
    trace = record(GAME, parse_board(POSITION), algorithm="alphabeta")
    for step in steps(trace):
        part = trace.upto(step.number)
        for i, value, window in step.texts:
            assert value == ttt.draw.value_text(part.nodes[i]) and window == ttt.draw.window_text(part.nodes[i])


# --- what a search shows: fields the recording sets --------------------------------------------


@pytest.mark.parametrize("algorithm, options, shows", [
    ("minimax", {}, (True, False, False, False)),
    ("alphabeta", {}, (True, True, True, False)),
    ("depth-limited", {"depth": 2}, (True, True, True, False)),
    ("mcts", {"iterations": 20, "seed": 0}, (True, False, False, True)),
])
def test_recording_sets_what_the_search_shows(algorithm, options, shows):
    if ALGORITHMS[algorithm].depth_limited:  # it needs a game with a heuristic
        game = get_game("nine-board")
        trace = record(game, game.initial(), algorithm=algorithm, **options)
    else:
        trace = record(GAME, parse_board(POSITION), algorithm=algorithm, **options)
    fields = (trace.reports_values, trace.has_windows, trace.prunes, trace.has_visits)
    assert fields == shows == tuple(ALGORITHMS[algorithm].shows().values())
    assert (trace.upto(0).reports_values, trace.upto(0).has_windows, trace.upto(0).prunes,
            trace.upto(0).has_visits) == shows  # before any event: the same search


def test_a_recorded_student_search_says_what_it_saw():
    namespace = {"result": tictactoe.result}

    def search(board):  # tries two of the three free squares of the bottom row
        for action in [(2, 0), (2, 1)]:
            namespace["result"](board, action)

    with record_calls(namespace) as recorder:
        search(from_text("XO./XO./..."))
    trace = recorder.trace()
    assert (trace.reports_values, trace.has_windows, trace.prunes, trace.has_visits) == (False, False, True, False)


def test_the_pictures_and_the_explorer_read_the_fields_not_the_name():
    """A search by a new name shows as its fields say: only the fields are declared."""
    searched = record(GAME, parse_board(POSITION), algorithm="alphabeta")
    plain = Trace(GAME, searched.events, searched.result, "my own alpha-beta", has_windows=False)
    assert "α=" not in draw_tree(plain).source and "α=" in draw_tree(searched).source
    assert not any(t[2] for n in tree_data(plain)["nodes"] for t in n["texts"])
    assert "window" not in step_sentence(plain, 1) and "window" in step_sentence(searched, 1)
    mcts = record(GAME, parse_board(POSITION), algorithm="mcts", iterations=15, seed=4)
    renamed = Trace(GAME, mcts.events, mcts.result, "renamed", unkept=mcts.unkept, **ALGORITHMS["mcts"].shows())
    assert tree_data(renamed) == tree_data(mcts)
    assert draw_tree(renamed).source.replace("renamed search", "mcts search") == draw_tree(mcts).source
    inferred = Trace(GAME, mcts.events)  # fields left out: read from the events
    assert (inferred.has_visits, inferred.prunes, inferred.has_windows) == (True, False, False)


def test_the_explorer_offers_each_declared_search_that_the_game_can_run():
    assert GAME.evaluate is None and SearchExplorer().algorithms == [a for a, kind in ALGORITHMS.items() if not kind.depth_limited]
    big = get_game("nine-board")
    explorer = SearchExplorer(big.format(big.initial()), game=big, algorithm="mcts", iterations=3)
    assert explorer.algorithms == list(ALGORITHMS)
    explorer.algorithm = "depth-limited"  # run with the depth it declares it needs
    assert explorer.trace.has_windows and explorer.trace.result.depth == explorer.depth


# --- MCTS: visits N and mean results Q ---------------------------------------------------------


def test_visits_and_means_read_from_the_trace_are_those_backed_up():
    trace = record(GAME, parse_board(POSITION), algorithm="mcts", iterations=60, seed=3)
    last = {}  # node -> its counts in the last back-up through it
    for e in trace.events:
        if isinstance(e, Backup):
            for tally in e.path:
                last[tally.node] = tally
    nodes = trace.nodes
    assert set(last) <= set(nodes)
    for i, node in nodes.items():
        n = last[i].visits if i in last else 0
        assert trace.visits(i) == node.visits == n
        assert trace.mean(i) == node.mean == (last[i].total / n if n else None)
    assert trace.visits(0) == trace.iterations == 60
    labels = {int(m[1]): line for line in draw_tree(trace, max_nodes=None).body if (m := re.match(r"\tn(\d+) \[", line))}
    assert set(labels) == set(nodes)
    for i in nodes:  # each node drawn with the trace's N and Q
        q = f"Q={trace.mean(i):.2f}" if trace.visits(i) else "new"
        assert f">N={trace.visits(i)}  {q}<" in labels[i]
    rows = {n["id"]: n for n in tree_data(trace)["nodes"]}
    for i, row in rows.items():  # at the last step each row says the trace's N and Q
        assert row["texts"][-1][1] == visits_text(nodes[i])
    k = len(trace) // 2
    part = trace.upto(k)
    for i in part.nodes:  # after step k: the counts of the last back-up by then
        seen = [t for e in trace.events[:k] if isinstance(e, Backup) for t in e.path if t.node == i]
        assert part.visits(i) == (seen[-1].visits if seen else 0)


def test_a_search_without_visits_reads_none():
    trace = record(GAME, parse_board(POSITION), algorithm="alphabeta")
    assert trace.visits(0) == 0 and trace.mean(0) is None
