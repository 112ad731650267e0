"""Equivalence classes of a release whose cells may be missing: the k a release achieves.

A missing value (NaN, as ``missing="keep"`` leaves it) matches any value, sdcMicro's
convention for key variables (its frequency counts take a missing key as any category): record j
is in the class of record i when the two agree on every attribute observed in both (and on
the stratum, which is never missing). A complete release is the usual k-anonymity, every
distinct row counted. The relation is symmetric but not transitive, so "classes" overlap:
the class size of record i is the number of records compatible with i (i included).

Counting: the release's distinct rows (with multiplicities) are grouped by missingness
pattern. Two rows of patterns A and B are compatible exactly when their projections onto
the attributes observed in both are equal, so for every pair of patterns one sort of the
projected rows of A and B (by a hash of their bits, checked) counts, for each row of A, the
records of B it matches (and the reverse). With m distinct rows and P patterns the pairs
sort (P - 1) · m rows in all: O(P · m · (d + log m)) time on top of one O(n · (d + log n))
pass over the n records, and O(n · d) memory; a complete release (P = 1) costs that one
pass. A release has few patterns (a handful of attributes with gaps); m is about n / k for
a complete microaggregated file, more when a group's records miss different cells.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


def class_sizes(xm: F64, strata: Optional[I64] = None) -> I64:
    """For every record of the release ``xm`` (n, d; NaN = missing, matching any value), the
    number of records that agree with it on every attribute observed in both, itself
    included; with ``strata`` (n integer codes) only records of the same stratum count.

    -0.0 equals 0.0. Infinity is not expected (callers reject it)."""
    key = np.where(np.isnan(xm), np.nan, xm + 0.0)  # one NaN and one zero bit pattern
    if strata is not None:
        key = np.column_stack([strata.astype(np.float64), key])
    rows, inverse, counts = _distinct_rows(key)
    pattern_rows, pattern_of = _distinct_rows(np.isnan(rows).astype(np.float64))[:2]
    patterns = pattern_rows > 0  # True where the pattern's attribute is missing
    members = [np.flatnonzero(pattern_of == p) for p in range(len(patterns))]
    sizes = counts.astype(np.int64)  # a row's own pattern: only equal rows match
    for a in range(len(patterns)):
        for b in range(a + 1, len(patterns)):
            common = ~(patterns[a] | patterns[b])
            ra, rb = members[a], members[b]
            if not common.any():  # nothing to disagree on: every pair matches
                sizes[ra] += counts[rb].sum()
                sizes[rb] += counts[ra].sum()
                continue
            ids = _distinct_rows(np.concatenate([rows[ra][:, common], rows[rb][:, common]]))[1]
            ia, ib = ids[: len(ra)], ids[len(ra):]
            n_ids = int(ids.max()) + 1
            sizes[ra] += np.bincount(ib, weights=counts[rb], minlength=n_ids).astype(np.int64)[ia]
            sizes[rb] += np.bincount(ia, weights=counts[ra], minlength=n_ids).astype(np.int64)[ib]
    return sizes[inverse]


def _distinct_rows(a: F64) -> tuple[F64, I64, I64]:
    """The distinct rows of the float64 array ``a`` (compared bit for bit), the index of each
    row of ``a`` among them, and how many rows of ``a`` each one has.

    Rows are sorted by a 64-bit hash of their bits (a few times faster than sorting whole
    rows); equal hashes of unequal rows, checked for, fall back to sorting the rows."""
    bits = np.ascontiguousarray(a).view(np.uint64)
    h = np.zeros(bits.shape[0], dtype=np.uint64)
    for j in range(bits.shape[1]):
        h ^= bits[:, j]
        h *= _MULTIPLIER
        h ^= h >> np.uint64(29)
    _, first, inverse, counts = np.unique(h, return_index=True, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    if not np.array_equal(bits, bits[first[inverse]]):
        packed = bits.view(np.dtype((np.void, 8 * bits.shape[1]))).reshape(-1)
        _, first, inverse, counts = np.unique(packed, return_index=True, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
    return a[first], inverse.astype(np.int64), counts.astype(np.int64)


_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
"""An odd 64-bit constant (2^64 / golden ratio) for multiplicative hashing."""
