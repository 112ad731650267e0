"""Utility of a release (docs/assessment.md#utility): how much the released data ``Xm`` differs from
the original ``X``.

- :func:`il1s` and :func:`eigen`: sdcMicro's ``dUtility`` measures, computed as its
  current code (5.8.1) computes them.
- :func:`information_loss`: microagg's SSE/SST of the release, on the standardized data.
- :func:`attribute_changes`: per-attribute means, variances and correlations before and
  after.
- :func:`histograms`: per-attribute counts of the original and the release over shared bins.
- :func:`categorical_changes`: per categorical attribute, the share of cells changed and the
  total variation distance between the original and released frequencies.

NaN (a missing value, as ``missing="keep"`` leaves it) is allowed in both files; each
function says how it treats it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from ._mixed.types import missing_cells, nominal_column
from ._assess_input import F64, as_pair, as_weights, pairwise_moments, population_scale, sample_sd
from ._validation import check_bool, check_int

__all__ = [
    "AttributeChanges",
    "AttributeHistogram",
    "CategoricalChanges",
    "attribute_changes",
    "categorical_changes",
    "eigen",
    "histograms",
    "il1s",
    "information_loss",
]


def il1s(X: Any, Xm: Any, *, average: bool = False) -> float:
    """sdcMicro's IL1s (``dUtility(method = "IL1s")``, R/dUtility.R):
    ``Σ_ij |x_ij − xm_ij| / (√2 · sd_j)`` with sd_j the sample sd (n − 1) of original
    column j (Yancey, Winkler and Creecy 2002).

    ``average=True`` divides by the number of cells n·d, as sdcMicro's ``"IL1old"`` and its
    versions before 5.6.0 did. Missing cells are left out of the sum (and counted in n·d),
    as sdcMicro's ``sum(na.rm = TRUE)`` does; a constant original column contributes
    nothing where the release keeps it and +inf where it does not.
    """
    x, xm = as_pair(X, Xm)
    average = check_bool(average, "average")
    sd = sample_sd(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.abs(x - xm) / (np.sqrt(2.0) * sd)
    total = float(np.nansum(a))
    return total / x.size if average else total


def eigen(X: Any, Xm: Any) -> float:
    """sdcMicro's ``dUtility(method = "eigen")``: Σ_i |e1_i − e2_i| / e1_i, where e1 and e2
    are the eigenvalues (in decreasing order) of the covariance matrices of the column-wise
    z-scored (sample sd) original and release, i.e. of their correlation matrices.

    Missing values: means and sds over the observed values and covariances over the
    records observed in both columns (R's ``use = "pairwise.complete.obs"``). NaN when a
    column of ``X`` or ``Xm`` is constant (its correlations are undefined; sdcMicro stops
    with an error there).

    Collinear attributes (one column the sum of others, as in Census) give eigenvalues of
    the original that are zero up to rounding; sdcMicro divides by that noise, which makes
    its figure arbitrary. Here the terms whose e1_i is below d · ε · max(e1) (ε the float64
    machine epsilon) are left out; without collinearity this is sdcMicro's sum.
    """
    x, xm = as_pair(X, Xm)
    e1, e2 = _scaled_eigenvalues(x), _scaled_eigenvalues(xm)
    if e1 is None or e2 is None:
        return float("nan")
    real = e1 > x.shape[1] * np.finfo(np.float64).eps * e1.max()
    return float(np.sum(np.abs(e1[real] - e2[real]) / e1[real]))


def _scaled_eigenvalues(a: F64) -> Optional[F64]:
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (a - np.nanmean(a, axis=0)) / sample_sd(a)
    cov, _ = pairwise_moments(z)
    if not np.isfinite(cov).all():
        return None
    return np.asarray(np.linalg.eigvalsh(cov)[::-1], dtype=np.float64)


def information_loss(X: Any, Xm: Any, weights: Any = None) -> float:
    """SSE / SST of the release, in [0, 1]: Σ w_i ‖z_i − zm_i‖² / Σ w_i ‖z_i − z̄‖², with z
    the original and zm the release standardized by the original's column mean and
    population sd (ddof 0, as ``microaggregate(standardize=True)``; unweighted, so every
    weighting uses the same scale) and z̄ the (weighted) mean. For a release of group means
    this is ``microaggregate(...).information_loss``.

    Missing values: SSE sums the cells observed in both files, SST the cells observed in
    ``X`` around the mean of the observed values. 0 when SST is 0.
    """
    x, xm = as_pair(X, Xm)
    w = as_weights(weights, x.shape[0])
    w = np.ones(x.shape[0]) if w is None else w
    mean, sd = population_scale(x)
    z, zm = (x - mean) / sd, (xm - mean) / sd
    observed = ~np.isnan(z)
    wz = np.where(observed, w[:, None], 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = np.nansum(wz * z, axis=0) / wz.sum(axis=0)
    sse = float(np.nansum(w[:, None] * (z - zm) ** 2))
    sst = float(np.nansum(wz * (z - centre) ** 2))
    return sse / sst if sst > 0 else 0.0


@dataclass(frozen=True)
class AttributeChanges:
    """Per-attribute statistics of the original and the release (population moments, ddof 0,
    weighted when weights are given; correlations pairwise over records observed in both
    columns).

    Attributes
    ----------
    mean_original, mean_released : ndarray (d,)
    variance_original, variance_released : ndarray (d,)
    correlation_original, correlation_released : ndarray (d, d)
    """

    mean_original: F64
    mean_released: F64
    variance_original: F64
    variance_released: F64
    correlation_original: F64
    correlation_released: F64

    @property
    def mean_change(self) -> F64:
        """Released minus original mean, in the data's units (0 for a release of group means)."""
        return self.mean_released - self.mean_original

    @property
    def variance_ratio(self) -> F64:
        """Released over original variance (below 1: microaggregation shrinks variance)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.variance_released / self.variance_original

    @property
    def correlation_change(self) -> F64:
        """Released minus original correlation matrix."""
        return self.correlation_released - self.correlation_original

    @property
    def max_correlation_change(self) -> F64:
        """Per attribute, the largest absolute change of its correlation with another one
        (NaN where undefined; 0 with a single attribute)."""
        c = np.abs(self.correlation_change)
        np.fill_diagonal(c, 0.0)
        with np.errstate(invalid="ignore"):
            return np.asarray(np.max(c, axis=1), dtype=np.float64)


def attribute_changes(X: Any, Xm: Any, weights: Any = None) -> AttributeChanges:
    """Means, variances and correlations of every attribute before and after the release
    (see :class:`AttributeChanges`). Missing values are skipped per column, and per pair of
    columns for the correlations."""
    x, xm = as_pair(X, Xm)
    w = as_weights(weights, x.shape[0])
    stats = []
    for a in (x, xm):
        _, corr = pairwise_moments(a, w, ddof=0)
        ww = np.where(np.isnan(a), 0.0, 1.0 if w is None else w[:, None])
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.nansum(ww * a, axis=0) / ww.sum(axis=0)
            var = np.nansum(ww * (a - mean) ** 2, axis=0) / ww.sum(axis=0)
        stats.append((mean, var, corr))
    (m1, v1, c1), (m2, v2, c2) = stats
    return AttributeChanges(m1, m2, v1, v2, c1, c2)


@dataclass(frozen=True)
class AttributeHistogram:
    """Counts of one attribute's observed values in the original and the release over the
    same bins, ``edges[i] <= value < edges[i + 1]`` (the last bin closed).

    The edges are round numbers (multiples of a step of 1, 2, 2.5 or 5 times a power of
    ten) reaching past the data on both sides, so they show neither the smallest nor the
    largest value of either file: the histogram holds counts, no record's value.
    """

    edges: F64
    original: npt.NDArray[np.int64]
    released: npt.NDArray[np.int64]


def histograms(X: Any, Xm: Any, bins: int = 20) -> list[AttributeHistogram]:
    """One :class:`AttributeHistogram` per attribute, about ``bins`` bins wide (at most
    ``bins + 2`` once the edges are rounded outwards). Missing values are not counted; an
    attribute with no observed value gets one empty bin [0, 1]. Counts are of records,
    unweighted."""
    x, xm = as_pair(X, Xm)
    bins = check_int(bins, "bins", minimum=1)
    out = []
    for j in range(x.shape[1]):
        values = np.concatenate([x[:, j], xm[:, j]])
        edges = _round_edges(values[~np.isnan(values)], bins)
        counts = [np.histogram(a[~np.isnan(a)], bins=edges)[0].astype(np.int64) for a in (x[:, j], xm[:, j])]
        out.append(AttributeHistogram(edges, counts[0], counts[1]))
    return out


def _round_edges(values: F64, bins: int) -> F64:
    """Edges k·step for consecutive integers k covering ``values``, step the smallest round
    number (1, 2, 2.5, 5 × 10^e) giving at most ``bins`` bins over their range."""
    if values.size == 0:
        return np.array([0.0, 1.0])
    lo, hi = float(values.min()), float(values.max())
    span = hi - lo if hi > lo else max(abs(lo), 1.0)
    raw = span / bins
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * power >= raw * (1 - 1e-12))
    first, last = math.floor(lo / step), math.ceil(hi / step)
    if first * step >= lo:  # outwards on both sides, even where a value is a multiple of step
        first -= 1
    if last * step <= hi:
        last += 1
    return np.arange(first, last + 1, dtype=np.float64) * step


@dataclass(frozen=True)
class CategoricalChanges:
    """What a release did to one categorical attribute.

    Attributes
    ----------
    cells_changed : float
        Share of the cells observed in both files whose category changed (weighted).
    total_variation : float
        Total variation distance between the original and released (weighted) frequencies of
        the categories, over the cells observed in each file: half the sum of the absolute
        differences of the shares, in [0, 1].
    levels : tuple of str
        The categories seen in either file, sorted, as text.
    original_frequencies, released_frequencies : ndarray of float64
        The (weighted) number of observed cells of each level in the original and the
        release: the frequency table a disclosure review compares (sdcMicro's report and
        mu-Argus tabulate them too).
    original_records, released_records : ndarray of int64
        The number of records holding each level in each file, unweighted: what the release
        report's small-cell rule counts (an intruder sees records, not weights).
    """

    cells_changed: float
    total_variation: float
    levels: tuple[str, ...]
    original_frequencies: npt.NDArray[np.float64]
    released_frequencies: npt.NDArray[np.float64]
    original_records: npt.NDArray[np.int64]
    released_records: npt.NDArray[np.int64]


def categorical_changes(original: Any, released: Any, weights: Any = None) -> CategoricalChanges:
    """Cells changed, total variation distance and frequency table of one categorical attribute (two 1-D
    arrays of the same length, of any values; None, NaN and pandas.NA are missing and left
    out). A mixed key's utility: these per categorical column beside the numeric measures."""
    a, b = (_category_column(v, name) for v, name in ((original, "original"), (released, "released")))
    if a.shape != b.shape:
        raise ValueError(f"original and released must have the same length, got {a.shape[0]} and {b.shape[0]}")
    n = a.shape[0]
    w = as_weights(weights, n)
    w = np.ones(n) if w is None else w
    both_files = np.concatenate([a, b])
    column = nominal_column("categories", both_files, missing_cells(both_files))
    codes = column.values
    ca, cb = codes[:n], codes[n:]
    both = (ca >= 0) & (cb >= 0)
    mass = w[both].sum()
    cells = float(w[both & (ca != cb)].sum() / mass) if mass > 0 else 0.0
    width = len(column.levels)
    counts = [np.bincount(c[c >= 0], weights=w[c >= 0], minlength=width).astype(np.float64) for c in (ca, cb)]
    shares = [total / total.sum() if total.sum() > 0 else total for total in counts]
    records = [np.bincount(c[c >= 0], minlength=width).astype(np.int64) for c in (ca, cb)]
    return CategoricalChanges(
        cells, float(0.5 * np.abs(shares[0] - shares[1]).sum()), tuple(str(v) for v in column.levels),
        counts[0], counts[1], records[0], records[1],
    )


def _category_column(values: Any, name: str) -> npt.NDArray[Any]:
    arr = np.asarray(values.to_numpy() if hasattr(values, "to_numpy") else values, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one categorical attribute), got shape {arr.shape}")
    return arr
