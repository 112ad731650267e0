"""Disclosure risk of a release (docs/assessment.md#risk): how easily an intruder who knows the
original values finds a record in the released data.

- :func:`interval_disclosure`: sdcMicro's ``dRisk``, the share of records whose original
  values lie within p·sd of their released values.
- :func:`record_linkage`: distance-based record linkage, to the nearest released records
  (exact, with ties, through an index in the Rust core) or as the one-to-one matching of
  minimum total distance (GDBRL, as sdcMicro's ``recordLinkage``).
- :func:`class_sizes`: for each record, the number of released records in its class (the
  records that agree with it on every attribute observed in both, within strata: a missing
  value matches any value).
- :func:`min_group_size`: the smallest class (the k of k-anonymity the release achieves).
- :func:`individual_risk`: sdcMicro's ``measure_risk``, each record's re-identification risk in
  the population from its class's sample frequency and the weights (Benedetti–Franconi), the
  global risk and the expected re-identifications.
- :func:`l_diversity`: the fewest distinct values of each sensitive attribute in a class.
- :func:`t_closeness`: the largest EMD of a class's confidential values from the file's (the t
  of t-closeness the release achieves).

``X`` is the original, ``Xm`` the release, both (n, d) with record i released as row i of
``Xm``. NaN (a missing value, as ``missing="keep"`` leaves it) is allowed in both; each
function says how it treats it.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from . import _core
from ._assess_input import F64, as_pair, as_release, sample_sd
from ._kanonymity import class_sizes as class_sizes_of
from ._linkage_key import LinkageTables, linkage_tables
from ._ldiversity import l_diversity
from ._population_risk import IndividualRisk, individual_risk
from ._risk_change import RiskChange
from ._tcloseness import t_closeness
from ._validation import check_int, check_n_jobs, check_str

__all__ = [
    "GLOBAL_MAX_RECORDS",
    "IndividualRisk",
    "RecordLinkageResult",
    "RiskChange",
    "class_sizes",
    "individual_risk",
    "interval_disclosure",
    "l_diversity",
    "min_group_size",
    "record_linkage",
    "t_closeness",
]

GLOBAL_MAX_RECORDS = 5000
"""Largest n of ``record_linkage(method="global")``: its dense n × n cost matrix takes
8·n² bytes (200 MB at 5000) and the assignment O(n³) time."""


def interval_disclosure(X: Any, Xm: Any, p: float = 0.05, *, max_outside: int = 0) -> float:
    """Share of records at risk by interval disclosure, exactly as sdcMicro's ``dRisk``
    (R/dRisk.R since sdcMicro 5.6.0).

    An interval of ``p`` released standard deviations is put around each released value:
    ``[xm_ij - p·sd_j, xm_ij + p·sd_j]`` with sd_j the sample sd (n − 1) of released column
    j. A record is at risk when every original value lies inside its interval (at most
    ``max_outside`` outside; ``max_outside=1`` is the rule of sdcMicro before 5.6.0, 2020,
    which counted a record with one value outside too). Comparisons with a missing value
    are ignored, as sdcMicro's ``na.rm = TRUE`` does.

    Parameters
    ----------
    X, Xm : array-like (n, d)
        Original and released data.
    p : float, default 0.05
        Interval half-width in released standard deviations (sdcMicro's ``k``), > 0.
    max_outside : int, default 0
        Values allowed outside their interval for a record still to count as at risk.
    """
    x, xm = as_pair(X, Xm)
    p = _positive(p, "p")
    max_outside = check_int(max_outside, "max_outside", minimum=0)
    sd = sample_sd(xm)
    lo, hi = xm - p * sd, xm + p * sd
    with np.errstate(invalid="ignore"):
        outside = ((x < lo) | (x > hi)).sum(axis=1)
    return float(np.count_nonzero(outside <= max_outside) / x.shape[0])


@dataclass(frozen=True)
class RecordLinkageResult:
    """Outcome of a record-linkage attack on a release.

    Attributes
    ----------
    method : str
        ``"nearest"`` or ``"global"``.
    expected_correct : float
        Expected number of records linked to their own release: Σ [own among the t tied
        nearest] / t for ``"nearest"``, the number of correct pairs for ``"global"``.
    n_records : int
        Records attacked.
    tie_counts : ndarray of int64, shape (n,) or None
        ``"nearest"``: released records at the minimum distance of each record.
    own_among_ties : ndarray of bool, shape (n,) or None
        ``"nearest"``: whether the record's own release is among them.
    matches : ndarray of int64, shape (n,) or None
        ``"global"``: the released record each original record is matched to.
    """

    method: str
    expected_correct: float
    n_records: int
    tie_counts: Optional[npt.NDArray[np.int64]] = None
    own_among_ties: Optional[npt.NDArray[np.bool_]] = None
    matches: Optional[npt.NDArray[np.int64]] = None

    @property
    def rate(self) -> float:
        """Expected share of records linked correctly, in [0, 1]."""
        return self.expected_correct / self.n_records

    def __repr__(self) -> str:
        return (
            f"RecordLinkageResult(method={self.method!r}, rate={self.rate:.4f}, "
            f"expected_correct={self.expected_correct:.2f}, n_records={self.n_records})"
        )


def record_linkage(
    X: Any,
    Xm: Any,
    method: str = "nearest",
    *,
    n_jobs: int = 1,
    columns: Any = None,
    categorical: Any = None,
    ordinal: Any = None,
    by: Any = None,
    weights: Any = None,
    sensitive: Any = None,
) -> RecordLinkageResult:
    """Distance-based record linkage of the original records to the release.

    Both files are centred and scaled by the original's column mean and population sd
    (ddof 0; a constant column keeps scale 1) and compared by Euclidean distance. On a
    mixed key (DataFrames with categorical or ordinal key columns, as ``anonymize`` returns
    them) ordinal ranks are scaled like numbers and a nominal column adds 1 to the squared
    distance where the two records' levels differ: the geometry of the key's one-hot
    embedding (docs/algorithms.md#mixed-keys), computed from level codes, so a
    5 000-level column costs one attribute, not 5 000.

    ``method="nearest"``: each original record is linked to its nearest released records.
    When t released records tie at exactly the same computed distance, the intruder picks
    one at random, so the link is correct with probability 1/t when the record's own
    release is among them; ``rate`` is the mean of that probability. The Rust core searches
    the release's distinct rows (one per group of a microaggregated file) exactly: a k-d
    tree up to 3 attributes, bounded blocks of 32 up to 8, above it f32 scores of every
    distinct row within a rigorous rounding bound and an exact re-check; a mixed key in a
    k-d tree whose boxes hold each nominal column's code range; in ``n_jobs`` threads with
    the same answer for every ``n_jobs``; memory O(n·d).

    ``method="global"`` (GDBRL, Herranz et al. 2015; sdcMicro's ``recordLinkage`` with
    ``distance="euclidean"``): the one-to-one matching of minimum total distance, solved by
    ``scipy.optimize.linear_sum_assignment`` (needs scipy); ``rate`` is the share of records
    matched to their own release. Among several optimal matchings scipy's is taken. At most
    :data:`GLOBAL_MAX_RECORDS` records.

    Missing values: distances are partial (docs/assessment.md#risk): the sum over the attributes
    observed in both records, times d / their number; records with no attribute in common are
    infinitely far apart (``"global"`` then refuses the pair's cost and raises).

    Parameters
    ----------
    X, Xm : array-like (n, d) or DataFrames
        The original and the release, record i released as row i. Arrays are the key, every
        column a number.
    method : {"nearest", "global"}
    n_jobs : int, default 1
        Threads of the nearest-record search (same answer for every value).
    columns, categorical, ordinal, by, weights, sensitive
        For DataFrames, their column roles as :func:`microagg.anonymize` takes them
        (docs/assessment.md#measures-of-a-frame), read from ``X``: the key ``columns``
        (default: the numeric columns without another role, and the ``categorical`` and
        ``ordinal`` ones), and ``by``, ``weights``, ``sensitive`` columns that are never keys
        (linkage ignores strata and weights: an intruder links records).
    """
    method = check_str(method, "method")
    n_jobs = check_n_jobs(n_jobs)
    tables = linkage_tables(X, Xm, columns=columns, categorical=categorical, ordinal=ordinal, by=by,
                            weights=weights, sensitive=sensitive)
    return link_tables(tables, method, n_jobs)


def link_tables(tables: LinkageTables, method: str, n_jobs: int = 1) -> RecordLinkageResult:
    """:func:`record_linkage` of the scaled tables (:mod:`microagg._linkage_key`)."""
    z, zm, costs = tables
    if method == "nearest":
        ties, own = _core.link_nearest_arrays(z, zm, n_jobs=n_jobs, mismatch_costs=costs)
        counts = ties.astype(np.int64)
        return RecordLinkageResult(
            "nearest", float(np.sum(own / counts)), z.shape[0], tie_counts=counts, own_among_ties=own
        )
    if method == "global":
        return _global_linkage(z, zm, costs)
    raise ValueError(f"method must be 'nearest' or 'global', got {method!r}")


def _global_linkage(z: F64, zm: F64, costs: list[float]) -> RecordLinkageResult:
    n = z.shape[0]
    if n > GLOBAL_MAX_RECORDS:
        raise ValueError(
            f"record_linkage(method='global') takes at most {GLOBAL_MAX_RECORDS} records (a dense "
            f"n x n assignment), got {n}; use method='nearest' or a sample"
        )
    try:
        from scipy.optimize import linear_sum_assignment
        from scipy.spatial.distance import cdist
    except ImportError:
        raise ImportError(
            "record_linkage(method='global') needs scipy: pip install scipy (or 'microagg[scipy]')"
        ) from None
    complete = not (costs or np.isnan(z).any() or np.isnan(zm).any())
    cost = cdist(z, zm) if complete else np.sqrt(_partial_squared_distances(z, zm, costs))
    if not np.isfinite(cost).all():
        raise ValueError("some original and released records share no observed attribute; "
                         "record_linkage(method='global') cannot match them")
    rows, cols = linear_sum_assignment(cost)
    matches = np.empty(n, dtype=np.int64)
    matches[rows] = cols
    correct = int(np.count_nonzero(matches == np.arange(n)))
    return RecordLinkageResult("global", float(correct), n, matches=matches)


def _partial_squared_distances(a: F64, b: F64, costs: list[float]) -> F64:
    """(len(a), len(b)) squared distances, partial where values are missing
    (docs/assessment.md#risk): Σ over attributes observed in both, times d / their number; +inf when
    none. The last ``len(costs)`` columns hold nominal codes, a mismatch costing its entry."""
    d = a.shape[1]
    numeric = d - len(costs)
    acc = np.zeros((a.shape[0], b.shape[0]))
    seen = np.zeros_like(acc)
    for j in range(d):
        t = a[:, j, None] - b[None, :, j]
        ok = ~np.isnan(t)
        term = t * t if j < numeric else costs[j - numeric] * (t != 0)
        acc += np.where(ok, term, 0.0)
        seen += ok
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(seen > 0, acc * (d / np.maximum(seen, 1)), np.inf)


def class_sizes(
    Xm: Any,
    by: Any = None,
    *,
    columns: Any = None,
    categorical: Any = None,
    ordinal: Any = None,
    weights: Any = None,
    sensitive: Any = None,
) -> npt.NDArray[np.int64]:
    """For each record, the size of its class: the released records that agree with it on
    every attribute of the key observed in both (itself included), within strata when
    ``by`` is given.

    A missing value (NaN, as ``missing="keep"`` leaves it) matches any value, sdcMicro's
    convention (see :mod:`microagg._kanonymity`; O(P · n log n) for P patterns of missing
    cells). -0.0 equals 0.0. A complete release counts equal rows. Records in classes below
    k are the ones a k-anonymity check flags; their distribution is what a release report
    shows.

    Parameters
    ----------
    Xm : array-like (n, d) or DataFrame
        The release. An array is the key; ``by`` then holds one label per record (or an
        (n, m) array of labels combined per record).
    by, columns, categorical, ordinal, weights, sensitive
        For a DataFrame, its column roles as :func:`microagg.anonymize` takes them
        (docs/assessment.md#measures-of-a-frame): the key ``columns`` (default: the numeric
        columns without another role, and the ``categorical`` and ``ordinal`` ones, which
        compare by category), ``by`` strata column names (or labels), ``weights`` and
        ``sensitive`` columns that are never keys.
    """
    r = as_release(Xm, columns=columns, by=by, weights=weights, categorical=categorical, ordinal=ordinal,
                   sensitive=sensitive)
    return class_sizes_of(r.key, r.strata)


def min_group_size(
    Xm: Any,
    by: Any = None,
    *,
    columns: Any = None,
    categorical: Any = None,
    ordinal: Any = None,
    weights: Any = None,
    sensitive: Any = None,
) -> int:
    """Smallest class of the release (the k it achieves): the minimum of
    :func:`class_sizes`, with the same arguments and the same rule for missing values."""
    sizes = class_sizes(Xm, by, columns=columns, categorical=categorical, ordinal=ordinal, weights=weights,
                        sensitive=sensitive)
    return int(sizes.min())


def _positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    v = float(value)
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return v
