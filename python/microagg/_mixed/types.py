"""The kind of every key column (numeric, nominal, ordinal) and its values as numbers.

A column is **numeric** when its dtype is numeric (not boolean) and it is not named in
``categorical=`` or ``ordinal=``. It is **ordinal** when named in ``ordinal=`` (with its level
order) or when its dtype carries an order: an ordered pandas ``Categorical`` or a polars
``Enum`` (both are narwhals ``Enum``). Every other column is **nominal**: strings, objects,
booleans, unordered pandas ``Categorical``, polars ``Categorical``, Arrow dictionaries, and
integer codes named in ``categorical=``.

A categorical column becomes integer codes (``-1`` for a missing cell) into its levels:
the declared order for an ordinal column (so code = rank), the observed values in sorted
order for a nominal one (so the smallest code is the level that sorts first).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from .._workflow import _is_missing

NUMERIC, NOMINAL, ORDINAL = "numeric", "nominal", "ordinal"


@dataclass(frozen=True)
class KeyColumn:
    """One quasi-identifier as the mixed workflow sees it.

    ``values`` are float64 with NaN for a missing cell (numeric columns) or int64 codes into
    ``levels`` with -1 for a missing cell (nominal and ordinal columns; ``levels`` is empty
    for numeric ones).
    """

    name: Any
    kind: str
    values: npt.NDArray[Any]
    levels: tuple[Any, ...] = ()

    @property
    def missing(self) -> npt.NDArray[np.bool_]:
        """Which cells are missing."""
        return np.asarray(np.isnan(self.values) if self.kind == NUMERIC else self.values < 0, dtype=bool)


def sorted_levels(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The distinct values, sorted (by type name then text when the types do not compare)."""
    try:
        return np.asarray(np.unique(values))
    except TypeError:
        distinct = list({v: None for v in values.tolist()})
        distinct.sort(key=lambda v: (type(v).__name__, str(v)))
        out = np.empty(len(distinct), dtype=object)
        out[:] = distinct
        return out


@contextlib.contextmanager
def _as_categories(name: Any) -> Iterator[None]:
    """Names column ``name`` in the ``TypeError`` of a value that cannot be a category
    (lists, dicts, arrays: unhashable)."""
    try:
        yield
    except TypeError as exc:
        if "unhashable" not in str(exc):
            raise
        raise TypeError(
            f"column {name!r} holds values that cannot be categories ({exc}); a key column holds one "
            "number or category per record"
        ) from None


def nominal_column(name: Any, values: npt.NDArray[Any], missing: npt.NDArray[np.bool_]) -> KeyColumn:
    """A nominal column from its values and missing mask: codes into its sorted observed levels
    (``TypeError`` naming the column for values that cannot be categories)."""
    with _as_categories(name):
        return _nominal_column(name, values, missing)


def _nominal_column(name: Any, values: npt.NDArray[Any], missing: npt.NDArray[np.bool_]) -> KeyColumn:
    observed = values[~missing]
    levels = sorted_levels(observed)
    codes = np.full(values.shape[0], -1, dtype=np.int64)
    if levels.dtype == object:
        index = {v: i for i, v in enumerate(levels.tolist())}
        codes[~missing] = [index[v] for v in observed.tolist()]
    else:
        codes[~missing] = np.searchsorted(levels, observed)
    return KeyColumn(name, NOMINAL, codes, tuple(levels.tolist()))


def ordinal_column(
    name: Any, values: npt.NDArray[Any], missing: npt.NDArray[np.bool_], levels: Sequence[Any]
) -> KeyColumn:
    """An ordinal column: codes are ranks in the declared ``levels``. A value outside them is a
    ``ValueError`` naming the column. A level given as text matches a number written so
    (levels read from a command line against an integer-coded column)."""
    levels = check_levels(name, levels)
    with _as_categories(name):
        return _ordinal_column(name, values, missing, levels)


def _ordinal_column(
    name: Any, values: npt.NDArray[Any], missing: npt.NDArray[np.bool_], levels: tuple[Any, ...]
) -> KeyColumn:
    rank = {v: i for i, v in enumerate(levels)}
    by_text = {str(v): i for i, v in enumerate(levels)}
    codes = np.full(values.shape[0], -1, dtype=np.int64)
    distinct = sorted_levels(values[~missing])
    ranks = []
    for v in distinct.tolist():
        r = rank.get(v, by_text.get(str(v)))
        if r is None:
            raise ValueError(
                f"ordinal: column {name!r} has the value {v!r}, which is not one of its levels "
                f"{list(levels)!r}"
            )
        ranks.append(r)
    if distinct.size:
        lookup = np.asarray(ranks, dtype=np.int64)
        observed = values[~missing]
        if distinct.dtype == object:
            position = {v: i for i, v in enumerate(distinct.tolist())}
            codes[~missing] = lookup[[position[v] for v in observed.tolist()]]
        else:
            codes[~missing] = lookup[np.searchsorted(distinct, observed)]
    return KeyColumn(name, ORDINAL, codes, levels)


def check_not_identifier(name: Any, counts: npt.NDArray[Any], n: int) -> None:
    """Refuses a nominal key column that is an identifier: one where more than half of the
    ``n`` records hold a level no other record holds (``counts``: each level's number of
    records). Its group's mode would be one member's own value (ties go to the level that
    sorts first), so the release would publish real identifiers (docs/workflow.md#mixed-keys-categories-with-the-numbers)."""
    unique = int(np.count_nonzero(np.asarray(counts) == 1))
    if 2 * unique > n:
        raise ValueError(
            f"column {name!r} looks like an identifier: {unique} of {n} records hold a level no other "
            "record holds, and a group's most frequent level would release a member's own value; "
            "remove it from the key (identifiers are dropped or replaced, not microaggregated)"
        )


