"""The mixed-key workflow: embed the key, group it with ``microaggregate``, release each
column (numbers aggregated in their units, categories by :mod:`.release`'s rules).

Missing categorical cells go through ``microaggregate``'s completion like numeric ones.
``missing="fill"`` releases the group's mode/median over its observed members; a group with
no observed member releases that of its stratum's observed values (the stratum of its first
record), or of the whole file's. ``missing="keep"`` leaves the cell missing.

:func:`release` is the array-level entry (the command line's); :func:`anonymize_frame` the
frame one (``microagg.anonymize``).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import replace
from typing import Any, Callable, Mapping, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from .._api import MicroaggregationResult, microaggregate
from .._tcloseness import TCloseResult, fill_until_t_close
from .._workflow import factorize_strata
from .embedding import embed
from .native import group_natively, takes_natively
from .release import medoid_rows, weighted_median, weighted_mode
from .types import NUMERIC, ORDINAL, KeyColumn, array_key, check_no_identifiers, frame_key

__all__ = ["CATEGORICAL_RELEASES", "anonymize_frame", "group_key", "release"]

CATEGORICAL_RELEASES = ("mode", "medoid")
"""Values of ``categorical_release=``: per attribute mode/median, or the medoid's categories."""

I64 = npt.NDArray[np.int64]

Grouping = Callable[..., MicroaggregationResult]
"""What groups the embedding: :func:`microagg.microaggregate`, or
:func:`microagg.t_close_microaggregate` bound to its confidential attributes (the classes
then t-close too); called as ``group(matrix, k, method, standardize=, by=, weights=,
missing=, **options)``."""


def release(
    key_values: Mapping[Any, Any],
    kinds: Mapping[Any, str],
    levels: Optional[Mapping[Any, Sequence[Any]]] = None,
    k: int = 5,
    method: str = "mdav",
    **grouping: Any,
) -> Tuple[dict[Any, npt.NDArray[Any]], MicroaggregationResult]:
    """k-anonymous release of a mixed key given as arrays.

    ``key_values`` maps each key column's name to its n values (1-D arrays; NaN, None or
    pandas.NA mark a missing cell); ``kinds`` maps names to "numeric" (the default),
    "nominal" or "ordinal"; ``levels`` gives each ordinal column's levels in increasing
    order. Every other keyword is :func:`group_key`'s: ``by`` (strata labels) and
    ``weights`` (n sampling weights) as arrays, ``attribute_weights``,
    ``categorical_release``, ``missing``, ``group`` (:data:`Grouping`, default
    :func:`microagg.microaggregate`) and what ``group`` takes (``aggregation``,
    ``max_part``, ``n_jobs``, ``small_strata``, method parameters ...).

    Returns the released columns (numeric ones as float64, categorical ones as values of
    the input array, missing where ``missing="keep"`` left them) and the grouping's result
    (on the embedding: its ``labels`` and ``group_sizes`` are the release's groups).
    """
    key = array_key(key_values, kinds, levels)
    check_no_identifiers(key)
    numeric, rows, res = group_key(key, k, method, **grouping)
    out: dict[Any, npt.NDArray[Any]] = {}
    for c in key:
        out[c.name] = numeric[c.name] if c.kind == NUMERIC else np.asarray(key_values[c.name])[rows[c.name]]
    return out, res


