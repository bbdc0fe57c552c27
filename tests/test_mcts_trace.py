"""Monte Carlo tree search, recorded and watched: its events, its trace, its pictures, its explorer data.

The trace of an MCTS is checked against the search's own result (root visits, the chosen move,
its value) and against itself at every step (`Trace.upto(k)`): visits only grow, each node's
visits are its children's plus the playouts that started at it, and each selection picks the
child with the highest UCB1 score as the tree stood. On a 3x3 position the most visited move
becomes the perfect-play move (``ttt.games.classic.solve``) as iterations grow. A big-board
recording is kept small with `max_nodes`, and still counts every iteration.
"""

from __future__ import annotations

import math
import random
import re

import pytest

from ttt import search
from ttt.draw import draw_tree, render_svg, visits_text
from ttt.games import get_game
from ttt.games.classic import parse_board, solve
from ttt.search import Backup, Enter, Exit, Rollout, Score, Select, Tally
from ttt.trace import Trace, build_tree, record
from ttt.widgets import SearchExplorer
from ttt.widgets.explorer import tree_data
from ttt.widgets.steps import step_sentence, step_sentences

GAME = get_game("tictactoe")
POSITION = parse_board("XO./.X./...")  # O to move, and O must block at 8


@pytest.fixture(scope="module")
def trace() -> Trace:
    return record(GAME, POSITION, algorithm="mcts", iterations=60, seed=3)


# --- the search and its events -----------------------------------------------------------------


@pytest.mark.parametrize("game, state, seed, iterations", [
    (GAME, POSITION, 0, 150), (GAME, GAME.initial(), 7, 150),
    (get_game("ultimate"), get_game("ultimate").initial(), 3, 120),
    (get_game("nine-board"), get_game("nine-board").initial(), 0, 120),
])
def test_tracing_changes_nothing_the_search_does(game, state, seed, iterations):
    alone = search.mcts(game, state, rng=random.Random(seed), iterations=iterations)
    events = []
    traced = search.mcts(game, state, rng=random.Random(seed), iterations=iterations, tracer=events.append)
    recorded = record(game, state, algorithm="mcts", iterations=iterations, seed=seed)
    assert alone == traced == recorded.result
    assert events == recorded.events


def test_the_results_are_those_of_the_search_before_it_had_a_tracer():
    """Pinned: the same rng seeds give the moves and values they gave before the events existed."""
    pinned = [("XO./.X./...", 0, 0.2857142857142857, 8), ("XO./.X./...", 7, 0.48571428571428577, 8),
              (".........", 1, 0.6666666666666667, 4), (".........", 7, 0.52, 8), ("XOX/OXO/...", 1, 1.0, 6)]
    for board, seed, value, move in pinned:
        result = search.mcts(GAME, parse_board(board), rng=random.Random(seed), iterations=150)
        assert (result.value, result.move, result.nodes) == (value, move, 150)
    ultimate = get_game("ultimate")
    result = search.mcts(ultimate, ultimate.initial(), rng=random.Random(0), iterations=120)
    assert (result.value, result.move) == (1.0, (0, 5))


def test_each_iteration_selects_expands_rolls_out_and_backs_up_in_that_order(trace):
    events = trace.events
    assert isinstance(events[0], Enter) and events[0].parent is None and events[0].depth == 0
    assert isinstance(events[-1], Exit) and events[-1].node == 0 and events[-1].move == trace.result.move
    phases = "".join({Select: "s", Enter: "e", Rollout: "r", Backup: "b"}[type(e)] for e in events[1:-1])
    iterations = re.findall(r"s*e?rb", phases)
    assert "".join(iterations) == phases and len(iterations) == 60 == trace.iterations
    for e in events:
        if isinstance(e, Backup):
            assert e.path[0].node == 0 and e.path[-1].node == e.node
        if isinstance(e, Rollout):
            assert e.winner in ("X", "O", None) and e.moves >= 0


def test_the_events_are_frozen_and_say_what_they_are():
    for kind in (Select, Score, Rollout, Tally, Backup):
        assert kind.__doc__ and kind.__dataclass_params__.frozen
    score = Score(3, 4, 2, 0.5, 0.81)
    assert score.ucb == 0.5 + 0.81


