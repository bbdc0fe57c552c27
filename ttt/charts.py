"""The lessons' charts: Vega-Lite specifications that the notebook's front end draws itself.

    >>> from ttt import charts
    >>> chart = charts.bars([{"who": "X", "games": 6}, {"who": "O", "games": 3}], x="who", y="games")
    >>> chart.spec["mark"]["type"], chart.spec["encoding"]["y"]["field"]
    ('bar', 'games')
    >>> print(chart)
    who  games
    X        6
    O        3

A chart is a plain value with a ``_repr_mimebundle_``: JupyterLab and JupyterLite render the
Vega-Lite MIME type with their own renderer (the browser draws it, as SVG), so a lesson's chart
needs no plotting library and no compiled code in the kernel; it works the same in a browser-only
site, where such libraries cannot be installed. Elsewhere (a terminal, a text-only export) the
chart is shown as the table it draws. Functions take a table as a list of dicts, one per bar or
square, and the names of the columns to draw.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

MIME = "application/vnd.vegalite.v5+json"
SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"  # a name for the version, never fetched
_EMBED = {"renderer": "svg", "actions": False}  # SVG: drawn sharp at any size, and readable by a page's tests


class Chart:
    """A Vega-Lite chart (`spec`, a dict) of the table `rows` (list of dicts) with its `columns`."""

    def __init__(self, spec: dict, rows: Sequence[dict], columns: Sequence[str]) -> None:
        self.spec, self.rows, self.columns = spec, list(rows), list(columns)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return {MIME: self.spec, "text/plain": str(self)}

    def __str__(self) -> str:
        """The table the chart draws, a column per field (numbers to the right)."""
        cells = [[_cell(row.get(c)) for c in self.columns] for row in self.rows]
        widths = [max([len(c), *(len(r[k]) for r in cells)]) for k, c in enumerate(self.columns)]
        numeric = [all(isinstance(row.get(c), (int, float)) for row in self.rows) for c in self.columns]

        def line(values: Sequence[str]) -> str:
            return "  ".join(v.rjust(w) if n else v.ljust(w) for v, w, n in zip(values, widths, numeric)).rstrip()

        return "\n".join([line(self.columns), *(line(r) for r in cells)])

    __repr__ = __str__


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _spec(rows: Sequence[dict], title: Optional[str], **parts: Any) -> dict:
    spec = {"$schema": SCHEMA, "data": {"values": [_plain(row) for row in rows]}, **parts,
            "usermeta": {"embedOptions": _EMBED}}
    if title:
        spec["title"] = title
    return spec


def _plain(row: dict) -> dict:
    """A row as JSON can carry it: NaN (a square left blank) becomes None."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}


def _order(rows: Sequence[dict], field: str) -> list:
    """The values of `field` in the order they first occur: the chart keeps the table's order."""
    return list(dict.fromkeys(row[field] for row in rows))


def bars(rows: Sequence[dict], *, x: str, y: str, group: Optional[str] = None, stacked: bool = False,
         log: bool = False, horizontal: bool = False, title: Optional[str] = None, x_title: Optional[str] = None,
         y_title: Optional[str] = None, colors: Optional[dict] = None, width: int = 360, height: int = 200) -> Chart:
    """A bar chart of `rows`: a bar for each value of `x` (kept in the table's order), as tall as `y`.

    `group`: a column whose values make bars of their own colour, side by side in each `x`
    (or on top of each other, `stacked`), with a legend. `log`: `y` (a count) on a log scale from 1.
    `horizontal`: the bars lie along the page, `x` read down the side. `colors`: {group value: colour}.
    """
    category = {"field": x, "type": "nominal", "sort": _order(rows, x), "title": x_title or x,
                "axis": {"labelAngle": 0}}
    amount: dict = {"field": y, "type": "quantitative", "title": y_title or y}
    if log:
        amount["scale"] = {"type": "log", "domainMin": 1}  # bars rise from 1, so the least is drawn too
    if group is not None and not stacked:
        amount["stack"] = None
    encoding = {"x": amount, "y": category} if horizontal else {"x": category, "y": amount}
    if group is not None:
        names = _order(rows, group)
        color: dict = {"field": group, "type": "nominal", "sort": names, "title": None}
        if colors:
            color["scale"] = {"domain": names, "range": [colors.get(n, "#888888") for n in names]}
        encoding["color"] = color
        if not stacked:
            encoding["yOffset" if horizontal else "xOffset"] = {"field": group, "sort": names}
        else:
            encoding["order"] = {"field": "_order", "type": "quantitative"}
            rows = [{**row, "_order": names.index(row[group])} for row in rows]
    encoding["tooltip"] = [{"field": f} for f in (x, group, y) if f is not None]
    spec = _spec(rows, title, mark={"type": "bar"}, encoding=encoding, width=width, height=height)
    return Chart(spec, rows, [c for c in (x, group, y) if c is not None])


def heatmap(rows: Sequence[dict], *, x: str, y: str, value: str, title: Optional[str] = None,
            domain: Optional[tuple[float, float]] = None, scheme: str = "reds", size: int = 240) -> Chart:
    """A grid of squares, a row for each value of `y` and a column for each value of `x` (in the
    table's order), coloured by `value` (`domain`: the values the colours span); a square whose
    value is None or NaN is left blank."""
    scale: dict = {"scheme": scheme}
    if domain is not None:
        scale["domain"] = list(domain)
    encoding = {
        "x": {"field": x, "type": "nominal", "sort": _order(rows, x), "title": None, "axis": {"labelAngle": -45}},
        "y": {"field": y, "type": "nominal", "sort": _order(rows, y), "title": None},
        "color": {"field": value, "type": "quantitative", "scale": scale, "title": value},
        "tooltip": [{"field": y}, {"field": x}, {"field": value}],
    }
    spec = _spec(rows, title, mark={"type": "rect"}, encoding=encoding, width=size, height=size,
                 transform=[{"filter": f"isValid(datum[{value!r}])"}])
    return Chart(spec, rows, [y, x, value])


def side_by_side(*charts: Chart) -> Chart:
    """The charts in a row, each with its own data and title."""
    parts = [{k: v for k, v in chart.spec.items() if k not in ("$schema", "usermeta")} for chart in charts]
    spec = {"$schema": SCHEMA, "hconcat": parts, "resolve": {"scale": {"color": "independent"}},
            "usermeta": {"embedOptions": _EMBED}}
    return _Joined(spec, charts)


class _Joined(Chart):
    """Charts shown together; as text, their tables one under the other."""

    def __init__(self, spec: dict, charts: Sequence[Chart]) -> None:
        super().__init__(spec, [], [])
        self.charts = list(charts)

    def __str__(self) -> str:
        return "\n\n".join(str(chart) for chart in self.charts)

    __repr__ = __str__


__all__ = ["Chart", "MIME", "bars", "heatmap", "side_by_side"]