def anonymize_frame(
    frame: Any,
    columns: Sequence[Any],
    k: int,
    method: str,
    *,
    categorical: Sequence[Any],
    ordinal: Mapping[Any, Sequence[Any]],
    by: Any,
    weights: Any,
    attribute_weights: Optional[Mapping[Any, float]],
    categorical_release: str,
    options: dict[str, Any],
    group: Grouping = microaggregate,
) -> Tuple[Any, MicroaggregationResult]:
    """The native frame with its mixed key ``columns`` released (numeric ones as float64,
    categorical ones with their own dtype) and the grouping's result (``group``'s)."""
    import narwhals.stable.v2 as nw

    key = frame_key(frame, columns, categorical, ordinal)
    check_no_identifiers(key)
    numeric, rows, res = group_key(
        key, k, method, by=by, weights=weights, attribute_weights=attribute_weights,
        categorical_release=categorical_release, group=group, **options,
    )
    new = [
        nw.new_series(str(c.name), numeric[c.name], backend=frame.implementation).alias(c.name)
        if c.kind == NUMERIC
        else frame.get_column(c.name)[rows[c.name]].alias(c.name)
        for c in key
    ]
    return nw.to_native(frame.with_columns(*new)), res


def group_key(
    key: list[KeyColumn],
    k: int,
    method: str,
    *,
    by: Any = None,
    weights: Any = None,
    attribute_weights: Optional[Mapping[Any, float]] = None,
    categorical_release: str = "mode",
    missing: str = "error",
    group: Grouping = microaggregate,
    **options: Any,
) -> Tuple[dict[Any, npt.NDArray[np.float64]], dict[Any, I64], MicroaggregationResult]:
    """Group the records on the embedding of ``key`` with ``group`` and choose what each releases: the
    numeric columns' released values, and for each categorical column the row whose value
    every record releases (its own row where ``missing="keep"`` leaves it missing)."""
    if "standardize" in options:
        raise ValueError(
            "standardize cannot be given with a mixed key: every column is z-scored; weigh "
            "columns with attribute_weights= instead"
        )
    if categorical_release not in CATEGORICAL_RELEASES:
        raise ValueError(f"categorical_release must be 'mode' or 'medoid', got {categorical_release!r}")
    aw = check_attribute_weights(attribute_weights, [c.name for c in key])
    _check_missing(key, missing)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    medoid = None
    if takes_natively(key, method, group, categorical_release, options):
        grouped, res = group_natively(key, k, method, aw, group, by=by, weights=weights, missing=missing, **options)
    else:
        emb = embed(key, aw)
        res = group(emb.matrix, k, method, standardize=emb.scale, by=by, weights=weights, missing=missing, **options)
        values = res.group_values[res.labels]  # every cell its group's value
        grouped = {c.name: values[:, b.start] for c, b in zip(key, emb.blocks) if c.kind == NUMERIC}
        categorical = [c for c in key if c.kind != NUMERIC]
        if categorical_release == "medoid" and categorical:
            complete = ~np.any([c.missing for c in categorical], axis=0)
            medoid = medoid_rows(emb.standardized(), res.labels, res.n_groups, w, complete)
    return _released_rows(key, res, grouped, by, w, medoid, missing)


def _released_rows(
    key: list[KeyColumn],
    res: MicroaggregationResult,
    grouped: dict[Any, npt.NDArray[np.float64]],
    by: Any,
    w: Any,
    medoid: Optional[I64],
    missing: str,
) -> Tuple[dict[Any, npt.NDArray[np.float64]], dict[Any, I64], MicroaggregationResult]:
    """What every record releases, from its group's numeric values ``grouped``: the numeric
    columns' values, and for each categorical column the row whose value it releases (its
    group's mode, median or ``medoid``, falling back to its stratum's and the file's); with
    ``missing="keep"`` a missing cell stays missing, unless t-closeness needs it filled."""
    n = res.labels.shape[0]
    groupings = _fallback_groupings(res.labels, res.n_groups, None if by is None else factorize_strata(by, n)[0])
    levels = {c.name: _chosen_levels(c, groupings, w, medoid) for c in key if c.kind != NUMERIC}
    filled = np.column_stack([grouped[c.name] if c.kind == NUMERIC else levels[c.name] for c in key]).astype(np.float64)
    gaps = np.column_stack([c.missing for c in key]) if missing == "keep" else np.zeros(filled.shape, dtype=bool)
    if isinstance(res, TCloseResult) and gaps.any():  # t-close over the released key, the one class rule
        gaps, max_emd = fill_until_t_close(res, filled, gaps)
        res = replace(res, n_filled=int(np.column_stack([c.missing for c in key]).sum() - gaps.sum()), max_emd=max_emd)
    numeric = {c.name: np.where(gaps[:, j], np.nan, filled[:, j]) for j, c in enumerate(key) if c.kind == NUMERIC}
    rows = {
        c.name: np.where(gaps[:, j], np.arange(n), _first_row_of_level(c)[levels[c.name]])
        for j, c in enumerate(key)
        if c.kind != NUMERIC
    }
    return numeric, rows, res


