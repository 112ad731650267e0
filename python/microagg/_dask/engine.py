"""``microagg.dask.anonymize``: the Dask engine's entry point (docs/scaling.md#the-dask-engine).
It checks the arguments, resolves the column roles (:mod:`microagg._columns`) and wires the
lazy graph (:mod:`.run`); a mixed key goes through :mod:`.mixed`.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .. import _core
from .._api import microaggregate
from .._columns import Terms, frame_roles
from .._validation import check_bool, check_int, check_k, check_n_jobs, check_str
from .mixed import anonymize_mixed
from .part import workflow_options
from .run import partitioned
from .tree import Spec

TERMS = Terms("ddf")
"""How this engine's messages name the frame and its arguments."""

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
        :func:`microagg.anonymize` merges (see :mod:`microagg._dask.strata`); the merges
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
    if small_strata not in _core.SMALL_STRATA:
        raise ValueError(f"small_strata must be one of {', '.join(_core.SMALL_STRATA)}, got {small_strata!r}")
    relabel = check_bool(relabel, "relabel")
    standardize = check_bool(standardize, "standardize")
    keep_order = check_bool(keep_order, "keep_order")
    summary = check_bool(summary, "summary")
    n_jobs = check_n_jobs(n_jobs)
    import narwhals.stable.v2 as nw

    found = frame_roles(
        nw.from_native(ddf._meta, eager_only=True), columns, by=by, weights=weights, categorical=categorical,
        ordinal=ordinal, attribute_weights=attribute_weights, categorical_release=categorical_release, terms=TERMS,
    )
    by_cols, weight = found.roles.by, found.roles.weights
    if found.mixed is not None:
        if not standardize:
            raise ValueError("standardize cannot be False with a mixed key: weigh columns with attribute_weights=")
        if summary:
            raise ValueError("summary=True is not available with a mixed key (categorical columns) yet")
        # Check the method and its parameters before the passes that measure the key.
        one = workflow_options(weights=weight is not None, aggregation=aggregation, missing=missing)
        microaggregate(np.arange(2.0 * k).reshape(2 * k, 1), k, method, **one, **method_params)
        return anonymize_mixed(
            ddf, k, found.mixed.columns, method, engine=anonymize, categorical=found.mixed.categorical,
            ordinal=found.mixed.ordinal, attribute_weights=attribute_weights, categorical_release=categorical_release,
            by=by_cols, weights=weight, missing=missing, group_column=group_column, small_strata=small_strata,
            max_part=max_part, relabel=relabel, aggregation=aggregation, n_jobs=n_jobs, **method_params,
        )
    cols = found.key
    if group_column is not None and group_column in ddf.columns:
        raise ValueError(f"group_column {group_column!r} is already a column")
    options = workflow_options(weights=weight is not None, aggregation=aggregation, missing=missing)
    # Check the method and its parameters now rather than on the workers.
    microaggregate(np.arange(2.0 * k * len(cols)).reshape(2 * k, len(cols)), k, method, **options, **method_params)
    spec = Spec(cols, by_cols, k, max_part, standardize, missing != "error", small_strata == "merge", relabel)
    release = dict(
        k=k, method=method, columns=cols, by=by_cols if relabel else [], weights=weight,
        aggregation=aggregation, missing=missing, n_jobs=n_jobs, group_column=group_column,
        method_params=method_params,
    )
    return partitioned(ddf, spec, release, keep_order, summary)
