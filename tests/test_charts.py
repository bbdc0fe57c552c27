"""The lessons' charts (ttt.charts): Vega-Lite specifications of the table given, and that table as text."""

from __future__ import annotations

import json
import math

from ttt import charts

ROWS = [{"moves": m, "result": who, "positions": n} for m, who, n in
        [(5, "X wins", 120), (5, "tie", 0), (6, "X wins", 0), (6, "O wins", 148), (9, "tie", 16)]]


def test_a_bar_chart_carries_its_table_and_keeps_its_order():
    chart = charts.bars(ROWS, x="moves", y="positions", group="result", x_title="moves played")
    spec = chart._repr_mimebundle_()[charts.MIME]
    assert spec["data"]["values"] == ROWS
    assert spec["encoding"]["x"] == {"field": "moves", "type": "nominal", "sort": [5, 6, 9], "title": "moves played",
                                     "axis": {"labelAngle": 0}}
    assert spec["encoding"]["color"]["sort"] == ["X wins", "tie", "O wins"]
    assert spec["encoding"]["xOffset"]["field"] == "result" and spec["encoding"]["y"]["stack"] is None
    assert spec["usermeta"]["embedOptions"]["renderer"] == "svg"
    json.dumps(spec, allow_nan=False)  # plain JSON: what a notebook stores and a front end reads


def test_stacked_log_and_horizontal_bars():
    stacked = charts.bars(ROWS, x="moves", y="positions", group="result", stacked=True, colors={"tie": "grey"}).spec
    assert "xOffset" not in stacked["encoding"] and "stack" not in stacked["encoding"]["y"]
    assert stacked["encoding"]["color"]["scale"] == {"domain": ["X wins", "tie", "O wins"], "range": ["#888888", "grey", "#888888"]}
    assert [row["_order"] for row in stacked["data"]["values"]] == [0, 1, 0, 2, 1]
    log = charts.bars(ROWS, x="moves", y="positions", log=True).spec
    assert log["encoding"]["y"]["scale"] == {"type": "log", "domainMin": 1}
    lying = charts.bars(ROWS, x="moves", y="positions", horizontal=True).spec
    assert lying["encoding"]["y"]["field"] == "moves" and lying["encoding"]["x"]["field"] == "positions"


def test_a_heatmap_leaves_missing_squares_blank_and_side_by_side_joins_charts():
    rows = [{"a": a, "b": b, "lost": math.nan if a == b else 10 * a + b} for a in (1, 2) for b in (1, 2)]
    grid = charts.heatmap(rows, x="b", y="a", value="lost", domain=(0, 100))
    assert [row["lost"] for row in grid.spec["data"]["values"]] == [None, 12, 21, None]
    assert grid.spec["transform"] == [{"filter": "isValid(datum['lost'])"}]
    assert grid.spec["encoding"]["color"]["scale"] == {"scheme": "reds", "domain": [0, 100]}
    both = charts.side_by_side(grid, charts.bars(ROWS, x="moves", y="positions"))
    assert [part["mark"]["type"] for part in both.spec["hconcat"]] == ["rect", "bar"]
    assert "$schema" in both.spec and all("$schema" not in part for part in both.spec["hconcat"])
    json.dumps(both.spec, allow_nan=False)


def test_as_text_a_chart_is_its_table():
    assert str(charts.bars(ROWS[:2], x="moves", y="positions", group="result")) == (
        "moves  result  positions\n"
        "    5  X wins        120\n"
        "    5  tie             0")
    rows = [{"a": "x", "lost": math.nan}, {"a": "y", "lost": 1.5}]
    assert str(charts.heatmap(rows, x="a", y="a", value="lost")).splitlines()[1:] == ["x  x", "y  y   1.5"]
    both = charts.side_by_side(charts.bars(ROWS[:1], x="moves", y="positions"), charts.bars(ROWS[1:2], x="moves", y="positions"))
    assert str(both) == "moves  positions\n    5        120\n\nmoves  positions\n    5          0"
