"""The trusted side's work on what a student's server sends is linear in its size: a reply that would
make the grader build a hash-flooded set (many distinct items with one hash) or hash a small message
that stands for a tree of 2^100 items is refused at once, the function fails with a plain message, and
the next call gets a new server. Attacks written as a student who has read grader/remote/ would:
the student's function writes its own reply frame to the server's pipe."""

from __future__ import annotations

import json
import re
import resource
import struct
import textwrap
import time

import pytest

from grader import checks, remote
from grader.checks import CheckFailed
from grader.remote import MAX_SAME_HASH, MAX_UNFOLDED, Remote, RemoteProtocolError, RemoteTimeout, decode, encode
from grader.sandbox import Sandbox, available
from ttt.limits import over_limit

COLLIDING = 2**61 - 1  # every multiple of it hashes to 0


def _dag(depth: int) -> list:
    """The tree of a tuple holding the tuple before it twice, `depth` times: 2^depth items as a tree.
    Containers are numbered in the order they open, so the tuple at depth d is number d (the set is 0)."""
    tree: list = ["t", 1]
    for d in range(depth, 0, -1):
        tree = ["t", tree, ["r", d + 1]]
    return tree


def test_a_hash_flooded_set_is_refused_in_linear_time():
    for count in (5_000, 200_000):
        tree = ["s"] + [encode(COLLIDING * k) for k in range(1, count)]
        start = time.process_time()
        with pytest.raises(RemoteProtocolError, match="share one hash"):
            decode(tree)
        assert time.process_time() - start < 2.0  # quadratic: 5,000 items took 0.34 s, 200,000 would take 9 minutes
    for tag in ("f", "d"):
        items = [encode(COLLIDING * k) for k in range(1, MAX_SAME_HASH + 2)]
        tree = [tag] + ([x for item in items for x in (item, 0)] if tag == "d" else items)
        with pytest.raises(RemoteProtocolError, match="share one hash"):
            decode(tree)


def test_a_small_message_that_unfolds_to_a_huge_tree_is_refused():
    assert len(json.dumps(["s", _dag(100)])) < 5_000
    start = time.process_time()
    with pytest.raises(RemoteProtocolError, match=f"more than {MAX_UNFOLDED:,} items"):
        decode(["s", _dag(100)])  # before the bound, hashing it never ended
    with pytest.raises(RemoteProtocolError):
        decode(["l", _dag(100)])  # comparing or showing it would not end either
    assert time.process_time() - start < 1.0
    assert decode(["s", _dag(10)])  # 1,024 items: fine


def test_plain_answers_of_every_size_a_lesson_gives_still_pass():
    row = [None, "X", "O"]
    aliased = decode(encode([row, row, row]))  # a board whose rows are one list: kept so, for the checks to see
    assert aliased[0] is aliased[1] is aliased[2]
    assert decode(encode({-1, -2, 0, 1})) == {-1, -2, 0, 1}  # -1 and -2 share a hash: a few may
    assert decode(encode({(i, j) for i in range(9) for j in range(9)})) == {(i, j) for i in range(9) for j in range(9)}
    table = {str(k): [k, {k % 3, k % 5}, (k, None)] for k in range(5_478)}  # a table of answers on every position
    assert decode(encode(table)) == table
    assert decode(encode(list(range(300_000)))) == list(range(300_000))


def _frame(message: dict) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode()
    return struct.pack(">I", len(body)) + body


# The student's function answers for its server: it writes a reply frame itself on the pipe to the grader
# (its number is the server's last argument), with the number of the operation it answers (read from the
# server's frames, as anyone who has read the protocol can), then waits for the grader to read it.
HOSTILE = textwrap.dedent('''
    import os, sys, time

    def _seq():
        frame = sys._getframe()
        while frame is not None:
            message = frame.f_locals.get("message")
            if isinstance(message, dict) and type(message.get("seq")) is int:
                return message["seq"]
            frame = frame.f_back

    def _write(reply):
        import json, struct
        body = json.dumps({**reply, "seq": _seq()}, separators=(",", ":")).encode()
        os.write(int(sys.argv[-1]), struct.pack(">I", len(body)) + body)

    def _reply(data):
        _write({"data": ["l", data, ["l"]], "subclasses": [], "ok": True})
        time.sleep(60)

    def forges(value):
        _write({"data": ["l", value, ["l"]], "subclasses": [], "ok": True})
        return "the real answer"

    def forges_and_burns():
        _write({"data": ["l", 1, ["l"]], "subclasses": [], "ok": True})
        while True:
            try:
                while True:
                    pass
            except BaseException:
                pass

    def burns_after():
        import threading

        def burn():
            end = time.process_time() + 4
            while time.process_time() < end:
                pass

        threading.Thread(target=burn, daemon=True).start()
        return 1

    def actions(board):
        _reply(["s"] + [["i", format((2**61 - 1) * k, "x")] for k in range(1, 300_000)])

    def flood_set():
        _reply(["s"] + [["i", format((2**61 - 1) * k, "x")] for k in range(1, 300_000)])

    def unfolds():
        tree = ["t", 1]
        for d in range(100, 0, -1):
            tree = ["t", tree, ["r", d + 2]]  # the reply's list is number 0, the set 1
        _reply(["s", tree])

    def fine():
        return {1, 2, 3}

    def says_error():
        _write({"error": "no such operation"})
        time.sleep(60)
''')


