"""Anonymizing a Dask DataFrame: partitioned microaggregation past one machine
(docs/scaling.md#the-dask-engine).

Install with ``pip install "microagg[dask]"``. The result is lazy; computing it (or writing
it with ``to_parquet``) runs the whole pipeline on the Dask cluster::

    import dask.dataframe as dd
    import microagg.dask

    ddf = dd.read_parquet("census/")
    out = microagg.dask.anonymize(ddf, k=5, columns=["age", "income"], by="region")
    out.to_parquet("census_k5/")

How it runs: the records are cut into parts of at most ``max_part`` records by Mondrian-V
cuts on the globally standardized values, exactly as ``microagg.anonymize(...,
max_part=...)`` cuts them (see :mod:`microagg._dask_plan`: every cut level is three passes
over the data returning per-part summaries); then one shuffle puts each part in one
partition, where the Rust core groups it (:func:`microagg._parts.group_part`). No step
gathers the data set in one place: the input partitions are read by the release only once
the plan exists (never held while planning), and memory per worker is O(partition size)
plus Dask's own. A second shuffle then puts every record back in its input partition, in
its input position, with its index (``keep_order=True``, the default).

Run it under ``if __name__ == "__main__":`` when it starts a ``distributed`` cluster in the
script (``Client()`` starts worker processes that import the script again); see
``examples/dask_anonymize.py``.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import pandas as pd

from ._api import METHODS, microaggregate
from ._dask_plan import FrameRef, Int, Plan, Spec, descend, executor, plan_cuts, standardized, stratum_codes
from ._dask_strata import SMALL_STRATA
from ._mixed.dask import anonymize_mixed
from ._mixed.frames import declared_categories, mixed_key
from ._dask_summary import PartitionSums, Summary, partition_sums, summarize

__all__ = ["anonymize", "Summary"]
from ._parts import group_part, workflow_options
from ._validation import check_bool, check_int, check_k, check_str

_ROW = "__microagg_row"
_PART = "__microagg_part"
_KEY = "__microagg_key"
"""Input partition number × :data:`_SLOT` + position in it: the key that sorts the released
records back into their input partitions and order."""
_INDEX = "__microagg_index"
"""The input's index, carried as a column through the shuffle back."""
_SLOT = 2**40
"""Records per input partition that :data:`_KEY` can tell apart."""

FIXED_GROUP_COUNT = ("mdav",)
"""Methods that always form ``size // k`` groups from a part of ``size`` records: their
group ids are consecutive as soon as each part is grouped."""



def _kind(dtype: Any) -> str:
    """NumPy's one-letter kind of a NumPy or pandas dtype ('O' when it has none)."""
    return str(getattr(dtype, "kind", "O"))

