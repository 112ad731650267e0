"""Small HTML builders of the release report: escaped text, tables, and number cells that
carry the exact value they show (``data-key``: its path in ``Assessment.to_dict()``,
``data-value``: the value, round-tripping), so that a reader or a test can check every
figure against the assessment."""

from __future__ import annotations

import html
import math
from typing import Any, Iterable, Optional, Sequence


def esc(value: Any) -> str:
    """``value`` as text safe inside HTML elements and quoted attributes."""
    return html.escape(str(value), quote=True)


def fmt(value: Any, style: str = "g") -> str:
    """How a number reads: ``"pct"`` a fraction in percent, ``"g"`` six significant digits,
    ``"int"`` with thousands separators; ``None`` reads "not computed", NaN "undefined"."""
    if value is None:
        return "not computed"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) or style == "int":
        return f"{int(value):,}"
    v = float(value)
    if math.isnan(v):
        return "undefined"
    if style == "pct":
        return f"{100 * v:.3f} %"
    return f"{v:.6g}"


def td(value: Any, key: Optional[str] = None, style: str = "g", flag: str = "") -> str:
    """A table cell: a number (formatted by :func:`fmt`, tagged with ``key`` when given) or,
    for any other value, its escaped text; ``flag`` is an extra CSS class (``"miss"``)."""
    numeric = value is None or isinstance(value, (bool, int, float))
    classes = " ".join(c for c in ("num" if numeric else "", flag) if c)
    attrs = f' class="{classes}"' if classes else ""
    if not numeric:
        return f"<td{attrs}>{esc(value)}</td>"
    if key is not None:
        attrs += f' data-key="{esc(key)}"'
        if value is not None:
            attrs += f' data-value="{esc(repr(value))}"'
    return f"<td{attrs}>{esc(fmt(value, style))}</td>"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], caption: Optional[str] = None, cls: str = "") -> str:
    """A table of escaped ``headers`` and rows of cells built by :func:`td` (or ``<th>``)."""
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in headers)
    body = "".join(f"<tr>{''.join(r)}</tr>" for r in rows)
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    c = f' class="{cls}"' if cls else ""
    return f"<table{c}>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def th(text: Any) -> str:
    """A row header cell."""
    return f'<th scope="row">{esc(text)}</th>'


def section(ident: str, heading: str, body: str) -> str:
    """One report section, found by its ``id``."""
    return f'<section id="{esc(ident)}"><h2>{esc(heading)}</h2>{body}</section>'


def p(text: str) -> str:
    """A paragraph of escaped text."""
    return f"<p>{esc(text)}</p>"