# --- the trace's counts against the search's result --------------------------------------------


def test_root_visits_chosen_move_and_value_are_the_searchs(trace):
    nodes = trace.nodes
    root = nodes[0]
    assert root.visits == trace.result.nodes == 60 == trace.counts(len(trace))["iterations"]
    children = [nodes[c] for c in root.children]
    best = max(children, key=lambda n: n.visits)
    assert best.move == trace.result.move
    assert best.value_for_x == trace.result.value  # SearchResult.value: the chosen child's mean, for X
    mean = best.total / best.visits
    assert trace.result.value == -(2 * mean - 1)  # O chose it: a mean for O
    assert trace.principal_variation()[:2] == [0, best.id]
    assert nodes[0].done and nodes[0].value == trace.result.value and nodes[0].best_move == trace.result.move


def test_every_prefix_of_the_trace_is_consistent(trace):
    """At every step: visits = children's visits + playouts begun at the node; the root's = iterations so far."""
    before = {}
    for k in range(len(trace) + 1):
        part = trace.upto(k)
        nodes = part.nodes
        assert nodes == build_tree(trace.events[:k])
        started: dict[int, int] = {}
        for e in part.events:
            if isinstance(e, Backup):
                started[e.node] = started.get(e.node, 0) + 1
        for i, node in nodes.items():
            assert node.visits == sum(nodes[c].visits for c in node.children) + started.get(i, 0), (k, i)
            assert node.visits >= before.get(i, (0, 0.0))[0] and 0 <= node.total <= node.visits
            if node.parent is not None:
                assert started.get(i, 0) <= 1 or GAME.is_terminal(node.state)  # one playout when added
        if nodes:
            assert nodes[0].visits == part.counts(k)["iterations"]
        assert part.counts(k)["nodes"] == len(nodes)
        before = {i: (n.visits, n.total) for i, n in nodes.items()}
    final = trace.nodes
    assert all(started.get(i, 0) == 1 for i, n in final.items() if n.parent is not None and not GAME.is_terminal(n.state))


def test_each_selection_takes_the_highest_ucb_as_the_tree_stood(trace):
    for k, e in enumerate(trace.events):
        if not isinstance(e, Select):
            continue
        nodes = build_tree(trace.events[:k])
        parent = nodes[e.node]
        assert sorted(s.node for s in e.children) == sorted(parent.children)
        for s in e.children:
            child = nodes[s.node]
            assert (s.visits, s.mean, s.move) == (child.visits, child.total / child.visits, child.move)
            assert s.bonus == pytest.approx(math.sqrt(2) * math.sqrt(math.log(parent.visits) / child.visits))
        best = max(s.ucb for s in e.children)
        chosen = next(s for s in e.children if s.node == e.chosen)
        assert chosen.ucb == best and chosen is next(s for s in e.children if s.ucb == best)  # the first on a tie


def test_a_terminal_root_plays_out_nothing_and_keeps_its_value():
    won = parse_board("XXX/OO./...")
    trace = record(GAME, won, algorithm="mcts", iterations=5, seed=0)
    assert trace.result.move is None and trace.result.value == 1
    assert [type(e) for e in trace.events] == [Enter] + [Rollout, Backup] * 5 + [Exit]
    assert all(e.moves == 0 and e.winner == "X" for e in trace.events if isinstance(e, Rollout))
    assert trace.nodes[0].visits == 5
    assert "already over" in step_sentence(trace, len(trace))


# --- MCTS converges on perfect play -----------------------------------------------------------


def test_the_most_visited_move_is_the_perfect_play_move():
    value, best = solve(POSITION)
    for seed in range(4):
        trace = record(GAME, POSITION, algorithm="mcts", iterations=400, seed=seed)
        root = trace.nodes[0]
        most = max((trace.nodes[c] for c in root.children), key=lambda n: n.visits)
        assert most.move == best == trace.result.move == 8


