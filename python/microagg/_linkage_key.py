"""The tables that record linkage compares (docs/assessment.md#risk): the key of the original
and of the release, scaled by the original, a mixed key's nominal columns as level codes
shared by both files.

Numbers and ordinal ranks are centred and divided by the original's population standard
deviation; a nominal column becomes level codes into the levels of both files together, and
a mismatch on it costs 1, the squared distance of two levels in the one-hot embedding of
mixed keys (docs/algorithms.md#mixed-keys, weight 1). The Rust core then searches this
geometry from the codes (``src/assess/mixed_index.rs``), never from one-hot columns.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Tuple

import numpy as np

from ._assess_input import F64, as_pair, as_release, population_scale
from ._columns import MeasureRoles
from ._frames import as_frame
from ._mixed.types import NOMINAL, KeyColumn, frame_key, missing_cells, nominal_column, sorted_levels

MISMATCH_COST = 1.0
"""The cost of a nominal mismatch: w² for an attribute weight w = 1."""

LinkageTables = Tuple[F64, F64, list[float]]
"""(original, release, mismatch costs): the scaled numeric columns first, then one code
column (NaN where missing) per cost."""


def linkage_tables(X: Any, Xm: Any, **roles: Any) -> LinkageTables:
    """The tables of ``X`` and ``Xm``: arrays as they are (every column numeric), DataFrames
    by their key (``roles``: ``columns``, ``categorical``, ``ordinal``, ``by``, ``weights``,
    ``sensitive``, resolved as ``anonymize`` resolves them; categories are compared by
    level)."""
    original, released = as_frame(X, "X"), as_frame(Xm, "Xm")
    if original is None or released is None:
        named = [name for name in ("columns", "categorical", "ordinal") if roles.get(name) is not None]
        if named:
            raise TypeError(f"{named[0]}= names the key columns of DataFrames; X and Xm are not both DataFrames")
        return key_tables(*_numeric_key(*as_pair(X, Xm)))
    if len(original) != len(released):
        raise ValueError(f"X has {len(original)} rows and Xm {len(released)}; a release has the original's records")
    frame_roles: MeasureRoles = as_release(X, **roles, name="X").roles  # type: ignore[assignment]
    absent = [str(c) for c in frame_roles.key if c not in released.columns]
    if absent:
        raise ValueError(f"Xm lacks the column(s) {', '.join(absent)} of X")
    return frame_tables(original, released, frame_roles, roles.get("categorical"))


def frame_tables(original: Any, released: Any, roles: MeasureRoles, categorical: Any) -> LinkageTables:
    """The tables of two narwhals frames whose key ``roles`` resolved from the original
    (``categorical``: the columns declared nominal, as given)."""
    declared = _declared(categorical)
    return key_tables(
        frame_key(original, roles.key, declared, roles.ordinal),
        frame_key(released, roles.key, declared, roles.ordinal),
    )


def with_categories(x: F64, xm: F64, categorical: Mapping[Any, Tuple[Any, Any]]) -> LinkageTables:
    """The tables of numeric key arrays plus categorical columns given as (original values,
    released values), read as nominal (``assess``'s array form)."""
    original, released = _numeric_key(x, xm)
    for name, (a, b) in categorical.items():
        for side, values in ((original, a), (released, b)):
            arr = np.asarray(values.to_numpy() if hasattr(values, "to_numpy") else values, dtype=object)
            side.append(nominal_column(name, arr, missing_cells(arr)))
    return key_tables(original, released)


def key_tables(original: list[KeyColumn], released: list[KeyColumn]) -> LinkageTables:
    """The tables of two files' key columns (same names and kinds, in the same order)."""
    graded = [j for j, c in enumerate(original) if c.kind != NOMINAL]
    nominal = [j for j, c in enumerate(original) if c.kind == NOMINAL]
    x = np.column_stack([_graded(original[j]) for j in graded]) if graded else np.empty((len(original[0].values), 0))
    xm = np.column_stack([_graded(released[j]) for j in graded]) if graded else np.empty_like(x)
    if graded:
        mean, sd = population_scale(x)
        x, xm = (x - mean) / sd, (xm - mean) / sd
    codes = [_shared_codes(original[j], released[j]) for j in nominal]
    return (
        np.column_stack([x, *(a for a, _ in codes)]),
        np.column_stack([xm, *(b for _, b in codes)]),
        [MISMATCH_COST] * len(nominal),
    )


def _numeric_key(x: F64, xm: F64) -> Tuple[list[KeyColumn], list[KeyColumn]]:
    return (
        [KeyColumn(j, "numeric", x[:, j]) for j in range(x.shape[1])],
        [KeyColumn(j, "numeric", xm[:, j]) for j in range(xm.shape[1])],
    )


def _graded(c: KeyColumn) -> F64:
    """A numeric column, or an ordinal column's ranks, as float64 with NaN where missing."""
    return np.where(c.missing, np.nan, c.values.astype(np.float64))


def _shared_codes(a: KeyColumn, b: KeyColumn) -> Tuple[F64, F64]:
    """Both files' codes of one nominal column into the levels of both, NaN where missing."""
    both = np.empty(len(a.levels) + len(b.levels), dtype=object)
    both[:] = [*a.levels, *b.levels]
    index = {v: i for i, v in enumerate(sorted_levels(both).tolist())}

    def recode(c: KeyColumn) -> F64:
        into = np.asarray([index[v] for v in c.levels], dtype=np.float64)
        return np.where(c.missing, np.nan, into[np.maximum(c.values, 0)] if len(into) else np.nan)

    return recode(a), recode(b)


def _declared(categorical: Optional[Any]) -> Sequence[Any]:
    """The column names ``categorical=`` declares nominal."""
    if categorical is None:
        return []
    return [categorical] if isinstance(categorical, str) else list(categorical)
