"""The release report as one page: the sections in order inside a self-contained HTML
document (inline CSS, inline SVG, a Content-Security-Policy that forbids every fetch and
script), readable on screen and printed."""

from __future__ import annotations

import datetime
import os
from typing import Any, Optional, Protocol, Sequence

from .. import _core
from . import _sections
from ._html import esc
from ._small_cells import rule_text, threshold


class Assessed(Protocol):
    """What the report is written from: a :class:`microagg.Assessment`, read through its
    ``to_dict()`` only, so that the report package sits below the assessment (which imports
    it for ``Assessment.to_html``) and never imports it back."""

    def to_dict(self) -> dict[str, Any]:
        """The measures, as :meth:`microagg.Assessment.to_dict` gives them."""
        ...

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
"""Nothing may load: no script, font, style sheet or image from anywhere but the page."""

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
 margin:2rem auto;max-width:64rem;padding:0 1rem;color:#1a1a1a;line-height:1.4}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{border-bottom:2px solid #3b6fb6;padding-bottom:.2rem;margin-top:2rem}
h3{margin-top:1.4rem}
table{border-collapse:collapse;margin:.6rem 0 1rem;font-size:.92rem}
caption{text-align:left;font-weight:bold;padding:.2rem 0}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
thead th{background:#eef2f8}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.hash{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.8rem;word-break:break-all}
.ok{color:#1d6b35;font-weight:bold}.miss{color:#b00020;font-weight:bold}
#verdict{font-size:1.1rem;padding:.6rem .8rem;border-left:6px solid #888;background:#f5f5f5}
#verdict.ok{border-color:#1d6b35}#verdict.miss{border-color:#b00020}
.grid{display:flex;flex-wrap:wrap;gap:.6rem}figure.chart{margin:0}
table.wide{width:100%}.meta{color:#555}
@media print{body{margin:0;max-width:none;font-size:10pt}section{break-before:page}
 #summary{break-before:avoid}figure.chart,table{break-inside:avoid}h2,h3{break-after:avoid}}
"""


def render_report(
    assessment: Assessed,
    *,
    provenance: Optional[dict[str, Any]] = None,
    candidates: Optional[Sequence[dict[str, Any]]] = None,
    title: Optional[str] = None,
) -> str:
    """The HTML text of the release report of ``assessment``.

    Parameters
    ----------
    assessment : microagg.Assessment
        What :func:`microagg.assess` measured (pass ``k=`` there for the verdict).
    provenance : dict, optional
        What the caller knows of the run, shown as given: ``"original"`` and ``"released"``
        (dicts from :func:`file_provenance`: name, size, sha256), ``"key"`` (column name ->
        type), ``"parameters"`` (name -> value: k, method, strata, weights, aggregation,
        missing, max_part, engine, ...) and any further entries (e.g. ``"command"``), shown
        under "Run". ``"date"`` (now, UTC) and ``"microagg_version"`` are filled in when absent.
    candidates : sequence of dict, optional
        Releases compared before this one, each with ``"method"``, ``"k"``,
        ``"information_loss"`` and a risk (``"record_linkage_rate"``,
        ``"interval_disclosure"``): rows of ``microagg assess`` or ``{"method": m, "k": k,
        **assess(X, Xm).to_dict()}``. They add the R-U map section.
    title : str, optional
        The page heading (default "Release report", with the released file's name).
    """
    d = assessment.to_dict()
    prov = dict(provenance or {})
    prov.setdefault("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"))
    prov.setdefault("microagg_version", _core.__version__)
    candidates = list(candidates or [])
    for c in candidates:
        if not isinstance(c, dict) or "method" not in c or "k" not in c or "information_loss" not in c:
            raise ValueError(f"every candidate needs 'method', 'k' and 'information_loss', got {c!r}")
    if title is None:
        released = prov.get("released") or {}
        title = f"Release report: {released['name']}" if released.get("name") else "Release report"
    sections = [
        _sections.summary(d, prov),
        _sections.provenance(d, prov),
        _sections.privacy(d),
        _sections.utility(d),
    ]
    if candidates:
        sections.append(_sections.ru_map(candidates))
    nav = " · ".join(f'<a href="#{s}">{s.replace("-", " ")}</a>'
                     for s in ("summary", "provenance", "privacy", "utility", *(["ru-map"] if candidates else [])))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>{esc(title)}</h1>"
        f'<p class="meta">microagg {esc(prov["microagg_version"])}, {esc(prov["date"])}.</p>'
        f'<p id="small-cell-rule">{esc(rule_text(threshold(d)))}</p>'
        f"<nav>{nav}</nav></header><main>{''.join(sections)}</main></body></html>\n"
    )


def write_report(
    path: Any,
    assessment: Assessed,
    provenance: Optional[dict[str, Any]] = None,
    candidates: Optional[Sequence[dict[str, Any]]] = None,
    *,
    title: Optional[str] = None,
) -> str:
    """Write the release report (:func:`render_report`) to ``path`` as UTF-8 and return its
    text."""
    text = render_report(assessment, provenance=provenance, candidates=candidates, title=title)
    with open(os.fspath(path), "w", encoding="utf-8") as f:
        f.write(text)
    return text
