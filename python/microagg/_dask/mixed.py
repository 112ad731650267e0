"""Mixed keys on the Dask engine (docs/scaling.md#the-dask-engine). Two passes come first:
the levels of every nominal column and the standard deviations of the numeric columns and
ordinal ranks; with ``missing`` allowed, a third computes each stratum's and the file's
mode/median, the values of groups that observed none.

Where the core takes the key natively (exact MDAV, groups released as means, categories as
the mode: :func:`microagg._mixed.native.takes_natively`), every partition gets one column per
key attribute (numbers, ordinal ranks, nominal codes), the cut tree cuts the nominal columns
through their levels from level counts (:class:`microagg._dask.tree.Layout`) and each part
is grouped on the native key in the whole file's units (:func:`group_native_part`): no
one-hot column is built. Otherwise the embedding is added to every partition as numeric
columns, in the whole file's units, and the numeric engine (:mod:`microagg._dask.engine`)
cuts and groups them. Either way every group lies in one output partition, where its
categories are released as locally (mode, median level or medoid).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._api import microaggregate
from .._mixed.embedding import embed
from .._mixed.native import group_natively, takes_natively
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
from .._scale import shared_scale
from .run import partitioned
from .tree import Layout, Spec

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
    spread: Optional[dict[Any, float]] = None
    """Once measured, the whole file's sd of each numeric column and ordinal rank (1 where 0)."""
    native: bool = False
    """The key goes to the core natively: one column per attribute, no embedding."""

    @property
    def embedded(self) -> list[str]:
        """Names of the embedding's columns (natively: of the :attr:`ordered` attributes)."""
        assert self.scale is not None
        return [f"__microagg_z{j}" for j in range(len(self.names) if self.native else self.scale.shape[0])]

    @property
    def ordered(self) -> list[Any]:
        """The key's columns as the native key takes them: numeric and ordinal ones, then
        the nominal ones (each in key order)."""
        return [c for c in self.names if self.kinds[c] != NOMINAL] + [c for c in self.names if self.kinds[c] == NOMINAL]

    @property
    def layout(self) -> Layout:
        """How the cut tree reads the native key's columns (:attr:`ordered`)."""
        nominal = [c for c in self.names if self.kinds[c] == NOMINAL]
        return Layout(
            len(self.names) - len(nominal), tuple(len(self.levels[c]) for c in nominal),
            tuple(self.weights.get(c, 1.0) for c in nominal),
        )

    @property
    def native_scale(self) -> npt.NDArray[np.float64]:
        """The divisor of each :attr:`ordered` column: sd / weight of a numeric or ordinal
        one, the sd cut by :func:`microagg._scale.shared_scale` as ``microagg.anonymize``
        cuts it with ``max_part``; 1 for a nominal one's codes."""
        assert self.spread is not None
        graded = [c for c in self.ordered if self.kinds[c] != NOMINAL]
        sd = shared_scale(np.asarray([self.spread[c] for c in graded], dtype=np.float64))
        divisor = sd / np.asarray([self.weights.get(c, 1.0) for c in graded])
        return np.concatenate([divisor, np.ones(len(self.ordered) - len(graded))])

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
    spread = {c: float(sd[c]) if float(sd[c]) > 0 else 1.0 for c in graded}
    for c in spec.names:
        w = spec.weights.get(c, 1.0)
        if spec.kinds[c] == NOMINAL:
            scale += [np.sqrt(2.0) / w] * len(levels[c])
        else:
            scale.append(spread[c] / w)
    return dataclasses.replace(spec, levels=levels, scale=np.asarray(scale), spread=spread)


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


def with_native_key(frame: pd.DataFrame, spec: MixedSpec) -> pd.DataFrame:
    """One partition with a column per :attr:`MixedSpec.ordered` attribute added: numbers,
    ordinal ranks and nominal codes as float64, NaN where missing (n × attributes)."""
    key = {c.name: c for c in key_columns(frame, spec)}
    extra = {
        name: np.where(key[c].missing, np.nan, key[c].values.astype(np.float64))
        for name, c in zip(spec.embedded, spec.ordered)
    }
    return frame.assign(**extra)


