"""Coercion of the disclosure-control workflow arguments (docs/workflow.md): strata labels to
integer codes, weights to float64, and the ``trim`` fraction. The Rust core checks the values
(sizes of strata, non-negative finite weights, aggregation names) and names the argument.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from ._validation import check_int, check_str

if TYPE_CHECKING:
    from ._core import _WorkflowOptions


class StratumMerge(NamedTuple):
    """One merge done by ``small_strata="merge"``: the undersized ``stratum`` (with any
    stratum merged into it before) joined ``into``, the stratum with the nearest centroid.
    Strata are named by their original values (a tuple when ``by`` has several columns)."""

    stratum: Any
    into: Any
    size: int


def _is_missing(value: Any) -> bool:
    """None, NaN, NaT or pandas.NA."""
    if value is None or type(value).__name__ == "NAType":
        return True
    try:
        return (value != value) is True  # NaN and NaT compare unequal to themselves
    except (TypeError, ValueError):
        return False


def _python_value(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _factorize_column(values: Any) -> Tuple[npt.NDArray[np.int64], list[Any]]:
    """Codes (sorted order of the values where they sort, missing values last, all of them
    one stratum) and the value of each code, for one 1-D column of labels."""
    arr = values.to_numpy() if hasattr(values, "to_numpy") else np.asarray(values)
    if arr.dtype.kind in "biufUS":
        missing = np.isnan(arr) if arr.dtype.kind == "f" else np.zeros(arr.shape, dtype=bool)
        uniques, inverse = np.unique(arr[~missing], return_inverse=True)
        codes = np.full(arr.shape[0], len(uniques), dtype=np.int64)
        codes[~missing] = inverse.reshape(-1)
        found = [_python_value(u) for u in uniques] + ([float("nan")] if missing.any() else [])
        return codes, found
    # Objects (mixed types, None, pandas.NA): codes by first appearance, then sorted if the
    # values compare with each other.
    index: dict[Any, int] = {}
    found = []
    missing_code: Optional[int] = None
    codes = np.empty(arr.shape[0], dtype=np.int64)
    for i, v in enumerate(arr):
        v = _python_value(v)
        if _is_missing(v):
            if missing_code is None:
                missing_code = len(found)
                found.append(v)
            codes[i] = missing_code
            continue
        try:
            c = index.setdefault(v, len(found))
        except TypeError:
            raise TypeError(f"by: stratum labels must be hashable, got {type(v).__name__}") from None
        if c == len(found):
            found.append(v)
        codes[i] = c
    present = [c for c in range(len(found)) if c != missing_code]
    try:
        present.sort(key=lambda c: found[c])
    except TypeError:
        pass  # labels of mixed types keep their order of first appearance
    order = present + ([missing_code] if missing_code is not None else [])
    recode = np.empty(len(found), dtype=np.int64)
    recode[order] = np.arange(len(order))
    return recode[codes], [found[c] for c in order]


def factorize_strata(by: Any, n_records: int, *, name: str = "by") -> Tuple[npt.NDArray[np.int64], list[Any]]:
    """Stratum codes ``0..s-1`` of ``by`` and the original value of each code.

    ``by``: n labels (numbers, strings, a pandas Series; NaN/None form one stratum), or
    several columns (a 2-D array, a DataFrame), whose rows are then the strata (values are
    tuples).
    """
    if isinstance(by, (str, bytes)):
        raise TypeError(
            f"{name} must be an array of one stratum label per record; column names are "
            "accepted by microagg.anonymize"
        )
    if hasattr(by, "columns") and hasattr(by, "iloc"):  # pandas DataFrame
        columns = [by.iloc[:, j] for j in range(by.shape[1])]
    else:
        arr = by.to_numpy() if hasattr(by, "to_numpy") else np.asarray(by, dtype=None)
        if arr.ndim == 1:
            columns = [by if hasattr(by, "to_numpy") else arr]
        elif arr.ndim == 2:
            columns = [arr[:, j] for j in range(arr.shape[1])]
        else:
            raise ValueError(f"{name} must be 1-D (one label per record) or 2-D, got shape {arr.shape}")
    lengths = {len(c) for c in columns}
    if not columns or lengths != {n_records}:
        got = sorted(lengths) if columns else [0]
        raise ValueError(f"{name} must have one label per record ({n_records}), got {got[0]}")
    factors = [_factorize_column(c) for c in columns]
    if len(factors) == 1:
        return factors[0]
    stacked = np.column_stack([codes for codes, _ in factors])
    rows, inverse = np.unique(stacked, axis=0, return_inverse=True)
    values = [tuple(f[1][c] for f, c in zip(factors, row)) for row in rows.tolist()]
    return inverse.reshape(-1).astype(np.int64), values


def relabel_strata(by: Any, merges: Sequence[StratumMerge]) -> npt.NDArray[Any]:
    """The strata labels ``by`` with every record of a merged stratum given the label of the
    stratum it ended in, so that a release does not single out the records of a small stratum
    by their own label.

    ``by`` is what was passed to :func:`microagg.microaggregate` (n labels, or an (n, m)
    array / DataFrame of m label columns) and ``merges`` its result's ``merges``; a stratum
    merged into one that was merged in turn takes the last one's label. Returns an array of
    the shape of ``np.asarray(by)`` (n, or (n, m): column j holds the new values of label
    column j), of ``by``'s dtype where the labels fit it, object otherwise; records of other
    strata keep their labels. A merge naming a stratum absent from ``by`` is a
    ``ValueError``.

    >>> import microagg as ma
    >>> ma.relabel_strata(["a", "a", "b"], [ma.StratumMerge("b", "a", 1)]).tolist()
    ['a', 'a', 'a']
    """
    labels = by.to_numpy() if hasattr(by, "to_numpy") else np.asarray(by)
    codes, values = factorize_strata(by, labels.shape[0])
    code_of = {_label_key(v): c for c, v in enumerate(values)}
    final = np.arange(len(values))
    for m in merges:
        source, target = (code_of.get(_label_key(v)) for v in (m.stratum, m.into))
        if source is None or target is None:
            raise ValueError(f"merges: stratum {m.stratum!r} or {m.into!r} is not a label of by")
        final[final == source] = target
    moved = np.flatnonzero(final[codes] != codes)
    out = labels.copy()
    if not len(moved):
        return out
    new = [values[c] for c in final[codes[moved]]]
    try:
        _assign(out, moved, new)
    except (TypeError, ValueError):  # a label that does not fit the dtype
        out = labels.astype(object)
        _assign(out, moved, new)
    return out


def _assign(out: npt.NDArray[Any], rows: npt.NDArray[np.int64], new: list[Any]) -> None:
    """``out[rows] = new``, one label (a tuple for 2-D ``out``) per row."""
    if out.ndim == 1:
        out[rows] = np.array(new, dtype=object)
    else:
        for j in range(out.shape[1]):
            out[rows, j] = np.array([v[j] for v in new], dtype=object)


def _label_key(value: Any) -> Any:
    """A stratum label for lookups: missing values (None, NaN, NA) all one key, inside
    tuples too."""
    if isinstance(value, tuple):
        return tuple(_label_key(v) for v in value)
    return None if _is_missing(value) else value


def as_weights(weights: Any, n_records: int, *, check_values: bool = False) -> npt.NDArray[np.float64]:
    """A contiguous float64 array of ``n_records`` weights: the one check of weights for the
    release and the assessment. The core checks the values of a release's weights and names
    the record; ``check_values`` checks them here (finite, non-negative, a positive sum) for
    the measures, which run in Python."""
    arr = weights.to_numpy() if hasattr(weights, "to_numpy") else np.asarray(weights)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"weights must be real numbers, got an array of dtype {arr.dtype}")
    if arr.ndim != 1 or arr.shape[0] != n_records:
        raise ValueError(
            f"weights must be 1-D with one weight per record ({n_records}), got shape {arr.shape}"
        )
    out = np.ascontiguousarray(arr, dtype=np.float64)
    if check_values and (not np.isfinite(out).all() or (out < 0).any() or out.sum() <= 0):
        raise ValueError("weights must be finite, non-negative and not all zero")
    return out


def as_trim(trim: Any) -> Optional[float]:
    """``None`` or a real number."""
    if trim is None:
        return None
    if isinstance(trim, (bool, np.bool_)) or not isinstance(trim, numbers.Real):
        raise TypeError(f"trim must be a number in [0, 0.5], got {type(trim).__name__} {trim!r}")
    return float(trim)


def workflow_options(
    by: Any,
    n_records: int,
    *,
    small_strata: Any,
    weights: Any,
    aggregation: Any,
    trim: Any,
    max_part: Any,
    scale: Optional[npt.NDArray[np.float64]],
) -> Tuple["_WorkflowOptions", list[Any]]:
    """The workflow as the extension takes it (one dict, every key present; the core checks
    the values) and the original value of each stratum code."""
    codes, strata = factorize_strata(by, n_records) if by is not None else (None, [])
    options: _WorkflowOptions = {
        "by": codes,
        "by_names": [repr(v) for v in strata] if codes is not None else None,
        "small_strata": check_str(small_strata, "small_strata"),
        "weights": as_weights(weights, n_records) if weights is not None else None,
        "aggregation": check_str(aggregation, "aggregation"),
        "trim": as_trim(trim),
        "max_part": None if max_part is None else check_int(max_part, "max_part", minimum=1),
        "scale": scale,
    }
    return options, strata
