"""Equivalence classes of a release whose cells may be missing: the k a release achieves.

A missing value (NaN, as ``missing="keep"`` leaves it) matches any value, sdcMicro's
convention for key variables (its frequency counts take a missing key as any category): record j
is in the class of record i when the two agree on every attribute observed in both (and on
the stratum, which is never missing). A complete release is the usual k-anonymity, every
distinct row counted. The relation is symmetric but not transitive, so "classes" overlap:
the class size of record i is the number of records compatible with i (i included).

Counting: the release's distinct rows (with multiplicities) are grouped by missingness
pattern. Two rows of patterns A and B are compatible exactly when their projections onto
the attributes observed in both are equal, so for every pair of patterns one hashing pass
over the projected rows of A and B (in the Rust core) gives each row its projection's id; summing a per-record quantity by id counts, for each row of A, the records of B it
matches (and the reverse), and the same sums give the class's histogram of a confidential
attribute (t-closeness, docs/workflow.md: one class rule for k and t). With m distinct rows and P patterns the pairs
hash (P - 1) · m rows in all: O(P · m · d) expected time on top of one O(n · d) pass over
the n records, and O(n · d) memory; a complete release (P = 1) costs that one
pass. A release has few patterns (a handful of attributes with gaps); m is about n / k for
a complete microaggregated file, more when a group's records miss different cells.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import numpy.typing as npt

from . import _core

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


Pair = tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], Optional[I64], Optional[I64]]
"""Two missingness patterns' distinct rows and, per row, the id of its projection onto the
attributes both observe (None, None: they observe none in common)."""


@dataclass(frozen=True)
class Classes:
    """The classes of a release under the rule above, prepared once so that any quantity
    summed per distinct released row (a count, a confidential attribute's histogram) can be
    summed over each row's class: ``inverse`` the distinct row (with the stratum) of each
    record, ``counts`` the records of each row, and per pair of missingness patterns the
    rows of each side and the id of their common projection (None: no attribute in common)."""

    inverse: I64
    counts: I64
    pairs: tuple[Pair, ...]

    def spread(self, own: F64) -> F64:
        """``own`` (one row per distinct released row, c columns) summed over each distinct
        row's class."""
        out = own.copy()
        for ra, rb, ia, ib in self.pairs:
            if ia is None or ib is None:  # nothing to disagree on: every pair matches
                out[ra] += own[rb].sum(axis=0)
                out[rb] += own[ra].sum(axis=0)
                continue
            n_ids = int(max(ia.max(), ib.max())) + 1
            out[ra] += _sum_by(ib, own[rb], n_ids)[ia]
            out[rb] += _sum_by(ia, own[ra], n_ids)[ib]
        return out


def _sum_by(ids: I64, values: F64, n_ids: int) -> F64:
    """(n_ids, c): the sum of the rows of ``values`` with each id."""
    c = values.shape[1]
    flat = (ids[:, None] * c + np.arange(c)).ravel()
    sums: F64 = np.bincount(flat, weights=values.ravel(), minlength=n_ids * c).astype(np.float64)
    return sums.reshape(n_ids, c)


def classes(xm: F64, strata: Optional[I64] = None) -> Classes:
    """The classes of the release ``xm`` (n, d; NaN = missing, matching any value), within
    ``strata`` (n integer codes) when given. -0.0 equals 0.0. Infinity is not expected
    (callers reject it)."""
    key = xm if strata is None else np.column_stack([strata.astype(np.float64), xm])
    rows, inverse, counts = _distinct_rows(key)
    patterns, pattern_of = _missingness_patterns(rows)
    members = [np.flatnonzero(pattern_of == p) for p in range(len(patterns))]
    pairs: list[Pair] = []
    for a in range(len(patterns)):
        for b in range(a + 1, len(patterns)):
            common = ~(patterns[a] | patterns[b])
            ra, rb = members[a], members[b]
            if not common.any():
                pairs.append((ra, rb, None, None))
                continue
            ids = _distinct_rows(np.concatenate([rows[ra][:, common], rows[rb][:, common]]))[1]
            pairs.append((ra, rb, ids[: len(ra)], ids[len(ra):]))
    return Classes(inverse, counts, tuple(pairs))


def class_sizes(xm: F64, strata: Optional[I64] = None) -> I64:
    """For every record of the release ``xm`` (n, d; NaN = missing, matching any value), the
    number of records that agree with it on every attribute observed in both, itself
    included; with ``strata`` (n integer codes) only records of the same stratum count.

    -0.0 equals 0.0. Infinity is not expected (callers reject it)."""
    c = classes(xm, strata)
    sizes: I64 = np.rint(c.spread(c.counts[:, None].astype(np.float64))[:, 0]).astype(np.int64)
    return sizes[c.inverse]


def _missingness_patterns(rows: F64) -> tuple[npt.NDArray[np.bool_], I64]:
    """The distinct missingness patterns of ``rows`` (True where the attribute is missing)
    and the pattern of each row. Each row's pattern is hashed as one exact integer code per
    52 attributes (a sum of distinct powers of two), not as d cells."""
    missing = np.isnan(rows)
    d = rows.shape[1]
    codes = np.add.reduceat(missing * 2.0 ** (np.arange(d) % 52), np.arange(0, d, 52), axis=1)
    first, pattern_of, _ = _core.distinct_rows(np.ascontiguousarray(codes))
    return missing[first], pattern_of


def _distinct_rows(a: F64) -> tuple[F64, I64, I64]:
    """The distinct rows of the float64 array ``a`` (numerically equal, -0.0 = 0.0, NaN =
    NaN), the index of each row of ``a`` among them, and how many rows of ``a`` each one has:
    one hashing pass in the Rust core (``RowIds``, src/assess/row_ids.rs)."""
    first, inverse, counts = _core.distinct_rows(np.ascontiguousarray(a, dtype=np.float64))
    return a[first], inverse, counts