def test_with_more_iterations_more_of_the_playouts_go_to_perfect_play():
    """O, facing X in two opposite corners, must take an edge (a corner loses): MCTS learns it."""
    state = parse_board("X../.O./..X")
    value, _ = solve(state)
    good = {m for m in GAME.moves(state) if solve(GAME.play(state, m))[0] == value}
    assert good == {1, 3, 5, 7}

    def share(iterations: int, seed: int) -> float:
        trace = record(GAME, state, algorithm="mcts", iterations=iterations, seed=seed)
        nodes = trace.nodes
        assert trace.result.move in good or iterations < 1000
        return sum(nodes[c].visits for c in nodes[0].children if nodes[c].move in good) / nodes[0].visits

    few = [share(20, seed) for seed in range(3)]
    many = [share(2000, seed) for seed in range(3)]
    assert min(many) > 0.8 and min(many) > max(few)


# --- a big board, kept small -------------------------------------------------------------------


def test_an_ultimate_recording_keeps_its_first_nodes_and_counts_every_iteration():
    game = get_game("ultimate")
    state = game.initial()
    trace = record(game, state, algorithm="mcts", iterations=300, seed=1, max_nodes=40)
    whole = record(game, state, algorithm="mcts", iterations=300, seed=1)
    nodes = trace.nodes
    assert len(nodes) == 40 and sorted(nodes) == list(range(40))  # the first 40 added
    assert trace.result == whole.result
    assert trace.node_count == len(whole.nodes) == 301
    assert sum(trace.unkept.values()) == 301 - 40
    full = whole.nodes
    for i, node in nodes.items():  # the kept nodes' counts are the whole search's
        assert (node.visits, node.total, node.parent, node.move) == (full[i].visits, full[i].total, full[i].parent, full[i].move)
    assert nodes[0].visits == trace.iterations == 300 == sum(isinstance(e, Rollout) for e in trace.events)
    cut = [e for e in trace.events if isinstance(e, Backup) and e.node not in nodes]  # from a node not kept
    assert cut and all(e.path[0].node == 0 and e.path[-1].node in nodes for e in cut)
    said = step_sentences(trace)
    assert sum("which this recording did not keep" in x for x in said) == 2 * len(cut)
    deep = record(game, state, algorithm="mcts", iterations=300, seed=1, max_depth=1)
    assert max(n.depth for n in deep.nodes.values()) == 1 and deep.nodes[0].visits == 300
    data = tree_data(trace)
    assert len(data["nodes"]) == 40 and data["steps"][-1]["counts"] == [40, 300]
    more = [s for s in data["stubs"] if s["kind"] == "more"]
    assert sum(int(s["text"].split()[1]) for s in more) == 301 - 40
    first = trace.events.index(cut[0]) + 1  # "… N more" shows from the first back-up from a node not kept
    assert all(s["step"] >= first for s in more) and min(s["step"] for s in more) == first
    assert len(re.findall(r">N=\d+  Q=", draw_tree(trace).source)) == 40


def test_recording_mcts_needs_iterations():
    with pytest.raises(ValueError, match="iterations"):
        record(GAME, POSITION, algorithm="mcts")


# --- pictures and words ------------------------------------------------------------------------


def test_draw_tree_writes_visits_and_means_and_widens_the_most_visited_edges(trace):
    source = draw_tree(trace, max_nodes=None).source
    nodes = trace.nodes
    for i, node in nodes.items():
        assert visits_text(node) in source
    assert "N: playouts through a node" in source and "60 iterations" in source
    pv = trace.principal_variation()
    widths = {int(m[1]): float(m[2]) for m in re.finditer(r"-> n(\d+) \[.*?penwidth=([\d.]+)", source)}
    assert all(widths[pv[1]] >= w for w in widths.values())
    assert re.search(rf"-> n{pv[1]} \[.*style=bold", source)


@pytest.mark.dot
def test_draw_tree_renders_an_mcts_trace_with_its_visits(trace):
    svg = render_svg(draw_tree(trace))
    root = trace.nodes[0]
    assert f"N={root.visits}" in svg and "Q=" in svg
    big = get_game("ultimate")
    svg = render_svg(draw_tree(record(big, big.initial(), algorithm="mcts", iterations=100, seed=2, max_nodes=12)))
    assert "N=100" in svg and "showing 12 of 101 nodes" in svg


