"""MarkSelfCheck: a lesson released from a course that turned the self-check off says so in its metadata."""

from __future__ import annotations

import copy

import pytest
from traitlets.config import Config

from grader.preprocessors import MarkSelfCheck
from grader.selfcheck import marked_off

OFF = Config({"SelfCheck": {"enabled": False}})


def test_a_course_with_the_self_check_off_marks_its_lessons(released):
    """With SelfCheck.enabled = False the released lesson carries ttt.self_check = False, and nothing else changes."""
    before = copy.deepcopy(released)
    nb, _ = MarkSelfCheck(config=OFF).preprocess(released, {})
    assert nb.metadata.ttt == {"self_check": False} and marked_off(nb)
    del nb.metadata["ttt"]
    assert nb == before


@pytest.mark.parametrize("config", [Config(), Config({"SelfCheck": {"enabled": True}})], ids=["default", "on"])
def test_a_course_with_the_self_check_on_leaves_its_lessons_unmarked(released, config):
    """By default, or with SelfCheck.enabled = True, the lesson comes out as it went in, without a ttt entry."""
    before = copy.deepcopy(released)
    nb, _ = MarkSelfCheck(config=config).preprocess(released, {})
    assert "ttt" not in nb.metadata and not marked_off(nb)
    assert nb == before


def test_a_stale_mark_in_the_lesson_goes_when_the_self_check_is_on(released):
    """A source lesson that still carries self_check = False (from an earlier course) is released unmarked."""
    released.metadata["ttt"] = {"self_check": False}
    nb, _ = MarkSelfCheck().preprocess(released, {})
    assert "ttt" not in nb.metadata and not marked_off(nb)


@pytest.mark.parametrize("config, expected", [(Config(), {"lesson": 2}), (OFF, {"lesson": 2, "self_check": False})],
                         ids=["on", "off"])
def test_other_ttt_metadata_is_kept(released, config, expected):
    """The lesson's own ttt entries stay, whichever way the switch is set."""
    released.metadata["ttt"] = {"lesson": 2, "self_check": True}
    nb, _ = MarkSelfCheck(config=config).preprocess(released, {})
    assert nb.metadata.ttt == expected