def anonymize(
    ddf: Any,
    k: int = 5,
    columns: Optional[Sequence[Any]] = None,
    method: str = "mdav",
    *,
    by: Any = None,
    small_strata: str = "error",
    relabel: bool = True,
    max_part: int = 100_000,
    weights: Any = None,
    aggregation: str = "mean",
    missing: str = "error",
    standardize: bool = True,
    n_jobs: int = 1,
    group_column: Any = None,
    categorical: Any = None,
    ordinal: Any = None,
    attribute_weights: Any = None,
    categorical_release: str = "mode",
    keep_order: bool = True,
    summary: bool = False,
    **method_params: Any,
) -> Any:
    """Return a lazy copy of the Dask DataFrame ``ddf`` whose ``columns`` are k-anonymously
    microaggregated, part by part (docs/scaling.md#the-dask-engine).

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
    k : int, default 5
        Minimum group size, at least 2.
    columns : list of column names, optional
        The quasi-identifiers, microaggregated jointly and replaced by their groups'
        values (as float64). Default: every numeric, non-boolean column other than ``by``
        and ``weights``. Every other column, the index and the values of the kept columns
        stay as they are.
    method : str, default "mdav"
        One of :data:`microagg.METHODS`, run on every part.
    by : column name or list of names, optional
        Strata: no group (and no part) crosses a stratum; NaN is a stratum of its own.
    small_strata : {"error", "merge"}, default "error"
        A stratum with fewer than ``k`` records is an error naming it, or (``"merge"``) is
        merged into the stratum with the nearest centroid, repeatedly, as
        :func:`microagg.anonymize` merges (see :mod:`microagg._dask_strata`); the merges
        are logged (logger ``microagg.dask``, INFO).
    relabel : bool, default True
        With merged strata, the ``by`` columns of a merged stratum's records take the values
        of the stratum they joined, as :func:`microagg.anonymize` relabels them (their own
        label, carried by fewer than ``k`` records, would single them out).
        ``relabel=False`` keeps the labels and logs a warning (logger ``microagg.dask``)
        when the result is computed.
    max_part : int, default 100 000
        Largest part; at least ``2 * k``.
    weights : column name, optional
        Non-negative record weights: a group releases its weighted aggregate
        (docs/workflow.md#weights).
    aggregation, missing : str
        What a group releases and how missing values are handled (docs/workflow.md#missing-values).
        With missing values the cuts sort them last and each part completes its own missing
        cells (one EM per part, on the whole file's scale), so the groups can differ from
        the local engine's, which completes the whole file once; the release is
        k-anonymous either way.
    standardize : bool, default True
        Scale every column by the whole frame's mean and population sd before cutting and
        grouping.
    n_jobs : int, default 1
        Threads of each part's grouping.
    group_column : column name, optional
        Adds this column with each record's group id, 0..G-1, numbered part by part as the
        local run numbers them (the labels of :func:`microagg.microaggregate` with the same
        ``max_part``). A part's first id depends on how many groups every earlier part
        formed; except for ``mdav``, which always forms ``size // k`` groups, that is known
        only once every part is grouped, so Dask keeps each grouped partition (in worker
        memory, spilled to disk when short) until the last one is grouped.
    categorical, ordinal, attribute_weights, categorical_release
        A key that mixes numbers with categories, as in :func:`microagg.anonymize`: the
        embedding is computed in the whole file's units (levels and standard deviations
        from two passes over ``ddf``) and grouped by this engine; each group's categories
        are released in its output partition.
    keep_order : bool, default True
        (Numeric keys; with a mixed key the rows come grouped by part, each with its index.)
        Put every record back in its input partition and position, with its index (a
        second shuffle of the data, sorting on each record's input partition and
        position). False skips that shuffle: the output partitions then hold whole parts,
        rows in input order within each part; the index still comes through, so
        ``out.compute().loc[ddf.index.compute()]`` restores the input's order when the
        index is unique.
    summary : bool, default False
        Also return a :class:`dask.delayed.Delayed` of a
        :class:`microagg.dask.Summary` (records, groups, information loss as
        :func:`microagg.microaggregate` reports it), computed with the frame at no extra
        pass: ``dask.compute(out.to_parquet(path, compute=False), summary)``.
    **method_params
        Options of ``method``, as for :func:`microagg.microaggregate`.

    Returns
    -------
    dask.dataframe.DataFrame, or (DataFrame, Delayed) with ``summary=True``
        Same columns (plus ``group_column``), index and partitions as ``ddf``, rows in
        the input's order (see ``keep_order``). Nothing is computed until the result is.

    Raises
    ------
    TypeError
        ``ddf`` is not a Dask DataFrame, or a chosen column is not numeric.
    ValueError
        An unknown column or option (``small_strata``, ``aggregation``, ``missing``, the
        method or its parameters), ``max_part < 2k``. Errors that depend on the data
        (missing or infinite values, a small stratum, ``k`` above the number of records)
        are raised when the result is computed.
    """
    import dask
    import dask.dataframe as dd

    if not isinstance(ddf, dd.DataFrame):
        raise TypeError(f"anonymize expects a dask.dataframe.DataFrame, got {type(ddf).__name__}")
    k = check_k(k)
    method = check_str(method, "method")
    if "sensitive" in method_params or "t" in method_params:
        raise ValueError("t-closeness (sensitive=, t=) is not available with the Dask engine; use "
                         "microagg.anonymize, with max_part= for a large file")
    max_part = check_int(max_part, "max_part")
    if max_part < 2 * k:
        raise ValueError(f"max_part must be at least 2k = {2 * k} so that both halves of a cut hold k records, got {max_part}")
    small_strata = check_str(small_strata, "small_strata")
    if small_strata not in SMALL_STRATA:
        raise ValueError(f"small_strata must be one of {', '.join(SMALL_STRATA)}, got {small_strata!r}")
    relabel = check_bool(relabel, "relabel")
    standardize = check_bool(standardize, "standardize")
    keep_order = check_bool(keep_order, "keep_order")
    summary = check_bool(summary, "summary")
    n_jobs = check_int(n_jobs, "n_jobs")
    roles = set(_names(ddf, by, "by")) | set(_names(ddf, weights, "weights"))
    mixed = _mixed_key(ddf, columns, roles, categorical, ordinal, attribute_weights, categorical_release)
    if mixed is not None:
        if not standardize:
            raise ValueError("standardize cannot be False with a mixed key: weigh columns with attribute_weights=")
        if summary:
            raise ValueError("summary=True is not available with a mixed key (categorical columns) yet")
        # Check the method and its parameters before the passes that measure the key.
        one = workflow_options(weights=weights is not None, aggregation=aggregation, missing=missing)
        microaggregate(np.arange(2.0 * k).reshape(2 * k, 1), k, method, **one, **method_params)
        return anonymize_mixed(
            ddf, k, mixed.columns, method, engine=anonymize, categorical=mixed.categorical, ordinal=mixed.ordinal,
            attribute_weights=attribute_weights, categorical_release=categorical_release, by=by,
            weights=weights, missing=missing, group_column=group_column, small_strata=small_strata,
            max_part=max_part, aggregation=aggregation, n_jobs=n_jobs, **method_params,
        )
    by_cols = _names(ddf, by, "by")
    weight_cols = _names(ddf, weights, "weights")
    if len(weight_cols) > 1:
        raise ValueError("weights must name one column")
    cols = _quasi_identifiers(ddf, columns, set(by_cols) | set(weight_cols))
    if group_column is not None and group_column in ddf.columns:
        raise ValueError(f"group_column {group_column!r} is already a column")
    options = workflow_options(weights=bool(weight_cols), aggregation=aggregation, missing=missing)
    # Check the method and its parameters now rather than on the workers.
    microaggregate(np.arange(2.0 * k * len(cols)).reshape(2 * k, len(cols)), k, method, **options, **method_params)
    spec = Spec(cols, by_cols, k, max_part, standardize, missing != "error", small_strata == "merge", relabel)
    plan = dask.delayed(plan_cuts, pure=False)(FrameRef(ddf[cols + by_cols]), spec)
    tagged_meta = ddf._meta.assign(**{_ROW: np.zeros(0, np.int64), _PART: np.zeros(0, np.int64), _KEY: np.zeros(0, np.int64)})
    # Each partition is read inside its tagging task, which depends on the plan only: had
    # the tasks taken ddf's partitions as inputs, the scheduler would read the whole frame
    # into worker memory while the (seceded) planner task runs.
    source = dask.delayed(FrameRef(ddf), traverse=False)
    tag = dask.delayed(_tag_partition, pure=False)
    tagged = dd.from_delayed(
        [tag(source, number, plan, spec) for number in range(ddf.npartitions)], meta=tagged_meta, verify_meta=False
    )
    shuffled = tagged.shuffle(on=_PART, npartitions=ddf.npartitions)
    release = dict(
        k=k, method=method, columns=cols, by=by_cols if relabel else [], weights=weight_cols[0] if weight_cols else None,
        aggregation=aggregation, missing=missing, n_jobs=n_jobs, group_column=group_column,
        method_params=method_params,
    )
    # Delayed tasks again (not map_partitions with the plan as an argument, which gives the
    # planner a second graph key: it ran twice).
    grouped = [dask.delayed(_release, nout=3)(part, plan, release) for part in shuffled.to_delayed()]
    frames = [frame for frame, _, _ in grouped]
    if group_column is not None and method not in FIXED_GROUP_COUNT:
        first = dask.delayed(_first_ids)([counts for _, counts, _ in grouped], plan)
        frames = [dask.delayed(_renumber)(frame, plan, first, k, group_column) for frame in frames]
    meta = _release_meta(ddf._meta, cols, group_column)
    released = dd.from_delayed(frames, meta=meta.assign(**{_INDEX: ddf._meta.index, _KEY: np.zeros(0, np.int64)}), verify_meta=False)
    if keep_order:
        out = _in_input_order(released, ddf, meta)
    else:
        out = released.map_partitions(_input_index, ddf.index.name, meta=meta)
    if not summary:
        return out
    return out, dask.delayed(summarize)([sums for _, _, sums in grouped], cols)


