"""What the release-report tests read back from the HTML: the number cells (``data-key``,
``data-value``, shown text) and the section ids, and how a ``data-key`` resolves in
``Assessment.to_dict()`` and the candidates."""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser
from typing import Any, Sequence

SECTIONS = ("summary", "provenance", "privacy", "utility", "ru-map")


class NumberCells(HTMLParser):
    """Collects (data-key, data-value, shown text) of every tagged cell and the section ids."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[tuple[str, str | None, str]] = []
        self.sections: list[str] = []
        self._open: list[Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section":
            self.sections.append(str(a["id"]))
        if "data-key" in a:
            self._open = [a["data-key"], a.get("data-value"), ""]

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open[2] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._open is not None:
            self.cells.append((self._open[0], self._open[1], self._open[2]))
            self._open = None


def parse(html: str) -> NumberCells:
    cells = NumberCells()
    cells.feed(html)
    return cells


def resolve(key: str, d: dict[str, Any], candidates: Sequence[dict[str, Any]] = ()) -> Any:
    """The value a ``data-key`` names: a dotted path into ``d`` (list indices as numbers), or
    into the candidates for ``candidates.i.name``."""
    parts = key.split(".")
    node: Any = {"candidates": list(candidates), **d}
    for part in parts:
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def check_cell(key: str, value: str | None, shown: str, expected: Any) -> None:
    """``data-value`` is exactly ``expected`` and the text shows it at its printed precision."""
    if expected is None:
        assert value is None and shown == "not computed", (key, value, shown)
        return
    assert value is not None, key
    if isinstance(expected, float) and math.isnan(expected):
        assert value == "nan" and shown == "undefined", (key, value, shown)
        return
    assert float(value) == float(expected) and type(expected)(float(value)) == expected, (key, value, expected)
    number = float(re.sub(r"[ ,%]", "", shown)) / (100 if shown.endswith("%") else 1)
    assert math.isclose(number, float(expected), rel_tol=1e-5, abs_tol=6e-6), (key, shown, expected)


def bar_counts(html: str) -> list[int]:
    """The record count of every histogram bar drawn (each bar's tooltip: ``original: count``
    or ``released: count``); the class-size chart's bars count records at risk, shown."""
    return [int(c) for c in re.findall(r"<rect [^>]*><title>(?:original|released): (\d+)</title></rect>", html)]


def frequency_rows(html: str) -> list[tuple[str, list[str]]]:
    """Every row of the frequency tables: (level as shown, the cells' text)."""
    rows = []
    for caption, body in re.findall(r"<caption>([^<]*): observed cells per level[^<]*</caption>.*?<tbody>(.*?)</tbody>",
                                    html):
        for level, cells in re.findall(r'<tr><th scope="row">([^<]*)</th>(.*?)</tr>', body):
            rows.append((level, re.findall(r"<td[^>]*>([^<]*)</td>", cells)))
    return rows


def check_small_cells(html: str, k: int) -> None:
    """The page keeps its small-cell rule: it states it, no bar counts 1 to k - 1 records, and
    no frequency-table row names a level with 1 to k - 1 records in a file (a row of merged
    rare levels shows "fewer than k" instead of such a count); for unweighted tables, whose
    cells count records."""
    assert f"describes fewer than {k} records of either file" in html
    assert [c for c in bar_counts(html) if 0 < c < k] == []
    for level, cells in frequency_rows(html):
        for text in cells[:2]:
            if text != f"fewer than {k}":
                count = float(text.replace(",", ""))
                assert not 0 < count < k, (level, cells)
