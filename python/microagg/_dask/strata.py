"""The strata of a Dask DataFrame (docs/workflow.md#strata, docs/scaling.md#the-dask-engine): found
partition by partition, checked against ``k``, and with ``small_strata="merge"`` merged as the local
pipeline merges them (``src/workflow/strata.rs``).

Each partition reports its strata with their sizes (and, for merging, the observed count and
sum of every chosen column); the planner adds them up here. The merge rule is the core's:
the smallest undersized stratum (lowest code on ties) joins the non-empty stratum whose
centroid is nearest (squared Euclidean distance in the file's standardized units, lowest
code on ties), the merged centroid being the size-weighted mean of the two, until no
stratum is undersized. Codes are the sorted order of the strata (each column sorted,
missing values last), as the local pipeline numbers them.

Centroids are computed from per-partition sums rather than record by record, so they can
differ from the local run's in the last bits: two candidate strata whose distances tie to
within rounding (about 1e-15 relative) may then be chosen differently. Any other merge is
the local run's.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

Float = npt.NDArray[np.float64]


def _sums_names(d: int) -> tuple[list[str], list[str]]:
    return [f"_n{j}" for j in range(d)], [f"_s{j}" for j in range(d)]


def partition_strata(frame: pd.DataFrame, by: Sequence[Any], x: Float, merge: bool) -> pd.DataFrame:
    """One partition's strata (the ``by`` columns) with their sizes ``_size`` and, when
    ``merge``, the observed count ``_n{j}`` and sum ``_s{j}`` of each column j of ``x``."""
    keys = frame[list(by)].reset_index(drop=True)
    if not merge:
        return keys.groupby(list(by), dropna=False, sort=False).size().rename("_size").reset_index()
    observed = ~np.isnan(x)
    counts, sums = _sums_names(x.shape[1])
    values = pd.DataFrame(np.hstack([observed.astype(np.float64), np.where(observed, x, 0.0)]), columns=counts + sums)
    table = pd.concat([keys, values.assign(_size=1)], axis=1)
    return table.groupby(list(by), dropna=False, sort=False)[["_size", *counts, *sums]].sum().reset_index()


def combine(by: Sequence[Any], k: int, parts: list[pd.DataFrame], merge: bool, mean: Float, scale: Float) -> tuple[pd.DataFrame, list[tuple[int, int, int]]]:
    """The strata of the whole frame, sorted as the local pipeline codes them, with columns
    ``by``, ``_size`` (records of the stratum after the merges: 0 for a merged one) and
    ``_root`` (the index of the stratum its records are grouped with, among the remaining
    strata in code order); and the merges ``(stratum, into, size)`` as rows of that table,
    in order.

    Raises ``ValueError`` naming every stratum with fewer than ``k`` records and its size
    when ``merge`` is false."""
    found = pd.concat(parts, ignore_index=True)
    summed = [c for c in found.columns if c not in by]
    strata = found.groupby(list(by), dropna=False, sort=False)[summed].sum().reset_index()
    try:
        strata = strata.sort_values(list(by), na_position="last", ignore_index=True)
    except TypeError:  # mixed types in a column: keep the order of first appearance
        pass
    sizes = strata["_size"].to_numpy(dtype=np.int64)
    merges: list[tuple[int, int, int]] = []
    into = np.arange(len(strata))
    if ((sizes > 0) & (sizes < k)).any():
        if not merge:
            small = strata[strata["_size"] < k]
            names = "; ".join(f"{dict(zip(by, row[: len(by)]))} has {row[len(by)]}" for row in small.itertuples(index=False))
            raise ValueError(
                f"by: strata with fewer than k={k} records: {names} (small_strata='merge' merges each into the nearest stratum)"
            )
        counts, sums = _sums_names(len(mean))
        n_obs = strata[counts].to_numpy(dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            centroids = np.where(n_obs > 0, (strata[sums].to_numpy(dtype=np.float64) / n_obs - mean) / scale, 0.0)
        sizes, merges, into = merge_small(sizes, centroids, k)
    remaining = np.flatnonzero(sizes > 0)
    root = np.full(len(strata), -1, dtype=np.int64)
    root[remaining] = np.arange(len(remaining))
    return strata[list(by)].assign(_size=sizes, _root=root[into]), merges


def merge_small(sizes: npt.NDArray[np.int64], centroids: Float, k: int) -> tuple[npt.NDArray[np.int64], list[tuple[int, int, int]], npt.NDArray[np.int64]]:
    """The core's merge of undersized strata (see the module docstring): the sizes after
    the merges, the merges ``(stratum, into, size)`` and the stratum each one ends in."""
    sizes, centroids = sizes.copy(), centroids.copy()
    into = np.arange(len(sizes))
    merges: list[tuple[int, int, int]] = []
    while True:
        small = np.flatnonzero((sizes > 0) & (sizes < k))
        if not len(small):
            return sizes, merges, into
        source = int(small[np.argmin(sizes[small])])  # the first minimum: lowest code on ties
        candidates = np.flatnonzero(sizes > 0)
        candidates = candidates[candidates != source]
        if not len(candidates):
            raise ValueError(f"k={k} is larger than the number of records ({int(sizes.sum())})")
        distance = np.zeros(len(candidates))
        for j in range(centroids.shape[1]):  # summed attribute by attribute, as the core does
            distance += (centroids[candidates, j] - centroids[source, j]) * (centroids[candidates, j] - centroids[source, j])
        target = int(candidates[np.argmin(distance)])
        m_source, m_target = float(sizes[source]), float(sizes[target])
        centroids[target] = (centroids[target] * m_target + centroids[source] * m_source) / (m_target + m_source)
        merges.append((source, target, int(sizes[source])))
        sizes[target] += sizes[source]
        sizes[source] = 0
        into[into == source] = target


def describe(by: Sequence[Any], strata: pd.DataFrame, merges: list[tuple[int, int, int]]) -> Optional[str]:
    """The merges in words (None when there are none)."""
    if not merges:
        return None

    def name(row: int) -> Any:
        values = tuple(strata.iloc[row][list(by)])
        return values[0] if len(values) == 1 else values

    return "; ".join(f"{name(s)!r} ({size} records) into {name(t)!r}" for s, t, size in merges)
