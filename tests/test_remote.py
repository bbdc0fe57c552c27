"""grader.remote: plain data between the grader and a student server, and the server's limits."""

from __future__ import annotations

import math
import re
import struct
import sys
import textwrap
import time

import psutil
import pytest

from grader import remote
from grader.remote import client, protocol
from grader.remote import (
    NotPlainData, Remote, RemoteDied, RemoteError, RemoteProtocolError, RemoteStalled, RemoteTimeout, Unplain,
    decode, encode,
)
from ttt.limits import over_limit

CELLS = [
    textwrap.dedent('''
        import sys, os, signal, time
        from ttt.games import classic

        def mark(board):
            board[0][0] = "X"

        def same(value):
            return value

        def first_row(board):
            return board[0]

        def swap_rows(board):
            board[0], board[1] = board[1], board[0]
            board[2] = board[0]
            return [board[1], "new"]

        class Bad(ValueError):
            pass

        def fails(action):
            i, j = action
            raise Bad(f"no square {i}, {j}")

        def leaves():
            sys.exit("bye")
    '''),
    "%matplotlib inline\n" + textwrap.dedent('''
        def result(board, action):
            raise NotImplementedError()

        class Liar(str):
            def __eq__(self, other):
                return True
            __hash__ = str.__hash__

        def lies():
            return Liar("X")

        def twice(n):
            return helper(n) + helper(n + 1)

        def deeper(n):
            return helper(n) if n <= 0 else twice(n - 1)

        def swallows():
            try:
                helper(0)
            except BaseException:
                pass
            return "fine"

        def catches():
            try:
                helper(-1)
            except ValueError as error:
                return "caught " + str(error)

        def calls_player(board):
            return player(board)

        def loops():
            while True:
                pass

        def blocks():
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGVTALRM})
            while True:
                pass

        def sleeps():
            time.sleep(1000)

        def dies():
            os._exit(3)

        def prints(megabytes):
            for _ in range(megabytes):
                sys.stdout.write("x" * 2**20)
            return megabytes

        def uses_reference(board):
            return classic.to_move("." * 9)

        def global_x():
            return x

        def via_same(value):
            return same(value)

        def get_n():
            return N

        print("loaded")
        N = [1, 2, 3]
        for i in range(3):
            N.append(i)
        not_defined_here = missing_name
    '''),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with Remote({"cells": CELLS, "cpu": 20}, cwd=tmp_path_factory.mktemp("unit"), cpu=10) as linked:
        yield linked


@pytest.fixture
def ns(server):
    return server.namespace()


# -- codec ------------------------------------------------------------------------------------


def test_every_plain_type_round_trips():
    shared = [1, 2]
    values = [None, True, False, 0, -7, 2**53, -(2**200), 1.5, -0.0, math.inf, -math.inf, "", "é\ud800", b"\x00\xff",
              (), (1, "a"), [], [1, [2, [3]]], set(), {1, "a", (2, 3)}, frozenset({1, frozenset({2})}),
              {"a": 1, (1, 2): [3], 4: {5: None}, None: True, frozenset({1}): "f"}, [shared, shared, (shared,)]]
    for value in values:
        back = decode(encode(value))
        assert back == value and type(back) is type(value)
    assert str(decode(encode(-0.0))) == "-0.0"
    assert math.isnan(decode(encode(math.nan)))
    back = decode(encode([shared, shared, (shared,)]))
    assert back[0] is back[1] is back[2][0]
    looped: list = [1]
    looped.append(looped)
    back = decode(encode(looped))
    assert back[1] is back


def test_what_is_not_plain_data_arrives_as_unplain():
    class Thing:
        def __repr__(self):
            return "Thing()" * 100

    back = decode(encode([Thing(), print]))
    assert all(type(x) is Unplain for x in back)
    assert back[0] != back[0].__class__("x", "y") and back[0] == back[0] and back[0].type_name.endswith("Thing")
    assert len(repr(back[0])) == 200
    deep: list = []
    for _ in range(150):
        deep = [deep]
    back = decode(encode(deep))  # cut at the depth the decoder takes, not an error
    for _ in range(remote.MAX_DEPTH):
        back = back[0]
    assert type(back) is Unplain
    tup = ([],)
    tup[0].append(tup)
    assert type(decode(encode(tup))[0][0]) is Unplain


def test_subclasses_become_their_plain_base_and_are_noted():
    class Liar(str):
        def __eq__(self, other):
            return True

    class Listy(list):
        def __iter__(self):
            return iter([])

    encoder = protocol._Encoder()
    back = decode(encoder.encode([Liar("X"), Listy([1, 2])]))
    assert type(back[0]) is str and back[0] == "X" and back[0] != "O"
    assert back[1] == [1, 2] and type(back[1]) is list
    assert [note.split(".")[-1] for note in encoder.subclasses] == ["Liar (a subclass of str)", "Listy (a subclass of list)"]


def test_numpy_ints_arrive_as_ints():
    import numpy  # installed with the fast extra (numba), which make setup installs
    back = decode(encode([numpy.int64(3), numpy.int8(-2)]))
    assert back == [3, -2] and all(type(x) is int for x in back)


def test_game_states_of_ttt_keep_their_class():
    from ttt.games.nineboard import NineBoard

    state = NineBoard().initial()
    back = decode(encode(state))
    assert back == state and type(back) is type(state)


@pytest.mark.parametrize("tree", [["l", ["r", 5]], ["q"], {"a": 1}, ["d", 1], ["s", ["l"]], ["i", "zz"], ["x", "1.0"],
                                  ["t", ["r", 0]], ["o", 0, 5], ["n", "os", "path"]])
def test_malformed_trees_are_protocol_errors(tree):
    with pytest.raises(RemoteProtocolError):
        decode(tree)


def test_decoding_refuses_deep_nesting():
    tree: list = ["l"]
    for _ in range(150):
        tree = ["l", tree]
    with pytest.raises(RemoteProtocolError):
        decode(tree)


# -- loading ------------------------------------------------------------------------------------


def test_the_definitions_are_loaded_cell_by_cell(server, ns):
    assert {"mark", "same", "result", "lies", "N"} <= set(ns)
    assert "classic" not in ns  # a module stays in the server
    assert ns["N"] == [1, 2, 3]  # the loop did not run: definitions only
    assert type(ns["mark"]) is remote.RemoteFunction and ns["mark"].__module__ == "__main__"
    assert ns["mark"].__globals__ is ns and ns["mark"].__name__ == "mark"
    assert any("NameError" in skipped for skipped in server.skipped)
    assert "loaded" not in server.take_output()  # print() is no definition


def test_definitions_keep_only_what_defines():
    kept = remote.definitions("%time x = 1\nprint(2)\ndef f(): pass\nfor i in []: pass\n")
    assert [type(s).__name__ for s in kept] == ["FunctionDef"]  # a magic is a call once translated
    assert remote.definitions("def (:") == []


# -- calls --------------------------------------------------------------------------------------


def test_a_lying_str_arrives_plain_and_is_flagged(server, ns):
    got = ns["lies"]()
    assert type(got) is str and got == "X" and got != "O"
    assert "lies returned a Liar (a subclass of str)" in server.subclasses


def test_mutations_are_written_back_into_the_callers_objects(ns):
    board = [[None] * 3 for _ in range(3)]
    rows = list(board)
    assert ns["mark"](board) is None
    assert board[0][0] == "X" and board[0] is rows[0]
    board = [["a"], ["b"], ["c"]]
    rows = list(board)
    got = ns["swap_rows"](board)
    assert board == [["b"], ["a"], ["b"]] and board[0] is rows[1] and board[1] is rows[0] and board[2] is rows[1]
    assert got[0] is rows[0] and got[1] == "new"


def test_a_returned_argument_is_the_callers_own_object(ns):
    board = [[None] * 3 for _ in range(3)]
    assert ns["same"](board) is board
    assert ns["first_row"](board) is board[0]
    pair = ([1], [1])
    got = ns["same"](pair)
    assert got is pair
    shared = {"k": [1]}
    got = ns["same"]([shared, shared])
    assert got[0] is shared and got[1] is shared


def test_exceptions_arrive_with_their_class_base_and_line(ns):
    with pytest.raises(ValueError) as caught:
        ns["fails"]((7, 8))
    error = caught.value
    assert isinstance(error, RemoteError) and type(error).__name__ == "Bad" and error.remote_type == "Bad"
    assert error.remote_line == 'in fails, line 24: raise Bad(f"no square {i}, {j}")'
    assert error.remote_message == str(error) == "no square 7, 8"
    with pytest.raises(TypeError) as caught:
        ns["fails"](None)
    assert caught.value.remote_line.startswith("in fails, line 23: i, j = action")
    with pytest.raises(SystemExit) as leaving:
        ns["leaves"]()
    assert not isinstance(leaving.value, Exception) and leaving.value.remote_message == "bye"


def test_a_stub_is_not_written(ns):
    with pytest.raises(NotImplementedError):
        ns["result"]([[None] * 3] * 3, (0, 0))


def test_only_plain_data_is_given(ns):
    with pytest.raises(NotPlainData):
        ns["same"](object())


# -- callbacks, sets and relays -------------------------------------------------------------------


def test_callbacks_count_every_call(server, ns):
    calls = []

    def helper(n):
        calls.append(n)
        return n * 10

    ns["helper"] = helper
    assert ns["twice"](1) == 30 and calls == [1, 2]
    assert ns["deeper"](3) == 50 and calls == [1, 2, 2, 3]
    calls.clear()

    def nested(n):  # a callback that calls the student's code, which calls back
        calls.append(n)
        return ns["twice"](n - 100) if n >= 100 else n

    ns["helper"] = nested
    assert ns["twice"](100) == (0 + 1) + (1 + 2)  # callback -> call -> callback, twice
    assert calls == [100, 0, 1, 101, 1, 2]


def test_a_trusted_exception_is_relayed_through_the_students_code(ns):
    from grader.checks import CheckFailed

    failure = CheckFailed("the grader's own")

    def helper(n):
        raise failure

    ns["helper"] = helper
    with pytest.raises(CheckFailed) as caught:
        ns["swallows"]()
    assert caught.value is failure

    def refuses(n):
        raise ValueError(f"not {n}")

    ns["helper"] = refuses
    assert ns["catches"]() == "caught not -1"


def test_set_then_restore_the_original(ns):
    original = ns["same"]
    ns["helper"] = original
    assert ns["twice"](2) == 5
    ns["same"] = lambda value: "replaced"
    assert ns["via_same"](1) == "replaced"
    assert original(1) == 1  # the server's object itself is unchanged
    ns["same"] = original
    assert ns["via_same"](1) == 1 and ns["same"] is original


def test_exec_with_the_namespace_as_globals_sets_names_in_the_server(ns):
    exec("x = 41\nx += 1\ny = same([1])", ns)
    assert ns["y"] == [1]
    assert ns["global_x"]() == 42
    del ns["x"]
    with pytest.raises(NameError):
        ns["global_x"]()
    ns.update(x=5)
    assert ns["global_x"]() == 5
    assert ns.pop("x") == 5 and ns.pop("x", None) is None


def test_a_stand_in_built_in_the_server(ns):
    class StandIn:
        _sandbox_local = ("grader.checks.student", "_stand_in", ["player"])

    ns["player"] = StandIn()
    board = [["X", None, None], [None, None, None], [None, None, None]]
    assert ns["calls_player"](board) == "O"


# -- limits ---------------------------------------------------------------------------------------


def test_the_soft_cpu_limit_stops_a_loop(server, ns):
    pid = server._popen.pid
    with server.cpu_limit(0.3), pytest.raises(RemoteTimeout):
        ns["loops"]()
    assert server._popen.pid == pid  # stopped inside: the server goes on
    assert ns["same"](1) == 1


def test_a_loop_that_blocks_the_timer_is_killed_from_outside(tmp_path):
    with Remote({"cells": CELLS}, cwd=tmp_path, grace=0.5) as linked:
        ns = linked.namespace()
        start = time.monotonic()
        with linked.cpu_limit(0.2), pytest.raises(RemoteTimeout):
            ns["blocks"]()
        assert time.monotonic() - start < 10
        assert ns["same"](2) == 2  # a new server


def test_a_stalled_server_is_killed_and_the_calls_after_are_not_run(tmp_path):
    with Remote({"cells": CELLS}, cwd=tmp_path, stall_seconds=1.0) as linked:
        ns = linked.namespace()
        ns["N"] = "kept"
        popen = linked._popen
        with pytest.raises(RemoteStalled, match="this call was stopped"):
            ns["sleeps"]()
        assert popen.poll() is not None  # killed, not left to sleep
        with pytest.raises(RemoteStalled, match="this call was not run"):  # the allowance is the Remote's, all of it
            ns["same"](3)
        assert linked._popen is popen  # no new server was started for it


def test_a_dead_server_is_started_again_with_the_sets_in_force(tmp_path):
    calls = []
    with Remote({"cells": CELLS}, cwd=tmp_path) as linked:
        ns = linked.namespace()
        ns["helper"] = lambda n: calls.append(n) or n
        with pytest.raises(RemoteDied) as died:
            ns["dies"]()
        assert died.value.status == 3
        assert ns["twice"](1) == 3 and calls == [1, 2]  # the callback was set again


def test_output_is_capped_and_the_client_stays_small(tmp_path):
    with Remote({"cells": CELLS}, cwd=tmp_path, output_bytes=1000) as linked:
        ns = linked.namespace()
        linked.take_output()
        before = psutil.Process().memory_info().rss
        assert ns["prints"](200) == 200
        grown = psutil.Process().memory_info().rss - before
        text = linked.take_output()
        assert text.startswith("x" * 1000) and f"{200 * 2**20 - 1000:,} more bytes not kept" in text
        assert grown < 50 * 2**20
        assert linked.take_output() == ""
        assert ns["same"]("still") == "still"


def _liar(script: str):
    """A launcher that starts a fake server running `script` (with RFD, WFD in sys.argv)."""

    def launch(argv, **options):
        return client._default_launcher([sys.executable, "-c", script, *argv[-2:]], **options)

    return launch


def _said(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


@pytest.mark.parametrize("said", [b"\xff\xff\xff\xf0", _said(b"}{garbage"), _said(b"[]"), _said(b'{"names": 5}'),
                                  _said(b'{"names": [], "skipped": 5, "error_raised": "x"}') + _said(b"[1]")])
def test_a_hostile_server_gives_a_clean_protocol_error(tmp_path, said):
    # the first word is the grader's own server's (before any student code runs); the load's reply on is hostile
    said = _said(b'{"hello": true, "seq": 1}') + said
    script = f"import os, sys, time; os.write(int(sys.argv[2]), {said!r}); time.sleep(30)"
    linked = Remote({"cells": []}, cwd=tmp_path, launcher=_liar(script))
    try:
        with pytest.raises(RemoteProtocolError):
            linked.start()  # the load's reply (ill-typed fields of a load reply are ignored) ...
            linked.clear_caches()  # ... or the one after it
        assert linked._dead is not None and linked._popen.poll() is not None  # killed, not left to sleep
    finally:
        linked.close()


def test_a_server_that_does_not_answer_its_first_word_is_the_machines_trouble(tmp_path):
    script = f"import os, sys, time; os.write(int(sys.argv[2]), {_said(b'[]')!r}); time.sleep(30)"
    linked = Remote({"cells": []}, cwd=tmp_path, launcher=_liar(script))
    try:
        with pytest.raises(remote.SandboxNotStarted):
            linked.start()
    finally:
        linked.close()


# -- the grader's traps, files, and the sandbox -----------------------------------------------------


def test_traps_and_refusal_run_next_to_the_students_code(server, ns):
    from grader.checks import CheckFailed, ReferenceCalled

    with server.traps("player"), pytest.raises(ReferenceCalled):
        ns["uses_reference"]([])
    assert ns["uses_reference"]([]) == "X"
    with pytest.raises(CheckFailed):
        server.refuse(ns["uses_reference"], "player", "player")
    assert server.refuse(ns["mark"], "player", "player") is None


def test_a_python_file_loads_reloads_and_clears_caches(tmp_path):
    path = tmp_path / "tictactoe.py"
    path.write_text(textwrap.dedent('''
        import functools
        print("top level runs")
        X = "X"

        @functools.lru_cache(maxsize=None)
        def count(n):
            global CALLS
            CALLS += 1
            return CALLS

        CALLS = 0

        def calls():
            return CALLS
    '''))
    with Remote({"file": str(path), "cpu": 10}, cwd=tmp_path) as linked:
        ns = linked.namespace()
        assert "top level runs" in linked.take_output()
        assert ns["count"](1) == 1 and ns["count"](1) == 1
        assert linked.clear_caches() == 1
        assert ns["count"](1) == 2
        fresh = linked.reload()
        assert fresh["calls"].id == ns["calls"].id and fresh["calls"]() == 0
    path.write_text("raise RuntimeError('broken')\n")
    with Remote({"file": str(path)}, cwd=tmp_path) as linked:
        assert type(linked.load_error).__name__ == "RuntimeError" and "broken" in str(linked.load_error)


def test_the_server_runs_in_the_sandbox(tmp_path):
    from grader import sandbox

    assert sandbox.available() is None, f"no sandbox on this machine: {sandbox.available()}"
    with Remote({"cells": CELLS}, cwd=tmp_path, launcher=sandbox.Sandbox([tmp_path]).popen, grace=0.5) as linked:
        ns = linked.namespace()
        board = [[None] * 3 for _ in range(3)]
        assert ns["same"](board) is board
        with linked.cpu_limit(0.2), pytest.raises(RemoteTimeout):
            ns["blocks"]()
        assert ns["same"](1) == 1


# -- planned calls: a check's fixed sequence of calls in a few crossings -----------------------------

PLANNED = textwrap.dedent('''
    import os, time

    def mark(board):
        board[0][0] = "X"

    def same(value):
        return value

    def seen(n):
        SEEN.append(n)
        return len(SEEN)

    def checked(n):
        if n < 0:
            raise ValueError(f"no {n}")
        return n

    def dies_on(n):
        if n == 3:
            os._exit(3)
        return n

    def burns(seconds):
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass
        return seconds

    def twice(n):
        return helper(n) + helper(n + 1)

    def sneaky(board):
        class Sneaky:
            def __repr__(self):
                board[1][1] = "O"
                return "sneaky"
        return Sneaky()

    SEEN = []
''')


@pytest.fixture
def planned(tmp_path):
    with Remote({"cells": [PLANNED]}, cwd=tmp_path, grace=1.0) as linked:
        requests = []
        send = linked._request

        def counted(message, **options):
            requests.append(message["op"])
            return send(message, **options)

        linked._request = counted
        linked.requests = requests
        yield linked


def test_planned_calls_are_answered_as_calls_one_by_one_in_a_few_requests(planned):
    ns = planned.namespace()
    boards = [[[None] * 3 for _ in range(3)] for _ in range(100)]
    planned.expect(ns["mark"], [([[None] * 3 for _ in range(3)],) for _ in boards], traps=None)
    for board in boards:
        rows = list(board)
        assert ns["mark"](board) is None
        assert board[0][0] == "X" and board[0] is rows[0]  # the mutation written into the caller's own list
    planned.expect(ns["same"], [([1, 2],)] * 50, traps=None)
    for _ in range(50):
        given = [1, 2]
        assert ns["same"](given) is given  # an argument returned is the caller's own object
    planned.expect(ns["checked"], [(n,) for n in range(-5, 5)], traps=None)
    for n in range(-5, 5):
        if n < 0:
            with pytest.raises(ValueError, match=f"no {n}") as caught:
                ns["checked"](n)
            assert caught.value.remote_line == f'in checked, line 16: raise ValueError(f"no {{n}}")'
        else:
            assert ns["checked"](n) == n
    assert planned.requests.count("call") == 0 and planned.requests.count("map") == 3 + 2 + 1  # 16, 64, 20; 16, 34; 10
    assert planned.calls == 160


def test_a_call_off_the_plan_drops_it_and_the_calls_made_ahead_stay_made(planned):
    ns = planned.namespace()
    planned.expect(ns["seen"], [(n,) for n in range(40)], traps=None)
    assert ns["seen"](0) == 1  # the first 16 are made now
    assert ns["same"](5) == 5  # off the plan: a call of its own
    assert ns["seen"](1) == 17  # not from the plan: the server's state moved on with the calls made ahead
    assert planned.requests == ["map", "call", "call"]


def test_a_planned_call_that_ends_its_server_is_told_on_that_call(planned):
    ns = planned.namespace()
    planned.expect(ns["dies_on"], [(n,) for n in range(8)], traps=None)
    assert [ns["dies_on"](n) for n in range(3)] == [0, 1, 2]  # made again, one by one, in a new server
    with pytest.raises(RemoteDied):
        ns["dies_on"](3)
    assert [ns["dies_on"](n) for n in range(4, 8)] == [4, 5, 6, 7]


def test_planned_calls_keep_each_limit_and_the_tests_budget(planned):
    ns = planned.namespace()
    with planned.cpu_limit(0.3):
        planned.expect(ns["burns"], [(0.01,), (5.0,), (0.02,)], traps=None)
        assert ns["burns"](0.01) == 0.01
        with pytest.raises(RemoteTimeout, match=re.escape(over_limit("burns", 0.3))):
            ns["burns"](5.0)
        assert ns["burns"](0.02) == 0.02
    with planned.budget(1.0):
        planned.expect(ns["burns"], [(0.3,)] * 10, traps=None)
        done = 0
        with pytest.raises(RemoteTimeout, match=re.escape(over_limit("the test", 1))):
            for _ in range(10):
                ns["burns"](0.3)
                done += 1
        assert 2 <= done <= 3  # told on the call that ran out, not on the first of the plan
    assert planned.cpu_seconds() < 5


def test_planned_calls_call_back_in_order_and_relay_the_graders_exceptions(planned):
    from grader.checks import CheckFailed

    ns = planned.namespace()
    calls = []
    ns["helper"] = lambda n: calls.append(n) or n
    planned.expect(ns["twice"], [(1,), (2,)], traps=None)
    assert ns["twice"](1) == 3 and ns["twice"](2) == 5 and calls == [1, 2, 2, 3]
    failure = CheckFailed("the grader's own")

    def refuses(n):
        if n == 4:
            raise failure
        return n

    ns["helper"] = refuses
    planned.expect(ns["twice"], [(1,), (3,), (5,)], traps=None)
    assert ns["twice"](1) == 3
    with pytest.raises(CheckFailed) as caught:
        ns["twice"](3)
    assert caught.value is failure
    assert ns["twice"](5) == 11


def test_an_argument_changed_while_the_answer_is_read_comes_back_changed(planned):
    ns = planned.namespace()
    for plan in (False, True):
        board = [[None] * 3 for _ in range(3)]
        if plan:
            planned.expect(ns["sneaky"], [([[None] * 3 for _ in range(3)],)], traps=None)
        got = ns["sneaky"](board)
        assert isinstance(got, Unplain) and repr(got) == "sneaky"
        assert board[1][1] == "O"


def test_notes_come_with_the_answer_bounded_whatever_the_student_writes(tmp_path):
    cells = [textwrap.dedent('''
        from grader import remote

        def writes(n):
            remote.NOTES.extend(["........."] * n + [None, 7, "x" * 1000, "X........"])
            return n

        def raises():
            remote.NOTES.append("O........")
            raise ValueError("after a note")
    ''')]
    heard = []
    with Remote({"cells": cells}, cwd=tmp_path) as linked:
        ns = linked.namespace()
        assert ns["writes"](3) == 3  # no listener: nothing is read
        with linked.listening(heard.append):
            assert ns["writes"](2) == 2
            assert heard == [["........."] * 2 + ["X........"]]  # only text, each at most NOTE_CHARS
            heard.clear()
            assert ns["writes"](remote.MAX_NOTES + 10) == remote.MAX_NOTES + 10
            assert len(heard[0]) == remote.MAX_NOTES
            heard.clear()
            with pytest.raises(ValueError):
                ns["raises"]()
            assert heard == [["O........"]]  # the boards a search passed before it raised count too