def check_no_identifiers(key: Sequence[KeyColumn]) -> None:
    """:func:`check_not_identifier` for every nominal column of a key."""
    for c in key:
        if c.kind == NOMINAL:
            codes = c.values[c.values >= 0]
            check_not_identifier(c.name, np.bincount(codes, minlength=len(c.levels)), c.values.shape[0])


def not_categorical(name: Any, dtype: Any) -> TypeError:
    """The error for a key column that is neither numeric nor categorical (dates, times)."""
    return TypeError(
        f"column {name!r} has dtype {dtype}, neither numeric nor categorical; name it in "
        "categorical= to treat its values as categories"
    )


def check_levels(name: Any, levels: Any) -> tuple[Any, ...]:
    """The level order of an ordinal column: a non-empty sequence of distinct values."""
    if isinstance(levels, (str, bytes)) or not isinstance(levels, Sequence) and not hasattr(levels, "tolist"):
        raise TypeError(f"ordinal: the levels of {name!r} must be a list in increasing order, got {levels!r}")
    out = tuple(levels.tolist() if hasattr(levels, "tolist") else levels)
    if not out:
        raise ValueError(f"ordinal: column {name!r} has no levels")
    if len(set(out)) != len(out):
        raise ValueError(f"ordinal: the levels of {name!r} repeat: {list(out)!r}")
    return out


def column_kind(name: Any, dtype: Any, categorical: Sequence[Any], ordinal: Mapping[Any, Any]) -> str:
    """The kind of key column ``name`` of narwhals dtype ``dtype`` (see the module doc), for
    in-memory frames and Dask frames alike. ``TypeError`` for a column that is neither
    numeric nor categorical (dates, times) unless ``categorical`` names it."""
    import narwhals.stable.v2 as nw

    if name in ordinal or (isinstance(dtype, nw.Enum) and name not in categorical):
        return ORDINAL
    if dtype.is_numeric() and name not in categorical:
        return NUMERIC
    if name in categorical or dtype in (nw.String, nw.Categorical, nw.Boolean, nw.Object):
        return NOMINAL
    raise not_categorical(name, dtype)


def frame_key(
    frame: Any,
    columns: Sequence[Any],
    categorical: Sequence[Any],
    ordinal: Mapping[Any, Sequence[Any]],
) -> list[KeyColumn]:
    """The key columns of a narwhals frame with their kinds (:func:`column_kind`)."""
    import narwhals.stable.v2 as nw

    out = []
    for c in columns:
        series = frame.get_column(c)
        dtype = series.dtype
        kind = column_kind(c, dtype, categorical, ordinal)
        if kind == NUMERIC:
            out.append(KeyColumn(c, NUMERIC, series.cast(nw.Float64).to_numpy()))
            continue
        # Nulls are dropped before reading: an Arrow dictionary reads a null as a level.
        null = series.is_null().to_numpy().astype(bool)
        observed = np.asarray(series.filter(~series.is_null()).to_numpy())
        values = np.empty(len(series), dtype=observed.dtype)
        values[~null] = observed
        missing = null | np.isnan(values) if dtype.is_float() else null
        if kind == ORDINAL:
            out.append(ordinal_column(c, values, missing, ordinal[c] if c in ordinal else list(dtype.categories)))
        else:
            out.append(nominal_column(c, values, missing))
    return out


def array_key(
    values: Mapping[Any, Any], kinds: Mapping[Any, str], levels: Optional[Mapping[Any, Sequence[Any]]] = None
) -> list[KeyColumn]:
    """The key columns given as 1-D arrays with their kinds ("numeric", "nominal",
    "ordinal"); ``levels`` gives the order of every ordinal column. Missing: NaN, None or
    pandas.NA."""
    levels = dict(levels or {})
    out = []
    lengths = {np.asarray(v, dtype=object).shape for v in values.values()}
    if len(lengths) > 1:
        raise ValueError(f"key columns differ in length: {sorted(lengths)}")
    for name, raw in values.items():
        kind = kinds.get(name, NUMERIC)
        arr = np.asarray(raw)
        if kind == NUMERIC:
            if arr.dtype.kind not in "biuf":
                raise TypeError(f"column {name!r} is declared numeric but holds {arr.dtype} values")
            out.append(KeyColumn(name, NUMERIC, arr.astype(np.float64)))
            continue
        missing = missing_cells(arr)
        if kind == NOMINAL:
            out.append(nominal_column(name, arr, missing))
        elif kind == ORDINAL:
            if name not in levels:
                raise ValueError(f"ordinal: column {name!r} needs its levels in increasing order")
            out.append(ordinal_column(name, arr, missing, levels[name]))
        else:
            raise ValueError(f"kind of column {name!r} must be 'numeric', 'nominal' or 'ordinal', got {kind!r}")
    return out


def missing_cells(arr: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    """Which cells of a 1-D array are missing: NaN, None or pandas.NA."""
    if arr.dtype.kind == "f":
        return np.asarray(np.isnan(arr), dtype=bool)
    if arr.dtype.kind != "O":
        return np.zeros(arr.shape[0], dtype=bool)
    return np.fromiter((_is_missing(v) for v in arr.tolist()), dtype=bool, count=arr.shape[0])