def _in_input_order(released: Any, ddf: Any, meta: pd.DataFrame) -> Any:
    """The released records moved back to their input partitions and positions (a shuffle
    on :data:`_KEY`, whose divisions are known without computing anything), with their
    input index; the input's divisions when it had them."""
    import dask.dataframe as dd

    n = ddf.npartitions
    by_key = released.set_index(_KEY, divisions=[p * _SLOT for p in range(n)] + [n * _SLOT - 1])
    restored = by_key.map_partitions(_input_index, ddf.index.name, meta=meta)
    if not ddf.known_divisions:
        return restored
    return dd.from_delayed(restored.to_delayed(), meta=meta, divisions=ddf.divisions, verify_meta=False)


def _input_index(frame: pd.DataFrame, name: Any) -> pd.DataFrame:
    """A released partition with the input's index back (in place of :data:`_KEY`, which
    is the index after the shuffle back, else a column)."""
    return frame.drop(columns=[_KEY], errors="ignore").set_index(_INDEX).rename_axis(name)


def _mixed_key(
    ddf: Any, columns: Any, roles: set[Any], categorical: Any, ordinal: Any, attribute_weights: Any, release: str
) -> Any:
    """The mixed key of ``ddf`` (see :func:`microagg._mixed.frames.mixed_key`), or None for a
    numeric key without mixed-key arguments; ``roles`` are the by and weights columns."""
    import narwhals.stable.v2 as nw

    cols = None if columns is None else _names(ddf, columns, "columns")
    if cols is None:
        cols = [c for c, t in ddf.dtypes.items() if _kind(t) in "iuf" and c not in roles]
        cols += [c for c in declared_categories(categorical, ordinal) if c not in cols]
    clash = [str(c) for c in cols if c in roles]
    if clash:
        raise ValueError(f"column(s) {', '.join(clash)} cannot be both anonymized and by/weights")
    return mixed_key(nw.from_native(ddf._meta, eager_only=True), cols, categorical, ordinal, attribute_weights, release)


