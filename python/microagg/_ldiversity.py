"""Distinct l-diversity of sensitive attributes (docs/assessment.md#population-risk): the fewest
distinct values of an attribute in a class, classes by the one class rule of
:mod:`microagg._kanonymity` (the whole key within a stratum, a missing cell matching any value).

A class whose records all share one sensitive value discloses it whatever k is; l = 1 names
that. Counted per distinct released row: its class's histogram of the attribute
(:meth:`microagg._kanonymity.Classes.spread`), in chunks of values, then its non-zero bins.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ._assess_input import as_release
from ._frames import as_frame, column
from ._kanonymity import Classes, classes
from ._tcloseness import _encode, _kinds, _sensitive_columns


def l_diversity(
    data: Any,
    sensitive: Any,
    *,
    columns: Any = None,
    by: Any = None,
    categorical: Any = None,
    ordinal: Any = None,
) -> dict[str, int]:
    """The distinct l-diversity of each sensitive attribute: the fewest distinct values it
    takes in a record's class, over all records.

    Parameters
    ----------
    data : array-like (n, d) or DataFrame
        The file: an array is the key, ``by`` then one label per record; a DataFrame has the
        column roles of :func:`microagg.anonymize` (``columns`` the key, ``categorical``,
        ``ordinal``, ``by`` strata columns).
    sensitive : column name(s), array-like (n,) or (n, s), or mapping name -> values
        The sensitive attributes (names of ``data``'s columns for a DataFrame; they are never
        keys). Missing sensitive values are refused.

    Returns
    -------
    dict
        Attribute name -> l (an int, at least 1).
    """
    frame = as_frame(data, "data")
    names_given = frame is not None and isinstance(sensitive, (str, list, tuple))
    r = as_release(data, columns=columns, by=by, categorical=categorical, ordinal=ordinal,
                   sensitive=sensitive if names_given else None, name="data")
    n = r.key.shape[0]
    if r.roles is not None and names_given:
        sensitive = {str(c): column(r.frame.to_native(), c) for c in r.roles.sensitive}
    names, cols = _sensitive_columns(sensitive, n)
    kind_of = _kinds(None, names, cols)
    cls = classes(r.key, r.strata)
    return {name: int(distinct_per_row(*_encode(c, name, kind_of[name]), cls).min()) for name, c in zip(names, cols)}


def distinct_per_row(codes: npt.NDArray[np.int64], m: int, cls: Classes) -> npt.NDArray[np.int64]:
    """For every distinct released row of ``cls``, the number of distinct codes (0..m) in
    its class; the histogram dense in chunks of codes to bound memory."""
    rows = len(cls.counts)
    out = np.zeros(rows, dtype=np.int64)
    chunk = max(1, 2_000_000 // rows)
    for lo in range(0, m, chunk):
        hi = min(m, lo + chunk)
        inside = (codes >= lo) & (codes < hi)
        own = np.bincount(cls.inverse[inside] * (hi - lo) + codes[inside] - lo, minlength=rows * (hi - lo))
        out += np.count_nonzero(cls.spread(own.reshape(rows, hi - lo).astype(np.float64)) > 0.5, axis=1)
    return out