def group_native_part(
    values: npt.NDArray[np.float64],
    k: int,
    method: str,
    *,
    layout: Layout,
    scale: npt.NDArray[np.float64],
    label_offset: int = 0,
    **options: Any,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Group one part of a native mixed key (``values``: the :class:`Layout`'s numeric
    columns, then the nominal codes, NaN where missing) with the core's native key in the
    whole file's units ``scale`` (as ``microagg.anonymize`` groups a part of the same
    ``max_part`` run), with :func:`microagg._dask.part.group_part`'s other ``options``
    (weights, missing, n_jobs, method parameters); returns ``(labels + label_offset,
    released)``, the codes unchanged."""
    d = layout.numeric
    key = [KeyColumn(j, NUMERIC, values[:, j]) for j in range(d)]
    codes = np.where(np.isnan(values[:, d:]), -1, values[:, d:]).astype(np.int64)
    key += [KeyColumn(d + j, NOMINAL, codes[:, j]) for j in range(codes.shape[1])]
    nominal_weights = {d + j: w for j, w in enumerate(layout.weights)}
    numbers, res = group_natively(key, k, method, nominal_weights, scale=scale[:d], **options)
    released = np.column_stack([numbers[j] for j in range(d)] + [values[:, d:]])
    return res.labels + np.int64(label_offset), released


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
    if spec.native:
        numbers = {c: frame[z].to_numpy(dtype=np.float64, na_value=np.nan) for z, c in zip(spec.embedded, spec.ordered)}
    else:
        embedded = frame[spec.embedded].to_numpy(dtype=np.float64, na_value=np.nan) * spec.scale
        start = np.cumsum([0] + [len(spec.levels[c]) if spec.kinds[c] == NOMINAL else 1 for c in spec.names])
        numbers = {c: embedded[:, at] for c, at in zip(spec.names, start[:-1].tolist())}
    categorical = [c for c in key if c.kind != NUMERIC]
    chosen_row = None
    if medoid and categorical and n_groups:
        complete = ~np.any([c.missing for c in categorical], axis=0)
        z = frame[spec.originals].to_numpy(dtype=np.float64, na_value=np.nan)
        chosen_row = medoid_rows(z, labels, n_groups, w, complete)
    first = np.empty(n_groups, dtype=np.int64)
    first[labels[::-1]] = np.arange(labels.shape[0])[::-1]
    for c in key:
        if c.kind == NUMERIC:
            out[c.name] = numbers[c.name]
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
    shape = [KeyColumn(c, kinds[c], np.empty(0)) for c in names]
    if takes_natively(shape, method, microaggregate, categorical_release, options):
        spec = dataclasses.replace(spec, native=True)
        grouped = _grouped_natively(ddf, spec, k, method, by, weights, missing, **options)
    else:
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


def _grouped_natively(
    ddf: Any, spec: MixedSpec, k: int, method: str, by: list[Any], weights: Any, missing: str, *,
    max_part: int, small_strata: str, relabel: bool = True, aggregation: str = "mean", n_jobs: int = 1,
    **method_params: Any,
) -> Any:
    """The records of ``ddf`` grouped on the native key, a column per attribute
    (:func:`with_native_key`), cut through the levels of the nominal columns and grouped
    part by part (:func:`group_native_part`), each group's id in column ``_GROUP``, rows
    grouped by part."""
    names = spec.embedded
    keyed = ddf.map_partitions(with_native_key, spec, meta=ddf._meta.assign(**{z: np.zeros(0) for z in names}))
    layout = spec.layout
    cuts = Spec(
        names, by, k, max_part, True, missing != "error", small_strata == "merge", relabel, layout, spec.native_scale,
        spec.ordered,
    )
    release = dict(
        k=k, method=method, columns=names, by=by if relabel else [], weights=weights, aggregation=aggregation,
        missing=missing, n_jobs=n_jobs, group_column=_GROUP, method_params=method_params,
        group=functools.partial(group_native_part, layout=layout),
    )
    return partitioned(keyed, cuts, release, keep_order=False, summary=False)