@pytest.fixture
def sandboxed(tmp_path):
    reason = available()
    assert reason is None, f"no sandbox can start here: {reason}"  # fails, not skips: the attack tests need it
    with Remote({"cells": [HOSTILE], "cpu": 20}, cwd=tmp_path, launcher=Sandbox([tmp_path]).popen, cpu=10) as linked:
        yield linked


@pytest.mark.slow
@pytest.mark.parametrize("name, said", [("flood_set", "share one hash"), ("unfolds", "more than once")])
def test_a_hostile_reply_costs_the_grader_little_and_the_next_call_works(sandboxed, name, said):
    ns = sandboxed.namespace()
    before = resource.getrusage(resource.RUSAGE_SELF)
    with pytest.raises(RemoteProtocolError, match=said):
        ns[name]()
    after = resource.getrusage(resource.RUSAGE_SELF)
    grader_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    assert grader_cpu < 3.0, f"the grader spent {grader_cpu:.1f} CPU s on one reply"  # unbounded before: hours
    assert sandboxed.namespace()["fine"]() == {1, 2, 3}  # a new server answers the next call


@pytest.mark.slow
def test_a_check_fails_the_function_with_a_plain_message(sandboxed):
    with pytest.raises(CheckFailed) as failed:
        checks.check_actions(sandboxed.namespace()["actions"])
    said = str(failed.value)
    assert "actions(board): answered with something the grader refuses to take" in said
    assert "share one hash" in said and "Traceback" not in said


def test_text_shared_many_times_counts_by_its_length():
    """300 references to one list holding a 1 MB string: about 300 items, but 300 MB to show in a failure
    message (the grader spent 11 CPU minutes formatting such answers, the student's server 2 s)."""
    text = "x" * 2**20
    inner = [text]
    with pytest.raises(RemoteProtocolError, match="more than 1,000,000 items"):
        decode(encode([inner] * 300))
    assert decode(encode([inner] * 3)) == [inner] * 3 and decode(encode(text * 10)) == text * 10  # 10 MB once: fine


def test_an_int_too_long_for_repr_is_taken_and_a_check_says_what_it_got():
    """repr() of an int of more than 4,300 decimal digits raises ValueError: the check still says what it got."""
    from grader.checks.failures import _kind_of, _shown

    big = decode(encode(16**9999))
    assert big == 16**9999
    assert _shown(big) == "<an int of 39,997 bits, too long to write out>" and "too long" in _shown([1, big])
    assert _kind_of(big) == "the number <an int of 39,997 bits, too long to write out>"


@pytest.mark.slow
def test_an_error_written_by_the_students_code_is_its_answer_not_the_graders_trouble(sandboxed):
    ns = sandboxed.namespace()
    with pytest.raises(RemoteProtocolError, match="call was answered with an error"):
        ns["says_error"]()  # before: a RuntimeError of the grader's, and the unit was never graded
    sandboxed.expect(ns["says_error"], [()] * 3, traps=None)
    with pytest.raises(RemoteProtocolError, match="call was answered with an error"):
        ns["says_error"]()  # a planned call too: told on its own call
    assert ns["fine"]() == {1, 2, 3}


@pytest.mark.slow
def test_a_reply_written_ahead_of_the_servers_is_caught_on_the_next_operation(sandboxed):
    """Each operation is numbered and its reply carries the number: a reply the student's code writes is its
    own word for its own call, and the server's reply that follows it, read as the next operation's
    answer, is refused (before: every answer after it was taken for the call before, and graded as such)."""
    ns = sandboxed.namespace()
    assert ns["forges"](5) == 5  # the student's word, for its own call
    with pytest.raises(RemoteProtocolError, match="answered with a reply to another operation"):
        ns["fine"]()
    assert ns["fine"]() == {1, 2, 3}  # a new server
    sandboxed.expect(ns["forges"], [(k,) for k in range(40)], traps=None)
    assert ns["forges"](0) == 0  # the batch's reply was written by the first call
    with pytest.raises(RemoteProtocolError, match="answered with a reply to another operation"):
        for k in range(1, 40):
            ns["forges"](k)


@pytest.mark.slow
def test_work_after_a_written_reply_is_bounded_by_the_next_operation(sandboxed):
    """The grader's own operations (here a `set`) have a CPU limit too: a submission that answers for
    its server and goes on computing cannot hold the grader for longer (before: for as long as it liked)."""
    ns = sandboxed.namespace()
    assert ns["forges_and_burns"]() == 1
    began = time.monotonic()
    with pytest.raises(RemoteTimeout, match="stopped from outside"):
        ns["x"] = 1
    assert time.monotonic() - began < 120
    assert ns["fine"]() == {1, 2, 3}


@pytest.mark.slow
def test_a_test_that_goes_on_computing_after_its_answers_is_out_of_time(sandboxed):
    ns = sandboxed.namespace()
    with pytest.raises(RemoteTimeout, match=re.escape(over_limit("the test", 1))), sandboxed.budget(1.0):
        began = sandboxed.cpu_seconds()
        assert ns["burns_after"]() == 1
        deadline = time.monotonic() + 120
        while sandboxed.cpu_seconds() - began < 3.5 and time.monotonic() < deadline:
            time.sleep(0.1)  # its thread burns on after the answer
