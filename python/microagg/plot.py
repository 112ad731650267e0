"""The R-U map (docs/assessment.md): disclosure risk against information loss, one labelled point
per method × k, so a data steward can pick the release on the map. Needs matplotlib
(``pip install "microagg[plot]"``)."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

__all__ = ["RISK_LABELS", "ru_map"]

RISK_LABELS: dict[str, str] = {
    "record_linkage_rate": "record-linkage rate (%)",
    "interval_disclosure": "interval disclosure (%)",
}
"""Axis titles of the risk measures (keys of ``Assessment.to_dict()``)."""


def ru_map(
    results: Any,
    *,
    risk: str = "record_linkage_rate",
    loss: str = "information_loss",
    ax: Any = None,
    path: Optional[str] = None,
    title: Optional[str] = None,
) -> Any:
    """Draw the R-U map: ``risk`` (y, in %) against ``loss`` (x, in %).

    Parameters
    ----------
    results : iterable of mappings, or a pandas DataFrame
        One entry per release with keys ``"method"``, ``"k"``, ``loss`` and ``risk``, e.g.
        ``{"method": "mdav", "k": 5, **ma.assess(X, Xm).to_dict()}``, or the table written
        by ``microagg assess``.
    risk, loss : str
        The keys plotted (risk: ``"record_linkage_rate"`` or ``"interval_disclosure"``).
    ax : matplotlib Axes, optional
        Where to draw; a new figure otherwise.
    path : str, optional
        Save the figure there (PNG, SVG, PDF: by extension).
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        One line and marker style per method, each point labelled with its k (releases
        of one method at the same point share one label, e.g. "4,5,6").
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError('ru_map needs matplotlib: pip install "microagg[plot]"') from None
    rows = _rows(results)
    for r in rows:
        for key in ("method", "k", risk, loss):
            if key not in r:
                raise ValueError(f"every result needs the key {key!r}; got keys {sorted(r)}")
    if ax is None:
        fig = Figure(figsize=(7.5, 5.5), layout="constrained")
        ax = fig.subplots()
    else:
        fig = ax.figure
    markers = "osD^vP*Xh<>p"
    methods = list(dict.fromkeys(str(r["method"]) for r in rows))
    for i, method in enumerate(methods):
        pts = sorted((int(r["k"]), 100 * float(r[loss]), 100 * float(r[risk])) for r in rows if str(r["method"]) == method)
        xs, ys = [p[1] for p in pts], [p[2] for p in pts]
        (line,) = ax.plot(xs, ys, marker=markers[i % len(markers)], markersize=6, linewidth=1.2, label=method)
        labels: dict[tuple[float, float], list[str]] = {}  # releases at one point share a label
        for k, x, y in pts:
            labels.setdefault((x, y), []).append(str(k))
        for (x, y), ks in labels.items():
            ax.annotate(",".join(ks), (x, y), xytext=(4, 4), textcoords="offset points", fontsize=8,
                        color=line.get_color())
    ax.set_xlabel(f"information loss ({'SSE/SST' if loss == 'information_loss' else loss}, %)")
    ax.set_ylabel(RISK_LABELS.get(risk, f"{risk} (%)"))
    ax.set_title(title or "R-U map: disclosure risk vs information loss (labels: k)")
    ax.grid(True, alpha=0.3)
    ax.legend(title="method")
    if path is not None:
        fig.savefig(path, dpi=150)
    return fig


def _rows(results: Any) -> list[Mapping[str, Any]]:
    if hasattr(results, "to_dict") and hasattr(results, "columns"):
        records: list[Mapping[str, Any]] = results.to_dict("records")
        return records
    if not isinstance(results, Iterable):
        raise TypeError(f"results must be an iterable of mappings or a DataFrame, got {type(results).__name__}")
    rows = list(results)
    if not rows:
        raise ValueError("results is empty: nothing to plot")
    if not all(isinstance(r, Mapping) for r in rows):
        raise TypeError("results must hold mappings (dicts) with keys method, k and the measures")
    return rows