def _names(ddf: Any, names: Any, what: str) -> list[Any]:
    """Column names given as one name or a list, checked to exist."""
    if names is None:
        return []
    found = [names] if isinstance(names, str) or not isinstance(names, (list, tuple)) else list(names)
    unknown = [str(c) for c in found if c not in ddf.columns]
    if unknown:
        raise ValueError(f"{what}: unknown column(s): {', '.join(unknown)}")
    if len(set(found)) != len(found):
        raise ValueError(f"{what} must not repeat a column")
    return found


def _quasi_identifiers(ddf: Any, columns: Any, others: set[Any]) -> list[Any]:
    """The chosen numeric columns (default: every numeric column not in ``others``)."""
    if columns is None:
        cols = [c for c, t in ddf.dtypes.items() if _kind(t) in "iuf" and c not in others]
        if not cols:
            raise ValueError("the DataFrame has no numeric column to anonymize; pass columns=[...]")
        return cols
    cols = _names(ddf, columns, "columns")
    if not cols:
        raise ValueError("columns must name at least one column")
    clash = [str(c) for c in cols if c in others]
    if clash:
        raise ValueError(f"column(s) {', '.join(clash)} cannot be both anonymized and by/weights")
    bad = [str(c) for c in cols if _kind(ddf.dtypes[c]) not in "biuf"]
    if bad:
        raise TypeError(f"column(s) not numeric: {', '.join(bad)}")
    return cols


def _tag_partition(source: FrameRef, number: int, plan: Plan, spec: Spec) -> pd.DataFrame:
    """Reads partition ``number`` of ``source.frame`` (on the cluster this task runs on) and
    tags it (:func:`_tag`)."""
    with executor() as runner:
        frame = runner.compute([source.frame.partitions[number]])[0]
    return _tag(frame, plan, spec, number)


def _tag(frame: pd.DataFrame, plan: Plan, spec: Spec, number: int) -> pd.DataFrame:
    """Adds each record's row id, part number (the leaf of the cut tree it falls in) and
    :data:`_KEY` to partition ``number``."""
    ids = plan.offsets[number] + np.arange(len(frame), dtype=np.int64)
    if len(frame) != plan.offsets[number + 1] - plan.offsets[number]:
        raise RuntimeError("the DataFrame's partitions changed between planning and release")
    if len(frame) >= _SLOT:
        raise ValueError(f"partition {number} holds {len(frame)} records; repartition the DataFrame below {_SLOT}")
    z = standardized(frame, spec.columns, plan.mean, plan.scale)
    tree = (plan.attr, plan.cut_bits, plan.cut_id, plan.left, plan.right)
    leaf = descend(stratum_codes(frame, spec.by, plan.strata), ids, z, tree)
    key = number * _SLOT + np.arange(len(frame), dtype=np.int64)
    return frame.assign(**{_ROW: ids, _PART: plan.part[leaf], _KEY: key})


