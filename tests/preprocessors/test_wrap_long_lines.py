"""WrapLongLines: the feedback page gets one style, so that a long line of output wraps at the page's edge."""

from __future__ import annotations

import copy
import os
import re

import nbgrader
import pytest
from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.utils import is_grade, is_solution
from traitlets.config import Config

from grader.feedback import WrapLongLines

STYLE = "div.output_area pre { white-space: pre-wrap; overflow-wrap: anywhere; }"


@pytest.fixture
def preprocessor():
    return WrapLongLines()


def test_its_style_comes_after_the_page_s_own_css(preprocessor, autograded, resources, tmp_path):
    """Run after CSSHTMLHeaderPreprocessor, it adds its style last and keeps the styles already there."""
    resources["config_dir"] = str(tmp_path)  # where an exporter says Jupyter's custom.css would be
    autograded, resources = CSSHTMLHeaderPreprocessor().preprocess(autograded, resources)
    page_css = list(resources["inlining"]["css"])
    assert page_css and STYLE not in page_css
    nb, resources = preprocessor(autograded, resources)
    assert resources["inlining"]["css"] == page_css + [STYLE]


def test_it_makes_room_for_its_style_and_leaves_the_notebook_alone(preprocessor, autograded):
    """With no CSS yet in the resources it starts the list; the notebook is not changed."""
    before = copy.deepcopy(autograded)
    nb, resources = preprocessor(autograded, {})
    assert resources == {"inlining": {"css": [STYLE]}}
    assert nb == before


def test_the_style_and_the_switch_are_configurable(autograded):
    """WrapLongLines.css replaces the style; WrapLongLines.enabled = False adds none."""
    mine = "pre { white-space: pre-line; }"
    _, styled = WrapLongLines(config=Config({"WrapLongLines": {"css": mine}}))(autograded, {})
    assert styled["inlining"]["css"] == [mine]
    _, off = WrapLongLines(config=Config({"WrapLongLines": {"enabled": False}}))(autograded, {"inlining": {"css": []}})
    assert off["inlining"]["css"] == []


def test_the_feedback_page_holds_the_style_and_the_long_line_is_in_an_output_area_pre(autograded, resources):
    """nbgrader's feedback template writes the style after the page's CSS (Bootstrap's, Pygments'), with no later
    style setting white-space, and the 200-character line of printed output sits in a <pre> inside a div.output_area,
    which the style's selector matches."""
    for cell in autograded.cells:  # what GetGrades adds before, which the template reads
        if is_grade(cell):
            cell.metadata.nbgrader["score"] = 0.0
        if is_grade(cell) or is_solution(cell):
            cell.metadata.nbgrader["comment"] = None
    resources["nbgrader"].update(score=0.0, max_score=6.0, late_penalty=0.0)
    formgrader = os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader")
    exporter = HTMLExporter(config=Config({"HTMLExporter": {
        "template_name": "feedback", "extra_template_basedirs": [os.path.join(formgrader, "templates")],
        "extra_template_paths": [os.path.join(formgrader, "static", "node_modules", "bootstrap", "dist", "css")]}}))
    exporter.register_preprocessor(CSSHTMLHeaderPreprocessor(), enabled=True)
    exporter.register_preprocessor(WrapLongLines(), enabled=True)
    page, _ = exporter.from_notebook_node(autograded, resources=resources)
    styles = re.findall(r"<style[^>]*>(.*?)</style>", page.split("<body")[0], re.S)
    ours = [style.strip() for style in styles].index(STYLE)
    assert ours > 0 and "Bootstrap" in styles[0]
    assert not any("white-space" in style for style in styles[ours + 1:])
    line = "[[(0, 0), (0, 1), (0, 2)], [(1, 0), (1, 1), (1, 2)]"
    assert re.search(r'<div class="output_area">\s*<div class="prompt"></div>\s*'
                     r'<div class="output_subarea output_stream output_stdout output_text">\s*<pre>' + re.escape(line), page)