def _fallback_groupings(labels: I64, n_groups: int, strata: Optional[I64]) -> list[tuple[I64, I64]]:
    """Where a group's categorical value comes from, in order: the group, its stratum (that
    of its first record: merged strata put records of several in one group), the file. Each
    as (the grouping of the records, the index of each record's group in it)."""
    n = labels.shape[0]
    out = [(labels, labels)]
    if strata is not None:
        first = np.empty(n_groups, dtype=np.int64)
        first[labels[::-1]] = np.arange(n)[::-1]
        out.append((strata, strata[first][labels]))
    out.append((np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)))
    return out


def _chosen_levels(c: KeyColumn, groupings: list[tuple[I64, I64]], w: Any, medoid: Optional[I64]) -> I64:
    """Per record the level its group releases: the medoid's when it observed the column,
    else the group's mode/median, else its stratum's, else the file's."""
    choose = weighted_median if c.kind == ORDINAL else weighted_mode
    labels = groupings[0][0]
    level = c.values[medoid][labels] if medoid is not None else np.full(labels.shape[0], -1, dtype=np.int64)
    for grouping, index in groupings:
        todo = level < 0
        if not todo.any():
            break
        level[todo] = choose(c.values, grouping, int(grouping.max()) + 1, w)[index[todo]]
    return level


def _first_row_of_level(c: KeyColumn) -> I64:
    """For each level, the first row holding it (-1 for a level no row holds)."""
    rows = np.full(len(c.levels), -1, dtype=np.int64)
    observed = np.flatnonzero(c.values >= 0)
    codes = c.values[observed]
    rows[codes[::-1]] = observed[::-1]
    return rows


def check_attribute_weights(weights: Optional[Mapping[Any, Any]], names: list[Any]) -> dict[Any, float]:
    """``attribute_weights`` checked: key columns mapped to finite positive numbers."""
    if weights is None:
        return {}
    if not isinstance(weights, Mapping):
        raise TypeError(f"attribute_weights must be a dict of column name to weight, got {type(weights).__name__}")
    out = {}
    for name, value in weights.items():
        if name not in names:
            raise ValueError(f"attribute_weights: {name!r} is not a key column ({', '.join(map(str, names))})")
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"attribute_weights: the weight of {name!r} must be a number, got {value!r}")
        if not (math.isfinite(value) and float(value) > 0):
            raise ValueError(
                f"attribute_weights: the weight of {name!r} must be finite and positive, got {value!r} "
                "(drop the column from the key to ignore it)"
            )
        out[name] = float(value)
    return out


def _check_missing(key: list[KeyColumn], missing: str) -> None:
    """Missing cells need ``missing="fill"`` or ``"keep"``; a column needs an observed value."""
    holes = {c.name: int(c.missing.sum()) for c in key if c.missing.any()}
    empty = [str(name) for name, count in holes.items() if count == key[0].values.shape[0]]
    if empty:
        raise ValueError(f"column(s) with no observed value: {', '.join(empty)}")
    if holes and missing == "error":
        listed = ", ".join(f"{name} ({count})" for name, count in holes.items())
        raise ValueError(f"missing cells in the key: {listed}; pass missing='fill' or missing='keep'")