def _release_meta(meta: pd.DataFrame, cols: list[Any], group_column: Any) -> pd.DataFrame:
    out = meta.astype({c: np.float64 for c in cols})
    return out if group_column is None else out.assign(**{group_column: np.zeros(0, np.int64)})


def _release(frame: pd.DataFrame, plan: Plan, opts: dict[str, Any]) -> tuple[pd.DataFrame, Int, PartitionSums]:
    """Groups every part of one shuffled partition and releases its records; rows come out
    in row-id order, with their index in column :data:`_INDEX` and their :data:`_KEY`.
    Group ids start at each part's ``plan.label_offsets``; also returns ``(part, number of
    groups)`` of each part here, and the partition's share of the information loss."""
    frame = frame.iloc[np.argsort(frame[_ROW].to_numpy(), kind="stable")]
    parts = frame[_PART].to_numpy()
    values = frame[opts["columns"]].to_numpy(dtype=np.float64, na_value=np.nan)
    w = None if opts["weights"] is None else frame[opts["weights"]].to_numpy(dtype=np.float64)
    released = np.empty_like(values)
    labels = np.empty(len(frame), dtype=np.int64)
    offsets = plan.label_offsets(opts["k"])
    counts = []
    for part in np.unique(parts):
        rows = np.flatnonzero(parts == part)
        labels[rows], released[rows] = group_part(
            values[rows], opts["k"], opts["method"], scale=plan.scale,
            label_offset=int(offsets[part]), weights=None if w is None else w[rows],
            aggregation=opts["aggregation"], missing=opts["missing"], n_jobs=opts["n_jobs"],
            **opts["method_params"],
        )
        counts.append((part, int(labels[rows].max() - offsets[part] + 1)))
        if opts["method"] in FIXED_GROUP_COUNT and counts[-1][1] != len(rows) // opts["k"]:
            raise RuntimeError(f"method {opts['method']!r} formed {counts[-1][1]} groups from {len(rows)} records")
    out = frame.drop(columns=[_ROW, _PART, _KEY])
    for j, c in enumerate(opts["columns"]):  # names need not be strings
        out[c] = released[:, j]
    if opts["by"] and plan.strata is not None and (plan.strata["_size"] == 0).any():
        out = _relabel(out, opts["by"], plan.strata)
    if opts["group_column"] is not None:
        out[opts["group_column"]] = labels
    out[_INDEX] = frame.index
    out[_KEY] = frame[_KEY].to_numpy()
    table = np.array(counts, dtype=np.int64).reshape(-1, 2)
    sums = partition_sums(values, released, w, plan.mean, plan.scale, int(table[:, 1].sum()))
    return out, table, sums


def _relabel(frame: pd.DataFrame, by: list[Any], strata: pd.DataFrame) -> pd.DataFrame:
    """The ``by`` columns of every record set to the values of the stratum its records
    are grouped with (``_root``, an index among the strata left after the merges): a
    merged stratum's records take the label of the stratum they joined, the others keep
    theirs."""
    kept = strata.loc[strata["_size"].to_numpy() > 0, list(by)].reset_index(drop=True)
    root = stratum_codes(frame, by, strata)
    out = frame.copy(deep=False)
    for c in by:  # names need not be strings
        out[c] = kept[c].to_numpy()[root]
    return out


def _first_ids(counts: list[Int], plan: Plan) -> Int:
    """Each part's first group id when ids are consecutive, part after part."""
    groups = np.zeros(len(plan.part_sizes), dtype=np.int64)
    for table in counts:
        groups[table[:, 0]] = table[:, 1]
    return np.concatenate([[0], np.cumsum(groups)[:-1]]).astype(np.int64)


def _renumber(frame: pd.DataFrame, plan: Plan, first: Int, k: int, group_column: Any) -> pd.DataFrame:
    """Group ids made consecutive: a part's ids, which start at its ``label_offsets``, move
    to start at ``first`` (its part is the last offset at or below the id)."""
    offsets = plan.label_offsets(k)
    ids = frame[group_column].to_numpy()
    part = np.searchsorted(offsets, ids, side="right") - 1
    return frame.assign(**{group_column: ids - offsets[part] + first[part]})
