"""Mixed keys on the Dask engine: the embedding is added to every partition as numeric
columns, in the whole file's units, and the numeric engine (:mod:`microagg._dask.engine`) cuts and
groups them; every group lies in one output partition, where its categories are released
as locally (mode, median level or medoid). Two passes come first: the levels of every
nominal column and the standard deviations of the numeric columns and ordinal ranks; with
``missing`` allowed, a third computes each stratum's and the file's mode/median, the values
of groups that observed none.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._mixed.embedding import embed
from .._mixed.release import medoid_rows, weighted_median, weighted_mode
from .._mixed.types import (
    NOMINAL,
    NUMERIC,
    ORDINAL,
    KeyColumn,
    check_not_identifier,
    column_kind,
    missing_cells,
    ordinal_column,
    sorted_levels,
)

_GROUP = "__microagg_mixed_group"
_WEIGHT = "__microagg_mixed_weight"


@dataclass(frozen=True)
class MixedSpec:
    """The key of a Dask frame: kinds, levels, attribute weights, and once measured the
    divisor of every embedding column (``scale``, the whole file's)."""

    names: list[Any]
    kinds: dict[Any, str]
    levels: dict[Any, tuple[Any, ...]]
    weights: dict[Any, float]
    scale: Optional[npt.NDArray[np.float64]] = None

    @property
    def embedded(self) -> list[str]:
        """Names of the embedding's columns."""
        assert self.scale is not None
        return [f"__microagg_z{j}" for j in range(self.scale.shape[0])]

    @property
    def originals(self) -> list[str]:
        """Names of the copy of the embedding that the medoid release reads."""
        return [f"__microagg_o{j}" for j in range(len(self.embedded))]


def key_columns(frame: pd.DataFrame, spec: MixedSpec) -> list[KeyColumn]:
    """The key of one partition, coded with the whole file's levels."""
    out = []
    for c in spec.names:
        if spec.kinds[c] == NUMERIC:
            out.append(KeyColumn(c, NUMERIC, frame[c].to_numpy(dtype=np.float64, na_value=np.nan)))
            continue
        values = frame[c].to_numpy(dtype=object)
        coded = ordinal_column(c, values, missing_cells(values), spec.levels[c])
        out.append(dataclasses.replace(coded, kind=spec.kinds[c]))
    return out


def kinds_of(meta: pd.DataFrame, names: Sequence[Any], categorical: Sequence[Any], ordinal: dict[Any, Any]) -> dict[Any, str]:
    """Each key column's kind from the frame's dtypes, as for in-memory frames
    (:func:`microagg._mixed.types.column_kind`)."""
    import narwhals.stable.v2 as nw

    schema = nw.from_native(meta, eager_only=True).schema
    return {c: column_kind(c, schema[c], categorical, ordinal) for c in names}


def measure(ddf: Any, spec: MixedSpec) -> MixedSpec:
    """``spec`` with the nominal levels found in ``ddf`` and the embedding's divisors; a
    nominal column that is an identifier is refused (:func:`check_not_identifier`)."""
    import dask

    nominal = [c for c in spec.names if spec.kinds[c] == NOMINAL]
    graded = [c for c in spec.names if spec.kinds[c] != NOMINAL]
    raw = ddf.map_partitions(_graded_values, spec, graded, meta={c: np.float64 for c in graded})
    counts, sd, n = dask.compute([ddf[c].dropna().value_counts() for c in nominal], raw.std(ddof=0), ddf.shape[0])
    levels = dict(spec.levels)
    for c, u in zip(nominal, counts):
        check_not_identifier(c, u.to_numpy(), int(n))
        levels[c] = tuple(sorted_levels(np.asarray(list(u.index), dtype=object)).tolist())
    scale = []
    for c in spec.names:
        w = spec.weights.get(c, 1.0)
        if spec.kinds[c] == NOMINAL:
            scale += [np.sqrt(2.0) / w] * len(levels[c])
        else:
            s = float(sd[c])
            scale.append((s if s > 0 else 1.0) / w)
    return dataclasses.replace(spec, levels=levels, scale=np.asarray(scale))


def _graded_values(frame: pd.DataFrame, spec: MixedSpec, graded: list[Any]) -> pd.DataFrame:
    """The numeric columns and ordinal ranks of one partition (NaN where missing)."""
    key = {c.name: c for c in key_columns(frame, dataclasses.replace(spec, names=graded))}
    return pd.DataFrame(
        {c: np.where(key[c].missing, np.nan, key[c].values.astype(np.float64)) for c in graded}, index=frame.index
    )


def with_embedding(frame: pd.DataFrame, spec: MixedSpec, copy: bool) -> pd.DataFrame:
    """One partition with the embedding's columns added (and their copy, for the medoid)."""
    assert spec.scale is not None
    z = embed(key_columns(frame, spec), spec.weights).matrix / spec.scale
    extra = {name: z[:, j] for j, name in enumerate(spec.embedded)}
    if copy:
        extra.update({name: z[:, j] for j, name in enumerate(spec.originals)})
    return frame.assign(**extra)


def fallbacks(ddf: Any, spec: MixedSpec, by: list[Any], weights: Any) -> dict[Any, tuple[dict[Any, int], int]]:
    """Per categorical column, the level each stratum releases for a group that observed
    none (stratum key -> level code) and the file's."""
    import dask

    categorical = [c for c in spec.names if spec.kinds[c] != NUMERIC]
    frame = ddf.assign(**{_WEIGHT: ddf[weights] if weights is not None else 1.0})
    tables = dask.compute(
        [frame[[*by, c, _WEIGHT]].dropna(subset=[c]).groupby([*by, c], dropna=False, observed=True)[_WEIGHT].agg(["sum", "size"])
         for c in categorical]
    )[0]
    out = {}
    for c, table in zip(categorical, tables):
        table = table.reset_index()
        values = table[c].to_numpy(dtype=object)
        codes = ordinal_column(c, values, missing_cells(values), spec.levels[c]).values
        strata = [_stratum_key(row) for row in table[by].itertuples(index=False)] if by else [()] * len(table)
        index = {s: i for i, s in enumerate(dict.fromkeys(strata))}
        groups = np.asarray([index[s] for s in strata], dtype=np.int64)
        choose = weighted_median if spec.kinds[c] == ORDINAL else weighted_mode
        per_stratum = choose(codes, groups, len(index), _table_weights(table, groups, len(index)))
        one = np.zeros(len(table), dtype=np.int64)
        whole = choose(codes, one, 1, _table_weights(table, one, 1))
        out[c] = ({s: int(per_stratum[i]) for s, i in index.items()}, int(whole[0]))
    return out


def _table_weights(table: pd.DataFrame, groups: npt.NDArray[np.int64], n_groups: int) -> npt.NDArray[np.float64]:
    """Each (stratum, level) row's total weight, or its record count where the stratum's
    weights sum to 0 (records then count 1 each, as in a group)."""
    weight = table["sum"].to_numpy(dtype=np.float64)
    total = np.bincount(groups, weights=weight, minlength=n_groups)
    return np.asarray(np.where(total[groups] > 0, weight, table["size"].to_numpy(dtype=np.float64)), dtype=np.float64)


def _stratum_key(row: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(None if pd.isna(v) else v for v in row)


def release_partition(
    frame: pd.DataFrame,
    spec: MixedSpec,
    by: list[Any],
    weights: Any,
    medoid: bool,
    missing: str,
    fallback: Optional[dict[Any, tuple[dict[Any, int], int]]],
    group_column: Any,
) -> pd.DataFrame:
    """One grouped output partition with its key released: numbers back in their units,
    categories chosen per group (every group lies in this partition)."""
    assert spec.scale is not None
    _, labels = np.unique(frame[_GROUP].to_numpy(), return_inverse=True)
    labels = labels.reshape(-1).astype(np.int64)
    n_groups = int(labels.max()) + 1 if labels.size else 0
    w = None if weights is None else frame[weights].to_numpy(dtype=np.float64)
    key = key_columns(frame, spec)
    out = frame.drop(columns=[*spec.embedded, *(spec.originals if medoid else []), _GROUP])
    embedded = frame[spec.embedded].to_numpy(dtype=np.float64, na_value=np.nan) * spec.scale
    categorical = [c for c in key if c.kind != NUMERIC]
    chosen_row = None
    if medoid and categorical and n_groups:
        complete = ~np.any([c.missing for c in categorical], axis=0)
        z = frame[spec.originals].to_numpy(dtype=np.float64, na_value=np.nan)
        chosen_row = medoid_rows(z, labels, n_groups, w, complete)
    start = 0
    first = np.empty(n_groups, dtype=np.int64)
    first[labels[::-1]] = np.arange(labels.shape[0])[::-1]
    for c in key:
        width = len(spec.levels[c.name]) if c.kind == NOMINAL else 1
        if c.kind == NUMERIC:
            out[c.name] = embedded[:, start]
        else:
            level = c.values[chosen_row][labels] if chosen_row is not None else np.full(labels.shape[0], -1, dtype=np.int64)
            todo = level < 0
            if todo.any():
                choose = weighted_median if c.kind == ORDINAL else weighted_mode
                level[todo] = choose(c.values, labels, n_groups, w)[labels[todo]]
            todo = level < 0
            if todo.any() and fallback is not None:
                per_stratum, whole = fallback[c.name]
                strata = [_stratum_key(row) for row in frame[by].iloc[first].itertuples(index=False)] if by else [()] * n_groups
                group_level = np.asarray([per_stratum.get(s, whole) for s in strata], dtype=np.int64)
                level[todo] = group_level[labels[todo]]
            values = np.asarray(spec.levels[c.name] + (None,), dtype=object)[level]
            if missing == "keep":
                values = np.where(c.missing, frame[c.name].to_numpy(dtype=object), values)
            out[c.name] = pd.Series(values, index=frame.index).astype(frame[c.name].dtype)
        start += width
    if group_column is not None:
        out[group_column] = frame[_GROUP].to_numpy()
    return out


def anonymize_mixed(
    ddf: Any,
    k: int,
    columns: Sequence[Any],
    method: str,
    *,
    engine: Any,
    categorical: Sequence[Any],
    ordinal: dict[Any, tuple[Any, ...]],
    attribute_weights: Any,
    categorical_release: str,
    by: list[Any],
    weights: Any,
    missing: str,
    group_column: Any,
    **options: Any,
) -> Any:
    """``microagg.dask.anonymize`` of a mixed key (``engine`` is the numeric engine; ``by``
    the strata columns, resolved by :mod:`microagg._columns`)."""
    from .._mixed.workflow import CATEGORICAL_RELEASES, check_attribute_weights

    if categorical_release not in CATEGORICAL_RELEASES:
        raise ValueError(f"categorical_release must be 'mode' or 'medoid', got {categorical_release!r}")
    names = list(columns)
    meta = ddf._meta
    kinds = kinds_of(meta, names, categorical, ordinal)
    levels = {
        c: tuple(ordinal[c]) if c in ordinal else tuple(meta[c].dtype.categories.tolist())
        for c in names
        if kinds[c] == ORDINAL
    }
    spec = measure(ddf, MixedSpec(names, kinds, levels, check_attribute_weights(attribute_weights, names)))
    medoid = categorical_release == "medoid"
    added = spec.embedded + (spec.originals if medoid else [])
    embedded = ddf.map_partitions(with_embedding, spec, medoid, meta=meta.assign(**{z: np.zeros(0) for z in added}))
    # Whole groups in each output partition (the categories are released per partition),
    # so the rows come grouped by part, not in input order.
    grouped = engine(embedded, k, spec.embedded, method, by=by, weights=weights, missing=missing,
                     standardize=False, group_column=_GROUP, keep_order=False, **options)
    fallback = fallbacks(ddf, spec, by, weights) if missing != "error" else None
    out_meta = meta.astype({c: np.float64 for c in names if kinds[c] == NUMERIC})
    if group_column is not None:
        out_meta = out_meta.assign(**{group_column: np.zeros(0, np.int64)})
    return grouped.map_partitions(
        release_partition, spec, by, weights, medoid, missing, fallback, group_column, meta=out_meta
    )
