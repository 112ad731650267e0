"""What a group releases for its categorical attributes, for all groups at once.

* :func:`weighted_mode`: the level with the largest total weight among the group's
  observed members, ties to the smallest code (the level that sorts first).
* :func:`weighted_median`: the lower weighted median level: the smallest code whose
  cumulative weight reaches half the group's observed weight.
* :func:`medoid_rows`: the member nearest the group's centroid in the embedding (ties:
  lowest row), so that all its categories can be released together.

A group whose observed members all have weight 0 counts them with weight 1 (as the numeric
aggregation does). Every function takes the group of each record (``0..n_groups-1``) and
works with sorts and ``np.bincount``, without a loop over groups.
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


def _effective_weights(groups: I64, n_groups: int, weights: Optional[F64], observed: npt.NDArray[np.bool_]) -> F64:
    """Each record's weight, or 1 in a group whose observed weights sum to 0."""
    if weights is None:
        return np.ones(groups.shape[0])
    total = np.bincount(groups[observed], weights=weights[observed], minlength=n_groups)
    return np.where(total[groups] > 0, weights, 1.0)


def level_totals(codes: I64, groups: I64, n_groups: int, weights: Optional[F64]) -> Tuple[I64, I64, F64]:
    """(group, level, total weight) of every level observed in a group, sorted by group then
    level. ``codes`` are -1 where the cell is missing."""
    observed = codes >= 0
    w = _effective_weights(groups, n_groups, weights, observed)
    width = int(codes.max()) + 1 if observed.any() else 1
    pairs, inverse = np.unique((groups[observed] * width + codes[observed]).astype(np.int64), return_inverse=True)
    totals = np.bincount(inverse.reshape(-1), weights=w[observed], minlength=pairs.shape[0]).astype(np.float64)
    return pairs // width, pairs % width, totals


def _per_group(n_groups: int, group: I64, level: I64, first: npt.NDArray[np.bool_]) -> I64:
    """Per group the level at the ``first`` marked pair; -1 for groups without one."""
    out = np.full(n_groups, -1, dtype=np.int64)
    out[group[first]] = level[first]
    return out


def weighted_mode(codes: I64, groups: I64, n_groups: int, weights: Optional[F64] = None) -> I64:
    """Per group the level with the largest total weight (ties: smallest code); -1 where no
    member observed the attribute."""
    group, level, total = level_totals(codes, groups, n_groups, weights)
    order = np.lexsort((level, -total, group))
    group, level = group[order], level[order]
    return _per_group(n_groups, group, level, _starts(group))


def weighted_median(codes: I64, groups: I64, n_groups: int, weights: Optional[F64] = None) -> I64:
    """Per group the lower weighted median level (the smallest code whose cumulative weight
    is at least half the group's total); -1 where no member observed the attribute."""
    group, level, total = level_totals(codes, groups, n_groups, weights)
    starts = _starts(group)
    running = np.cumsum(total)
    before = np.maximum.accumulate(np.where(starts, running - total, 0.0))
    cumulative = running - before
    group_total = np.bincount(group, weights=total, minlength=n_groups)
    reached = 2.0 * cumulative >= group_total[group]
    first = reached & ~np.concatenate([[False], reached[:-1] & (group[1:] == group[:-1])])
    return _per_group(n_groups, group, level, first)


def medoid_rows(
    z: F64, groups: I64, n_groups: int, weights: Optional[F64], candidates: npt.NDArray[np.bool_]
) -> I64:
    """Per group the row of the member nearest the group's (weighted) centroid in the
    embedding ``z`` (NaN where missing: a missing cell adds nothing to the distance), chosen
    among the ``candidates`` when the group has one; ties go to the lowest row."""
    observed = ~np.isnan(z)
    w = _effective_weights(groups, n_groups, weights, np.ones(groups.shape[0], dtype=bool))
    order = np.argsort(groups, kind="stable")
    starts = np.flatnonzero(_starts(groups[order]))
    wz = np.where(observed, z * w[:, None], 0.0)[order]
    ww = (observed * w[:, None])[order]
    sums, mass = np.add.reduceat(wz, starts, axis=0), np.add.reduceat(ww, starts, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        centroid = sums / mass
    centroid_of = np.empty((n_groups, z.shape[1]))
    centroid_of[groups[order][starts]] = centroid
    distance = np.nansum((z - centroid_of[groups]) ** 2, axis=1)
    rows = np.arange(z.shape[0])
    pick = np.lexsort((rows, distance, ~candidates, groups))
    chosen = np.full(n_groups, -1, dtype=np.int64)
    first = _starts(groups[pick])
    chosen[groups[pick][first]] = rows[pick][first]
    return chosen


def _starts(sorted_groups: I64) -> npt.NDArray[np.bool_]:
    """Where a new group begins in an array sorted by group."""
    out = np.ones(sorted_groups.shape[0], dtype=bool)
    out[1:] = sorted_groups[1:] != sorted_groups[:-1]
    return out
