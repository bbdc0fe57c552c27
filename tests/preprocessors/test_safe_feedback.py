"""SafeFeedback: the feedback shows a submission's markup and scripts as text and runs none of them."""

from __future__ import annotations

import copy

import pytest
from nbconvert.preprocessors.sanitize import SanitizeHTML
from traitlets.config import Config

from grader.feedback import LabelTests, SafeFeedback

from . import cell_with_id, read_notebook

MARKDOWN, RAW, SHOWN = 5, 6, 7  # the hostile cells of the fixture: a Markdown cell, a raw cell, a code cell and its outputs


@pytest.fixture
def preprocessor():
    return SafeFeedback()


@pytest.fixture
def cleaned(preprocessor, hostile, resources):
    """The hostile notebook after SafeFeedback, run as an exporter runs a preprocessor."""
    return preprocessor(hostile, resources)[0]


def test_it_is_on_unless_turned_off(hostile, resources):
    """Unlike nbconvert's SanitizeHTML, it runs without being enabled; SafeFeedback.enabled = False turns it off."""
    assert SanitizeHTML().enabled is False
    untouched = copy.deepcopy(hostile)
    off = SafeFeedback(config=Config({"SafeFeedback": {"enabled": False}}))
    assert off(hostile, resources)[0] == untouched
    assert SafeFeedback()(hostile, resources)[0] != untouched


def test_it_escapes_by_default_and_strips_when_configured_to():
    """The default shows a tag as text; with SafeFeedback.strip = True the tag goes and its text stays."""
    assert SafeFeedback().sanitize_html_tags("<script>alert(1)</script>") == "&lt;script>alert(1)&lt;/script>"
    stripping = SafeFeedback(config=Config({"SafeFeedback": {"strip": True}}))
    assert stripping.sanitize_html_tags("<script>alert(1)</script> v >= beta") == "alert(1) v >= beta"


def test_html_output_keeps_its_allowed_tags_and_shows_script_and_onerror_as_text(cleaned):
    """<b> stays markup; the <script> and the <img onerror> reach the page as escaped text."""
    html = cleaned.cells[SHOWN].outputs[1].data["text/html"]
    assert html == ("<b>X wins</b> &lt;script>document.title = 'html ran'&lt;/script>"
                    "&lt;img src=x onerror=\"document.title = 'onerror ran'\">")


def test_javascript_svg_and_widget_outputs_are_dropped_and_their_text_stays(cleaned):
    """Of the JavaScript, SVG and widget outputs only the plain-text version is left."""
    outputs = cleaned.cells[SHOWN].outputs
    assert [sorted(o.data) for o in outputs[2:4] + outputs[5:]] == [["text/plain"]] * 3
    assert outputs[-1].data["text/plain"] == "IntSlider(value=3)"


def test_markdown_output_is_cleaned_and_keeps_its_comparisons(cleaned):
    """A Markdown output loses its script tag, not its >=, & and <=."""
    assert cleaned.cells[SHOWN].outputs[4].data["text/markdown"] == (
        "v >= beta & alpha <= v &lt;script>document.title = 'markdown output ran'&lt;/script>")


def test_a_markdown_cell_is_cleaned_and_reads_as_written_otherwise(cleaned):
    """The Markdown cell's tags are escaped; its quote, code spans with >= and <=, & and bold read as the student wrote them."""
    source = cleaned.cells[MARKDOWN].source
    assert "<script" not in source and "<img" not in source
    assert "&lt;script>document.title = 'markdown ran'&lt;/script>" in source
    assert source.replace("&lt;", "<") == read_notebook("autograded-hostile").cells[MARKDOWN].source


def test_a_raw_cell_is_cleaned(cleaned):
    """A raw cell's script tag is escaped too."""
    assert cleaned.cells[RAW].source == "&lt;script>document.title = 'raw ran'&lt;/script>"


def test_stream_and_error_output_is_left_as_text(preprocessor, hostile, resources):
    """Printed text is not markup (the page escapes it): the printed <script> is not changed."""
    printed = copy.deepcopy(hostile.cells[SHOWN].outputs[0])
    assert "<script>" in printed.text
    assert preprocessor(hostile, resources)[0].cells[SHOWN].outputs[0] == printed


def test_a_graded_notebook_without_markup_comes_through_unchanged(preprocessor, autograded, resources):
    """Tracebacks, printed boards, Markdown with code spans and the student's notes: nothing to clean, nothing changed."""
    before = copy.deepcopy(autograded)
    assert preprocessor(autograded, resources)[0] == before


def test_the_test_cells_headings_keep_their_bold(autograded, resources):
    """The headings LabelTests adds before it are allowed markup: they reach the page unchanged."""
    nb, _ = LabelTests().preprocess(autograded, resources)
    heading = copy.deepcopy(cell_with_id(nb, "winner-tests").outputs[0])
    nb, _ = SafeFeedback()(nb, resources)
    assert cell_with_id(nb, "winner-tests").outputs[0] == heading


@pytest.mark.parametrize("text, shown", [
    ("v >= beta", "v >= beta"),
    ("> a quote", "> a quote"),
    ("alpha <= v", "alpha <= v"),
    ("x < y", "x < y"),
    ("a & b", "a & b"),
    ("`x<5`", "`x<5`"),  # < before a digit opens no tag: a code span shows it as written
    ("`a && b`", "`a && b`"),
    ("AT&T", "AT&amp;T"),  # & before a letter could start an entity
    ("if a<b: pass", "if a&lt;b: pass"),  # < before a letter could open a tag
    ("<script>alert(1)</script>", "&lt;script>alert(1)&lt;/script>"),
    ("<svg onload=alert(1)>", "&lt;svg onload=alert(1)>"),
    ('<b onclick="alert(1)">X</b>', "<b>X</b>"),
    ('<a href="javascript:alert(1)">x</a>', "<a>x</a>"),
    ("<!-- hidden -->", ""),
])
def test_only_what_cannot_open_a_tag_or_an_entity_is_put_back(preprocessor, text, shown):
    """>, & before a space or &, and < before a space, a digit or = read as written; every tag, attribute and entity
    start stays escaped."""
    assert preprocessor.sanitize_html_tags(text) == shown