def test_each_step_is_said_in_a_students_words(trace):
    sentences = step_sentences(trace)
    assert sentences == [step_sentence(trace, k) for k in range(1, len(trace) + 1)]
    iteration = 1
    for e, said in zip(trace.events, sentences):
        if isinstance(e, Select):
            assert said.startswith(f"Iteration {iteration}: select ") and "UCB" in said
        elif isinstance(e, Enter) and e.parent is not None:
            assert said.startswith(f"Iteration {iteration}: expand: ")
        elif isinstance(e, Rollout):
            assert said.startswith(f"Iteration {iteration}: rollout") and (e.winner or "a tie") in said
            if e.moves:
                assert f"{e.moves} random move" in said
        elif isinstance(e, Backup):
            assert said.startswith(f"Iteration {iteration}: back up")
            for t in e.path:
                assert f"node {t.node} N={t.visits} Q={t.total / t.visits:.2f}" in said
            iteration += 1
    assert sentences[-1].startswith("After 60 iterations the search is over: O plays 8")


# --- the explorer's data ------------------------------------------------------------------------


def text_at(node: dict, k: int):
    found = [t for t in node["texts"] if t[0] <= k]
    return found[-1][1:] if found else None


def test_the_explorer_data_shows_each_nodes_visits_and_the_ucb_scores_at_each_step(trace):
    data = tree_data(trace)
    rows = {n["id"]: n for n in data["nodes"]}
    assert data["visits"] and data["iterations"] == 60 and data["total"] == trace.node_count
    order = [n["id"] for n in data["nodes"]]
    for n in data["nodes"]:  # each row under its parent: an outline
        if n["parent"] is not None:
            assert order.index(n["parent"]) < order.index(n["id"])
            between = order[order.index(n["parent"]) + 1: order.index(n["id"])]
            assert all(rows[b]["depth"] > rows[n["parent"]]["depth"] for b in between)
    for k in range(1, len(trace) + 1):
        nodes = build_tree(trace.events[:k])
        event = trace.events[k - 1]
        scores = {s.node: s for s in event.children} if isinstance(event, Select) else {}
        for i, row in rows.items():
            if i not in nodes:
                assert row["enter"] > k
                continue
            value, window = text_at(row, k)
            assert value == visits_text(nodes[i]), (k, i)
            assert window == (f"UCB {scores[i].ucb:.2f} = {scores[i].mean:.2f} + {scores[i].bonus:.2f}" if i in scores else "")
        step = data["steps"][k - 1]
        assert step["sentence"] == step_sentence(trace, k)
        c = trace.counts(k)
        assert step["counts"] == [c["nodes"], c["iterations"]]
        if isinstance(event, Exit):  # the search's answer: the most visited path is bold instead
            assert step["path"] == [] and step["node"] == 0
            continue
        assert step["path"][0] == 0 and all(nodes[b].parent == a for a, b in zip(step["path"], step["path"][1:]))
        if isinstance(event, Select):
            assert step["node"] == event.chosen == step["path"][-1]
        if isinstance(event, Backup):
            assert step["path"] == [t.node for t in event.path]
    assert data["pv"] == trace.principal_variation()


def test_the_explorer_records_mcts_itself_and_says_its_counts():
    explorer = SearchExplorer("XO./.X./...", algorithm="mcts", iterations=25, seed=3)
    assert explorer.trace.events == record(GAME, POSITION, algorithm="mcts", iterations=25, seed=3).events
    explorer.step = len(explorer.trace)
    assert explorer.tally() == f"Iterations done: 25 of 25. Nodes in the tree: {explorer.trace.node_count} of {explorer.trace.node_count}."
    assert explorer.sentence().startswith(f"Step {len(explorer.trace)} of {len(explorer.trace)}: After 25 iterations")
    explorer.iterations = 10
    assert explorer.trace.iterations == 10 and explorer.step == 0
    explorer.algorithm = "alphabeta"
    assert not explorer.trace.has_visits and explorer.tree["visits"] is False


def test_the_explorer_steps_through_an_ultimate_recording():
    game = get_game("ultimate")
    trace = record(game, game.initial(), algorithm="mcts", iterations=80, seed=5, max_nodes=30)
    explorer = SearchExplorer(trace=trace)
    assert explorer.editable is False and explorer.editor is False
    assert len(explorer.tree["nodes"]) == 30 and explorer.tree["nodes"][0]["board"] == game.format(game.initial())
    for _ in range(10):
        explorer.forward()
    assert explorer.sentence().startswith("Step 10 of ")
