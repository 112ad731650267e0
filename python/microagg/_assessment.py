"""``microagg.assess``: every risk and utility measure of a release in one object (DESIGN §9)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from . import risk, utility
from ._assess_input import as_pair, as_weights, strata_codes
from ._validation import check_int


@dataclass(frozen=True)
class Assessment:
    """Disclosure risk and utility of a release ``Xm`` of ``X`` (see :func:`assess`).

    Attributes
    ----------
    n_records, n_attributes : int
    attributes : tuple of str
        Column names (from a DataFrame ``X``; ``x0, x1, ...`` otherwise).
    information_loss : float
        SSE/SST on the standardized data, weighted when weights are given.
    il1s, eigen : float
        sdcMicro's ``dUtility`` measures.
    interval_disclosure : float
        sdcMicro's ``dRisk`` at ``p``.
    p : float
        The interval width used.
    record_linkage : microagg.risk.RecordLinkageResult
        Nearest-record linkage (``.rate``, ``.expected_correct``).
    min_group_size : int
        The k the release achieves: its smallest class, within strata given ``by``; a
        missing value matches any value (:func:`microagg.risk.min_group_size`).
    changes : microagg.utility.AttributeChanges
        Per-attribute means, variances and correlations before and after.
    """

    n_records: int
    n_attributes: int
    attributes: tuple[str, ...]
    information_loss: float
    il1s: float
    eigen: float
    interval_disclosure: float
    p: float
    record_linkage: risk.RecordLinkageResult
    min_group_size: int
    changes: utility.AttributeChanges

    def to_dict(self) -> dict[str, Any]:
        """The scalar measures, then per-attribute lists (JSON-friendly Python values)."""
        c = self.changes
        return {
            "n_records": self.n_records,
            "n_attributes": self.n_attributes,
            "information_loss": self.information_loss,
            "il1s": self.il1s,
            "eigen": self.eigen,
            "interval_disclosure": self.interval_disclosure,
            "record_linkage_rate": self.record_linkage.rate,
            "record_linkage_expected_correct": self.record_linkage.expected_correct,
            "min_group_size": self.min_group_size,
            "attributes": list(self.attributes),
            "mean_change": c.mean_change.tolist(),
            "variance_ratio": c.variance_ratio.tolist(),
            "max_correlation_change": c.max_correlation_change.tolist(),
        }

    def to_frame(self) -> Any:
        """The per-attribute table as a pandas DataFrame (needs pandas), one row per attribute:
        means, variances, their change, and the largest correlation change."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Assessment.to_frame() needs pandas: pip install pandas") from None
        c = self.changes
        return pd.DataFrame(
            {
                "mean_original": c.mean_original,
                "mean_released": c.mean_released,
                "mean_change": c.mean_change,
                "variance_original": c.variance_original,
                "variance_released": c.variance_released,
                "variance_ratio": c.variance_ratio,
                "max_correlation_change": c.max_correlation_change,
            },
            index=pd.Index(self.attributes, name="attribute"),
        )

    def __repr__(self) -> str:
        c = self.changes
        worst = int(np.nanargmax(np.abs(1 - c.variance_ratio))) if np.isfinite(c.variance_ratio).any() else 0
        return (
            f"Assessment({self.n_records} records x {self.n_attributes} attributes)\n"
            f"  utility  information loss {100 * self.information_loss:.3f}%   IL1s {self.il1s:.4f}"
            f"   eigen {self.eigen:.4f}\n"
            f"  risk     interval disclosure (p={self.p:g}) {100 * self.interval_disclosure:.2f}%"
            f"   record linkage {100 * self.record_linkage.rate:.2f}%"
            f"   min group size {self.min_group_size}\n"
            f"  changes  largest variance change {self.attributes[worst]} "
            f"(ratio {c.variance_ratio[worst]:.4f}), largest |mean change| "
            f"{float(np.nanmax(np.abs(c.mean_change), initial=0.0)):.4g}, largest correlation change "
            f"{float(np.nanmax(c.max_correlation_change, initial=0.0)):.4f}"
        )


def assess(
    X: Any,
    Xm: Any,
    *,
    by: Any = None,
    weights: Any = None,
    p: float = 0.05,
    n_jobs: int = 1,
) -> Assessment:
    """Every risk and utility measure of the release ``Xm`` of ``X`` (DESIGN §9).

    Parameters
    ----------
    X, Xm : array-like (n, d)
        Original and released data, record i released as row i; NaN allowed in both (see
        each measure: :mod:`microagg.risk`, :mod:`microagg.utility`).
    by : labels, optional
        Strata (one label per record, or an (n, m) array): ``min_group_size`` counts classes
        within a stratum.
    weights : array-like (n,), optional
        Survey weights: the information loss and the per-attribute means, variances and
        correlations are weighted. The risks count records (an intruder links records,
        not population units) and IL1s/eigen follow sdcMicro, which has no weights.
    p : float, default 0.05
        Interval width of :func:`microagg.risk.interval_disclosure`.
    n_jobs : int, default 1
        Threads of the record-linkage search (same answer for every value).
    """
    x, xm = as_pair(X, Xm)
    n, d = x.shape
    w = as_weights(weights, n)
    strata = strata_codes(by, n)
    n_jobs = check_int(n_jobs, "n_jobs")
    return Assessment(
        n_records=n,
        n_attributes=d,
        attributes=_attribute_names(X, d),
        information_loss=utility.information_loss(x, xm, w),
        il1s=utility.il1s(x, xm),
        eigen=utility.eigen(x, xm),
        interval_disclosure=risk.interval_disclosure(x, xm, p),
        p=float(p),
        record_linkage=risk.record_linkage(x, xm, n_jobs=n_jobs),
        min_group_size=risk.min_group_size(xm, strata),
        changes=utility.attribute_changes(x, xm, w),
    )


def _attribute_names(X: Any, d: int) -> tuple[str, ...]:
    columns: Optional[Sequence[Any]] = getattr(X, "columns", None)
    if columns is not None and len(columns) == d:
        return tuple(str(c) for c in columns)
    return tuple(f"x{j}" for j in range(d))
